"""Convert tool declarations, requests, responses and histories between wire formats, losing nothing quietly.

Everything goes through the neutral transcript: the source format reads the data, the target format
writes it. What the target has no way to say is found *before* writing and handled by one policy,
``on_loss``:

- ``"error"`` (default): raise :class:`~toolslip.core.errors.CannotExpress` naming the first such thing and
  where it is (``messages[3].parts[0]``, in the neutral transcript's numbering);
- ``"drop"``: leave it out;
- ``"mark"``: leave a visible trace where one fits (a block becomes the text ``[... left out]``), else
  leave it out.

Every loss, whatever the policy, is listed in :attr:`Conversion.lost`, one entry per thing. Some
differences are not errors because the target has a standard spelling for them, and are always just
reported: an error result sent to an OpenAI format (a first text part ``"Error: "``, read back as the
flag), call ids sent to legacy functions (re-created on the way back), parallel calls split into
single-call turns for legacy functions when ``split_calls=True``, the ``max_tokens`` Anthropic requires
when the source set none.

What the formats share is translated, not reported: reasoning text (with its signature or encrypted
form when the target's provider wrote it), documents and files, and the request knobs every format has
(``stream``, ``top_p``, ``user``...; see :data:`SHARED_FIELDS`).

The checks live in three modules below this one: ``_conversion_plan`` (the policy and the list of losses
every check reports to), ``_conversion_settings`` (the request knobs with no neutral slot, and
:data:`SHARED_FIELDS`) and ``_conversion_parts`` (messages and their parts); this module reads and writes
the formats and checks what is left: the request as a whole, tool declarations, structured output and
responses.

    >>> body = toolslip.convert(chat_body, from_="openai-chat", to="anthropic").data
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias, cast

from ..core.errors import FormatError
from ..core.messages import Message, ModelResponse, OutputSchema, Request, Settings, ToolSpec, UseTool
from . import FORMATS, get_format
from ._conversion_cache import tool_cache_marks
from ._conversion_parts import message_for, messages_for
from ._conversion_plan import URL_MODEL, Loss, OnLoss, Plan
from ._conversion_settings import SHARED_FIELDS, translate_settings, unsaid_stream
from ._wire import BOOKKEEPING, CHAT_FAMILY, EMPTY_VALUES, tool_list, unstash
from .anthropic import DEFAULT_MAX_TOKENS
from .gemini import parameters_to_wire
from .gemini_schema import to_gemini
from .openai_functions import messages_to_wire as functions_messages_to_wire
from .openai_functions import request_to_wire as functions_request_to_wire
from .structured import FINAL_TOOL, native_field

__all__ = ["SHARED_FIELDS", "Conversion", "Loss", "OnLoss", "What", "carry", "convert", "detect_kind"]

What: TypeAlias = Literal["auto", "tools", "request", "response", "messages"]


_SHARED_TOOL_FIELDS = {"defer_loading": frozenset({"anthropic", "openai-responses"})}
"""Tool-declaration fields several formats spell the same way."""


@dataclass(frozen=True, slots=True)
class Conversion:
    """The converted data plus everything that did not carry over exactly."""

    data: Any
    lost: tuple[Loss, ...] = ()


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
    consecutive single-call turns for ``openai-functions`` instead of raising. A :class:`FormatError` for
    data that looks like another format says so first (:mod:`toolslip.formats._likely`).
    """
    try:
        return _convert(data, from_=from_, to=to, what=what, on_loss=on_loss, split_calls=split_calls)
    except FormatError as exc:
        if from_ not in FORMATS or (what == "auto" and not isinstance(data, list | dict)):
            raise
        from ._likely import misread

        kind: str = what
        if kind == "auto":
            try:
                kind = detect_kind(data, from_)
            except FormatError:
                raise exc from None
        what_it_is = cast(What, kind)

        def reads(fmt: str) -> Conversion:
            return _convert(data, from_=fmt, to=fmt, what=what_it_is, on_loss="error", split_calls=False)

        raise misread(exc, data, from_, kind, reads) from None


def _convert(data: object, *, from_: str, to: str, what: What, on_loss: OnLoss, split_calls: bool) -> Conversion:
    if on_loss not in ("error", "drop", "mark"):
        raise FormatError(f"on_loss must be 'error', 'drop' or 'mark', not {on_loss!r}")
    src, dst = get_format(from_), get_format(to)
    kind = detect_kind(data, from_) if what == "auto" else what
    plan = Plan(from_, to, on_loss, split_calls)
    out: Any
    if kind == "tools":
        request = _request(plan, src.request_from_wire(_tools_body(from_, data)), defaults=False)
        if to == "gemini":  # declarations grouped in entries, next to the built-in tools
            out = list(dst.request_to_wire(request).get("tools") or [])
        else:
            out = tool_list(dst.tools_to_wire(request.tools), request, to)
    elif kind == "request":
        request = _request(plan, src.request_from_wire(data))
        out = functions_request_to_wire(request, split=True) if _split(plan) else dst.request_to_wire(request)
    elif kind == "response":
        response = _response(plan, src.response_from_wire(data))
        out = dst.response_to_wire(response)
    elif kind == "messages":
        messages = _no_empty(plan, messages_for(plan, src.messages_from_wire(data)))
        if to in ("gemini", "bedrock") and not plan.same:
            messages = _no_systems(plan, messages)
        out = functions_messages_to_wire(messages, split=True) if _split(plan) else dst.messages_to_wire(messages)
    else:
        raise FormatError(f"what must be auto, tools, request, response or messages, not {kind!r}")
    return Conversion(out, tuple(plan.lost))


def carry(messages: Sequence[Message], to: str) -> tuple[list[Message], tuple[Loss, ...]]:
    """A neutral transcript as format ``to`` can take it, and what it could not: reasoning another provider
    signed or encrypted, another format's blocks, files by another provider's id.

    The transcript may hold parts written by several providers (a run that fell over from one to another,
    :class:`~toolslip.providers.fallback.FallbackModel`); each part is judged by its own origin. What ``to``
    cannot take is dropped, never sent for the provider to refuse."""
    plan = Plan("neutral", to, "drop", False)
    return messages_for(plan, messages), tuple(plan.lost)


def _tools_body(fmt: str, data: object) -> dict[str, object]:
    """A request body of format ``fmt`` holding only the tool list ``data``."""
    if fmt == "bedrock":
        return {"messages": [], "toolConfig": {"tools": data}}
    if fmt == "gemini":
        return {"contents": [], "tools": data}
    body: dict[str, object] = {"model": "", "input" if fmt == "openai-responses" else "messages": []}
    body["functions" if fmt == "openai-functions" else "tools"] = data
    return body


def _no_systems(plan: Plan, messages: list[Message]) -> list[Message]:
    """A message list of Gemini or Converse has no system messages: the prompt is a field of the request."""
    for i, message in enumerate(messages):
        if message.role == "system":
            plan.cannot(
                f"messages[{i}]", f"a system message ({plan.target} takes it as a request field, not a message)"
            )
    return [m for m in messages if m.role != "system"]


def _no_empty(plan: Plan, messages: list[Message]) -> list[Message]:
    """The messages less the empty ones a target would refuse (Anthropic, Gemini and Converse want content in
    every message) and empty system prompts (Converse's ``system: []``), which no target needs."""
    if plan.same or all(m.parts for m in messages):
        return messages
    kept = []
    for i, message in enumerate(messages):
        if not message.parts and message.role == "system":
            plan.note(f"messages[{i}]", "an empty system prompt", "left out")
        elif not message.parts and plan.target in _WANT_CONTENT:
            what = f"an empty {message.role} message ({plan.target} refuses a message with no content)"
            plan.note(f"messages[{i}]", what, "left out")
        else:
            kept.append(message)
    return kept


_WANT_CONTENT = frozenset({"anthropic", "gemini", "bedrock"})


def _split(plan: Plan) -> bool:
    return plan.split_calls and plan.target == "openai-functions"


def detect_kind(data: object, fmt: str) -> str:
    """``"tools"``, ``"request"``, ``"response"`` or ``"messages"`` for wire data of format ``fmt``."""
    if isinstance(data, list):
        # Declarations carry no role, id or content; every message or item has one of them.
        first = data[0] if data else {}
        items = isinstance(first, dict) and not first.keys() & {"role", "id", "call_id", "content", "parts"}
        return "tools" if data and items else "messages"
    if isinstance(data, dict):
        if "messages" in data or "input" in data or "contents" in data:
            return "request"
        if "choices" in data or "output" in data or data.get("type") == "message" or "candidates" in data:
            return "response"
        if "message" in data and "done" in data:  # Ollama
            return "response"
    raise FormatError(
        f"cannot tell what this {fmt} data is (tools, request, response or messages); "
        "pass what=... (--what on the command line)",
        "",
    )


# --- finding what the target cannot say -------------------------------------------------------------


def _request(plan: Plan, request: Request, *, defaults: bool = True) -> Request:
    messages = _no_empty(plan, messages_for(plan, request.messages))
    tools = tuple(_spec(plan, s, f"tools[{i}]") for i, s in enumerate(request.tools))
    tools, extra_tools = tool_cache_marks(plan, tools, request.extra_tools, request.server_tools)
    settings = request.settings
    if not plan.same:
        if not plan.family or plan.target == "openai-functions":  # functions[] holds functions only
            extra_tools = _extra_tools(plan, extra_tools)
        settings = unsaid_stream(plan, request.settings, translate_settings(plan, settings), defaults)
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
    output, tools, settings = _output(plan, request.output, tools, settings)
    if plan.target == "anthropic" and not plan.same and settings.max_tokens is None and defaults:
        plan.note("settings.max_tokens", "no max_tokens, which Anthropic requires", f"set to {DEFAULT_MAX_TOKENS}")
    if plan.target in _NEED_TOOLS and not plan.same and not tools and not extra_tools:
        names = sorted({c.name for m in messages for c in m.tool_calls})
        if names or any(m.tool_results for m in messages):
            stubs = "declared a stub tool per called name"
            what = f"a history with tool blocks but no tools ({_NEED_TOOLS[plan.target]} requires tools)"
            plan.cannot("tools", what, stubs, stubs)
            tools = tuple(ToolSpec(name=n, description="", parameters={"type": "object"}) for n in names)
    if plan.target in URL_MODEL and not plan.same:
        tools, settings = _native(plan, request, tools, settings)
    if (
        settings is request.settings
        and output is request.output
        and extra_tools is request.extra_tools
        and len(tools) == len(request.tools)
        and all(map(operator.is_, tools, request.tools))
        and len(messages) == len(request.messages)
        and all(map(operator.is_, messages, request.messages))
    ):
        return request
    return replace(
        request, messages=tuple(messages), tools=tools, extra_tools=extra_tools, settings=settings, output=output
    )


def _extra_tools(plan: Plan, extra_tools: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """Hosted and server tool declarations, which only their own provider runs: reported and left out."""
    kept = []
    for i, tool in enumerate(extra_tools):
        if "cachePoint" in tool and plan.target == "bedrock":  # a tool's cache mark, as Converse spells it
            kept.append(tool)
            continue
        if "cachePoint" in tool and plan.source == "bedrock":  # the end of the tools to cache
            what = "a cache point after the tools (a prompt-cache hint; the answer is the same without it)"
            plan.note(f"extra_tools[{i}]", what, "left out")
            continue
        kind = tool.get("type") or next(iter(tool), "?")  # Gemini's built-in tools have no "type"
        what = f"{plan.source} tool declaration {str(kind)!r}"
        if plan.cannot(f"extra_tools[{i}]", what):
            kept.append(tool)  # pragma: no cover - a declaration has no text to mark it with
    return tuple(kept)


def _output(
    plan: Plan, output: OutputSchema | None, tools: tuple[ToolSpec, ...], settings: Settings
) -> tuple[OutputSchema | None, tuple[ToolSpec, ...], Settings]:
    """The structured-output request in the target's field; where it has none, a final-answer tool (the
    model calls it with the answer; with no other tool offered, tool_choice names it)."""
    if output is None or plan.same:
        return output, tools, settings
    source = native_field(plan.source)
    if native_field(plan.target) is None:
        plan.note("output", f"the {source} schema", f"offered as the tool {FINAL_TOOL!r}, called with the answer")
        spec = ToolSpec(
            name=FINAL_TOOL, description=output.description or "Give your final answer.", parameters=output.schema
        )
        if not tools and settings.tool_choice is None:
            settings = replace(settings, tool_choice=UseTool(FINAL_TOOL))
        return None, (*tools, spec), settings
    lost = _OUTPUT_LACKS.get(plan.target)
    keeps_description = plan.target == "bedrock"  # Converse's jsonSchema has a description, no strict flag
    if lost is not None and (output.strict is not None or (output.description and not keeps_description)):
        plan.note("output", lost, "dropped")
        output = replace(output, strict=None, description=output.description if keeps_description else "")
    return output, tools, settings


_OUTPUT_LACKS = {
    name: f"the schema's strict flag and description ({service}'s format has neither)"
    for name, service in (("anthropic", "Anthropic"), ("gemini", "Gemini"), ("ollama", "Ollama"))
}
_OUTPUT_LACKS["bedrock"] = "the schema's strict flag (Converse's format has none)"
"""What a structured-output field without OpenAI's ``strict`` flag (and, but for Converse, description) loses."""


_NEED_TOOLS = {"anthropic": "Anthropic", "bedrock": "Converse"}
"""Formats that refuse a history holding tool calls or results unless tools are declared."""


def _native(
    plan: Plan, request: Request, tools: tuple[ToolSpec, ...], settings: Settings
) -> tuple[tuple[ToolSpec, ...], Settings]:
    """What Gemini, Converse and Ollama have no way to say: the model in the body, tool_choice spellings,
    the parallel-calls switch, system messages after the start; and schemas outside Gemini's subset."""
    target = plan.target
    if request.model and target != "ollama":
        plan.note("model", "the model name (this format names it in the URL)", "dropped from the body")
    if settings.parallel_tool_calls is not None:
        if settings.parallel_tool_calls:  # several calls in one turn: what all three do when not told
            what = "parallel_tool_calls: true (what the model does anyway: the format has no switch)"
            plan.note("settings.parallel_tool_calls", what, "left out")
        else:
            plan.cannot("settings.parallel_tool_calls", f"parallel_tool_calls: false (no switch in {target})")
        settings = replace(settings, parallel_tool_calls=None)
    if target == "ollama" and settings.tool_choice == "auto":
        what = "tool_choice 'auto' (Ollama's only behaviour: the model chooses)"
        plan.note("settings.tool_choice", what, "left out")
        settings = replace(settings, tool_choice=None)
    elif settings.tool_choice is not None and (
        target == "ollama" or (target == "bedrock" and settings.tool_choice == "none")
    ):
        choice = "a named tool" if isinstance(settings.tool_choice, UseTool) else repr(settings.tool_choice)
        plan.cannot("settings.tool_choice", f"tool_choice {choice} (no spelling in {target})")
        settings = replace(settings, tool_choice=None)
    if target != "ollama":
        roles = [m.role for m in request.messages]
        first = next((i for i, role in enumerate(roles) if role != "system"), len(roles))
        for i in (i for i, role in enumerate(roles) if role == "system" and i > first):
            plan.note(f"messages[{i}]", "a system message after the conversation began", "moved to the system prompt")
    if target == "gemini":
        for i, spec in enumerate(tools):
            kept = unstash(spec.extra, "gemini")
            if kept.get("json") or "schema" in kept:
                continue  # read from Gemini: written back as it was
            key, _ = parameters_to_wire(spec.parameters)
            if not key:
                plan.note(f"tools[{i}].parameters", "an object schema without properties", _NO_PARAMETERS)
            elif key == "parametersJsonSchema":
                where, what = to_gemini(spec.parameters)[1][0]
                plan.note(f"tools[{i}].parameters{where}", f"a schema outside Gemini's subset: {what}", _JSON_SCHEMA)
    return tools, settings


_JSON_SCHEMA = "sent whole as parametersJsonSchema, which Gemini 2.5 and later read"
_NO_PARAMETERS = "left out: Gemini takes that as a function without parameters and refuses an empty OBJECT"


_NO_STRICT = frozenset({"openai-functions", "gemini", "ollama"})
"""Formats whose function declarations have no strict flag (arguments that always match the schema)."""


def _spec(plan: Plan, spec: ToolSpec, path: str) -> ToolSpec:
    if plan.target in _NO_STRICT and spec.strict:
        plan.cannot(f"{path}.strict", "strict mode")
        spec = replace(spec, strict=None)
    if plan.same or plan.family:
        return spec
    fields = unstash(spec.extra, plan.source).get("fields", {})
    carried: dict[str, Any] = {}
    for key, value in fields.items():
        if key in BOOKKEEPING or value in EMPTY_VALUES:
            continue
        if plan.target in _SHARED_TOOL_FIELDS.get(key, ()):
            carried[key] = value
        else:
            plan.cannot(f"{path}.{key}", f"tool field {key!r}")
    if carried:
        kept = unstash(spec.extra, plan.target)
        spec = replace(
            spec, extra={**spec.extra, plan.target: {**kept, "fields": {**kept.get("fields", {}), **carried}}}
        )
    return spec


def _response(plan: Plan, response: ModelResponse) -> ModelResponse:
    if not plan.same:
        for key in unstash(response.extra, plan.source).get("unread", ()):
            plan.cannot(key, f"{plan.source} field {key!r}")
        usage = response.usage
        for counted in _UNCOUNTED.get(plan.target, ()):
            if getattr(usage, counted):
                what = f"the {counted.removesuffix('_tokens').replace('_', '-')} token count"
                plan.note(f"usage.{counted}", what, f"dropped: {plan.target} usage has no field")
        if usage.cache_write_tokens and plan.target in CHAT_FAMILY:
            plan.note("usage.cache_write_tokens", "the cache-write token count", "dropped: Chat usage has no field")
        if usage.reasoning_tokens and plan.target == "anthropic":
            plan.note("usage.reasoning_tokens", "the reasoning token count", "dropped: Anthropic usage has no field")
        if plan.target == "ollama" and response.stop_reason in ("refusal", "content_filter"):
            word = response.raw_stop_reason or response.stop_reason
            what = f"the stop reason {word!r} (Ollama's done_reason has no refusal)"
            plan.note("stop_reason", what, "written as 'stop'")
    message = message_for(plan, response.message, "message")
    return response if message is response.message else replace(response, message=message)


_UNCOUNTED = {
    "gemini": ("cache_write_tokens",),
    "bedrock": ("reasoning_tokens",),
    "ollama": ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens"),
}
"""Token counts a format's usage has no field for (totals still carry them)."""
