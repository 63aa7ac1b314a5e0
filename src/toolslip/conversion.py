"""Convert tool declarations, requests, responses and histories between wire formats, losing nothing quietly.

Everything goes through the neutral transcript: the source format reads the data, the target format
writes it. What the target has no way to say is found *before* writing and handled by one policy,
``on_loss``:

- ``"error"`` (default): raise :class:`~toolslip.errors.CannotExpress` naming the first such thing and
  where it is (``messages[3].parts[0]``, in the neutral transcript's numbering);
- ``"drop"``: leave it out;
- ``"mark"``: leave a visible trace where one fits (a block becomes the text ``[... left out]``), else
  leave it out.

Every loss, whatever the policy, is listed in :attr:`Conversion.lost`. Some differences are not errors
because the target has a standard spelling for them, and are always just reported: an error result sent
to an OpenAI format (``"Error: "`` before its content), call ids sent to legacy functions (re-created on
the way back), parallel calls split into single-call turns for legacy functions when ``split_calls=True``.

    >>> body = toolslip.convert(chat_body, from_="openai-chat", to="anthropic").data
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from .errors import CannotExpress, FormatError
from .formats import get_format
from .formats.openai_functions import messages_to_wire as functions_messages_to_wire
from .formats.openai_functions import request_to_wire as functions_request_to_wire
from .messages import Message, Part, ProviderPart, Request, Text, ToolCall, ToolResult, ToolSpec

__all__ = ["Conversion", "Loss", "OnLoss", "What", "convert", "detect_kind"]

OnLoss: TypeAlias = Literal["error", "drop", "mark"]
What: TypeAlias = Literal["auto", "tools", "request", "response", "messages"]

_NO_ERROR_FLAG = frozenset({"openai-chat", "openai-functions", "openai-responses"})
_CHAT_FAMILY = frozenset({"openai-chat", "openai-functions"})
"""Formats sharing one request body, so unknown body fields (``seed``...) mean the same in both."""


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing the target format could not say as the source did."""

    path: str
    """Where, in the neutral transcript's numbering (``messages[2].parts[1]``, ``tools[0]``, ``settings.stop``)."""
    what: str
    handled: str
    """``"marked"`` (standard spelling, e.g. the ``Error:`` prefix), ``"dropped"``, ``"replaced by text"``..."""

    def __str__(self) -> str:
        return f"{self.path}: {self.what} ({self.handled})"


@dataclass(frozen=True, slots=True)
class Conversion:
    """The converted data plus everything that did not carry over exactly."""

    data: Any
    lost: tuple[Loss, ...] = ()


@dataclass
class _Plan:
    source: str
    target: str
    on_loss: OnLoss
    split_calls: bool
    lost: list[Loss] = field(default_factory=list)

    def note(self, path: str, what: str, handled: str = "marked") -> None:
        self.lost.append(Loss(path, what, handled))

    def cannot(self, path: str, what: str, marked: str = "dropped", dropped: str = "dropped") -> bool:
        """Report an unexpressible thing; True when it should be kept as a mark (policy ``mark``).

        ``marked`` and ``dropped`` say what happens to it under each policy.
        """
        if self.on_loss == "error":
            raise CannotExpress(
                f"{what} cannot be expressed in {self.target}; convert with on_loss='drop' (--on-loss drop) "
                "to leave it out, or 'mark' to leave a visible trace",
                path,
            )
        keep = self.on_loss == "mark" and marked != "dropped"
        self.note(path, what, marked if keep else dropped)
        return keep


def convert(
    data: object,
    *,
    from_: str,
    to: str,
    what: What = "auto",
    on_loss: OnLoss = "error",
    split_calls: bool = False,
) -> Conversion:
    """``data`` (wire JSON of format ``from_``) spelled in format ``to``; see the module doc for ``on_loss``.

    ``what`` says what ``data`` is: a list of tool declarations, a request body, a response object or a
    message list; ``"auto"`` tells them apart by their keys. ``split_calls`` lets parallel calls become
    consecutive single-call turns for ``openai-functions`` instead of raising.
    """
    if on_loss not in ("error", "drop", "mark"):
        raise FormatError(f"on_loss must be 'error', 'drop' or 'mark', not {on_loss!r}")
    src, dst = get_format(from_), get_format(to)
    kind = detect_kind(data, from_) if what == "auto" else what
    plan = _Plan(from_, to, on_loss, split_calls)
    out: Any
    if kind == "tools":
        body: dict[str, object] = {"model": "", "input" if from_ == "openai-responses" else "messages": []}
        body["functions" if from_ == "openai-functions" else "tools"] = data
        request = _request(plan, src.request_from_wire(body))
        out = [*dst.tools_to_wire(request.tools), *request.extra_tools]
    elif kind == "request":
        request = _request(plan, src.request_from_wire(data))
        out = functions_request_to_wire(request, split=True) if _split(plan) else dst.request_to_wire(request)
    elif kind == "response":
        response = src.response_from_wire(data)
        if response.usage.cache_write_tokens and to in _CHAT_FAMILY:
            plan.note("usage.cache_write_tokens", "the cache-write token count", "dropped: Chat usage has no field")
        out = dst.response_to_wire(replace(response, message=_message(plan, response.message, "message")))
    elif kind == "messages":
        messages = _messages(plan, src.messages_from_wire(data))
        out = functions_messages_to_wire(messages, split=True) if _split(plan) else dst.messages_to_wire(messages)
    else:
        raise FormatError(f"what must be auto, tools, request, response or messages, not {kind!r}")
    return Conversion(out, tuple(plan.lost))


def _split(plan: _Plan) -> bool:
    return plan.split_calls and plan.target == "openai-functions"


def detect_kind(data: object, fmt: str) -> str:
    """``"tools"``, ``"request"``, ``"response"`` or ``"messages"`` for wire data of format ``fmt``."""
    if isinstance(data, list):
        # Declarations carry no role, id or content; every message or item has one of them.
        first = data[0] if data else {}
        items = isinstance(first, dict) and not first.keys() & {"role", "id", "call_id", "content"}
        return "tools" if data and items else "messages"
    if isinstance(data, dict):
        if "messages" in data or "input" in data:
            return "request"
        if "choices" in data or "output" in data or data.get("type") == "message":
            return "response"
    raise FormatError(
        f"cannot tell what this {fmt} data is (tools, request, response or messages); "
        "pass what=... (--what on the command line)",
        "",
    )


# --- finding what the target cannot say -------------------------------------------------------------


def _request(plan: _Plan, request: Request) -> Request:
    same = plan.source == plan.target
    messages = _messages(plan, request.messages)
    tools = tuple(_spec(plan, s, f"tools[{i}]") for i, s in enumerate(request.tools))
    extra_tools = request.extra_tools
    settings = request.settings
    if not same:
        if extra_tools and not plan.cannot("extra_tools", f"{len(extra_tools)} {plan.source} tool declaration(s)"):
            extra_tools = ()
        if settings.extra and not {plan.source, plan.target} <= _CHAT_FAMILY:
            keys = ", ".join(sorted(settings.extra))
            if not plan.cannot("settings.extra", f"{plan.source} request fields ({keys})"):
                settings = replace(settings, extra={})
    if plan.target == "openai-responses" and settings.stop:
        plan.cannot("settings.stop", "stop sequences")
        settings = replace(settings, stop=())
    if plan.target == "openai-functions":
        if settings.tool_choice == "required":
            plan.cannot("settings.tool_choice", 'tool_choice "required"')
            settings = replace(settings, tool_choice=None)
        if settings.parallel_tool_calls:
            plan.cannot("settings.parallel_tool_calls", "parallel tool calls")
            settings = replace(settings, parallel_tool_calls=None)
    if plan.target == "anthropic" and not tools and not extra_tools:
        names = sorted({c.name for m in messages for c in m.tool_calls})
        if names or any(m.tool_results for m in messages):
            stubs = "declared a stub tool per called name"
            plan.cannot("tools", "a history with tool blocks but no tools (Anthropic requires tools)", stubs, stubs)
            tools = tuple(ToolSpec(name=n, description="", parameters={"type": "object"}) for n in names)
    return replace(request, messages=tuple(messages), tools=tools, extra_tools=extra_tools, settings=settings)


def _spec(plan: _Plan, spec: ToolSpec, path: str) -> ToolSpec:
    if plan.target == "openai-functions" and spec.strict:
        plan.cannot(f"{path}.strict", "strict mode")
        return replace(spec, strict=None)
    return spec


def _messages(plan: _Plan, messages: Sequence[Message]) -> list[Message]:
    out = [_message(plan, m, f"messages[{i}]") for i, m in enumerate(messages)]
    if plan.target == "openai-functions" and plan.source != plan.target:
        for i, message in enumerate(out):
            calls = message.tool_calls
            if calls:
                plan.note(f"messages[{i}]", "call ids (legacy functions have none; re-created when read back)")
            if len(calls) > 1 and plan.split_calls:
                plan.note(f"messages[{i}]", f"{len(calls)} parallel calls", "split into single-call turns")
    return out


def _message(plan: _Plan, message: Message, path: str) -> Message:
    if plan.source == plan.target:
        return message
    parts: list[Part] = []
    for j, part in enumerate(message.parts):
        where = f"{path}.parts[{j}]"
        if type(part) is ProviderPart and part.format != plan.target:
            what = f"{part.format} block {part.data.get('type', '?')!r}"
            if plan.cannot(where, what, "replaced by text"):
                parts.append(Text(text=f"[{what} left out]"))
            continue
        if type(part) is ToolResult and part.is_error and plan.target in _NO_ERROR_FLAG:
            plan.note(where, "is_error flag", 'marked: "Error: " before the content')
        if type(part) is ToolCall and part.arguments is None and plan.target == "anthropic":
            plan.cannot(where, "arguments that are not a JSON object", "sent as input {}", "sent as input {}")
        parts.append(part)
    name = message.name
    if name is not None and plan.target not in _CHAT_FAMILY:
        plan.cannot(f"{path}.name", "a participant name")
        name = None
    if name == message.name and len(parts) == len(message.parts) and all(map(operator.is_, parts, message.parts)):
        return message
    return replace(message, parts=tuple(parts), name=name)
