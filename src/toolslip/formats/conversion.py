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

    >>> body = toolslip.convert(chat_body, from_="openai-chat", to="anthropic").data
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from ..core.errors import CannotExpress, FormatError
from ..core.messages import (
    File,
    Image,
    Message,
    ModelResponse,
    OutputSchema,
    Part,
    ProviderPart,
    Reasoning,
    Request,
    Settings,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    UseTool,
)
from . import get_format
from ._anthropic_blocks import plain_text
from ._bedrock_blocks import document_format, image_format
from ._gemini_parts import camel
from ._knob_values import from_format, to_format
from ._wire import BOOKKEEPING, CHAT_FAMILY, EMPTY_VALUES, OPENAI_FORMATS, tool_list, unstash
from .anthropic import DEFAULT_MAX_TOKENS
from .gemini import parameters_to_wire
from .gemini_schema import to_gemini
from .openai_functions import messages_to_wire as functions_messages_to_wire
from .openai_functions import request_to_wire as functions_request_to_wire
from .structured import FINAL_TOOL, native_field

__all__ = ["SHARED_FIELDS", "Conversion", "Loss", "OnLoss", "What", "convert", "detect_kind"]

OnLoss: TypeAlias = Literal["error", "drop", "mark"]
What: TypeAlias = Literal["auto", "tools", "request", "response", "messages"]


SHARED_FIELDS: dict[str, dict[str, str]] = {
    "stream": {"openai-chat": "stream", "openai-responses": "stream", "anthropic": "stream", "ollama": "stream"},
    "top_p": {
        "openai-chat": "top_p",
        "openai-responses": "top_p",
        "anthropic": "top_p",
        "gemini": "generationConfig.topP",
        "bedrock": "inferenceConfig.topP",
        "ollama": "options.top_p",
    },
    "top_k": {
        "anthropic": "top_k",
        "gemini": "generationConfig.topK",
        "bedrock": "additionalModelRequestFields.top_k",
        "ollama": "options.top_k",
    },
    "seed": {"openai-chat": "seed", "gemini": "generationConfig.seed", "ollama": "options.seed"},
    "frequency_penalty": {
        "openai-chat": "frequency_penalty",
        "gemini": "generationConfig.frequencyPenalty",
        "ollama": "options.frequency_penalty",
    },
    "presence_penalty": {
        "openai-chat": "presence_penalty",
        "gemini": "generationConfig.presencePenalty",
        "ollama": "options.presence_penalty",
    },
    "n": {"openai-chat": "n", "gemini": "generationConfig.candidateCount"},
    "logprobs": {"openai-chat": "logprobs", "gemini": "generationConfig.responseLogprobs", "ollama": "logprobs"},
    "top_logprobs": {
        "openai-chat": "top_logprobs",
        "openai-responses": "top_logprobs",
        "gemini": "generationConfig.logprobs",
        "ollama": "top_logprobs",
    },
    "allowed_tools": {
        "openai-chat": "tool_choice",
        "openai-responses": "tool_choice",
        "gemini": "toolConfig.functionCallingConfig",
    },
    "user": {"openai-chat": "user", "openai-responses": "user", "anthropic": "metadata.user_id"},
    "metadata": {"openai-chat": "metadata", "openai-responses": "metadata"},
    "service_tier": {"openai-chat": "service_tier", "openai-responses": "service_tier", "bedrock": "serviceTier"},
    "reasoning_effort": {
        "openai-chat": "reasoning_effort",
        "openai-responses": "reasoning.effort",
        "gemini": "generationConfig.thinkingConfig.thinkingLevel",
        "ollama": "think",
    },
    "reasoning_summary": {
        "openai-responses": "reasoning.summary",
        "gemini": "generationConfig.thinkingConfig.includeThoughts",
    },
    "thinking": {
        "anthropic": "thinking",
        "gemini": "generationConfig.thinkingConfig",
        "bedrock": "additionalModelRequestFields.thinking",
        "ollama": "think",
    },
}
"""Request fields with no neutral slot that mean the same in several formats: neutral name -> spelling.

``metadata.user_id`` is Anthropic's one metadata key; OpenAI's ``metadata`` is a free map of strings. A
dotted spelling is a key inside an object field (``generationConfig.thinkingConfig.thinkingLevel``): the
rest of that object (Responses' ``reasoning.summary``) is reported like any field the target has no slot
for. Where the formats spell the *values* differently too (an effort word, a thinking budget), the value is
translated by ``_knob_values`` and refused when the target has no exact spelling of it.
Legacy functions spell everything as Chat does.

Sources: Gemini ``GenerationConfig`` (https://ai.google.dev/api/generate-content#generationconfig: ``seed``,
``topK``, ``presencePenalty``, ``frequencyPenalty``, ``candidateCount``, ``responseLogprobs``, ``logprobs``
= how many top candidates, ``thinkingConfig``); Ollama's ``options`` and top-level ``think``,
``logprobs``, ``top_logprobs`` (https://docs.ollama.com/api/chat); Bedrock Converse takes the knobs
outside ``inferenceConfig`` in the model's own spelling in ``additionalModelRequestFields``, where
Anthropic's models read ``top_k`` and ``thinking``
(https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html); Converse's
``serviceTier`` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ServiceTier.html).
"""
_SHARED_TOOL_FIELDS = {"defer_loading": frozenset({"anthropic", "openai-responses"})}
"""Tool-declaration fields several formats spell the same way."""


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

    @property
    def same(self) -> bool:
        return self.source == self.target

    @property
    def family(self) -> bool:
        """Source and target share a body (Chat and legacy functions)."""
        return {self.source, self.target} <= CHAT_FAMILY

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
        messages = _messages(plan, src.messages_from_wire(data))
        if to in ("gemini", "bedrock") and not plan.same:
            messages = _no_systems(plan, messages)
        out = functions_messages_to_wire(messages, split=True) if _split(plan) else dst.messages_to_wire(messages)
    else:
        raise FormatError(f"what must be auto, tools, request, response or messages, not {kind!r}")
    return Conversion(out, tuple(plan.lost))


def _tools_body(fmt: str, data: object) -> dict[str, object]:
    """A request body of format ``fmt`` holding only the tool list ``data``."""
    if fmt == "bedrock":
        return {"messages": [], "toolConfig": {"tools": data}}
    if fmt == "gemini":
        return {"contents": [], "tools": data}
    body: dict[str, object] = {"model": "", "input" if fmt == "openai-responses" else "messages": []}
    body["functions" if fmt == "openai-functions" else "tools"] = data
    return body


def _no_systems(plan: _Plan, messages: list[Message]) -> list[Message]:
    """A message list of Gemini or Converse has no system messages: the prompt is a field of the request."""
    for i, message in enumerate(messages):
        if message.role == "system":
            plan.cannot(
                f"messages[{i}]", f"a system message ({plan.target} takes it as a request field, not a message)"
            )
    return [m for m in messages if m.role != "system"]


def _split(plan: _Plan) -> bool:
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


def _request(plan: _Plan, request: Request, *, defaults: bool = True) -> Request:
    messages = _messages(plan, request.messages)
    tools = tuple(_spec(plan, s, f"tools[{i}]") for i, s in enumerate(request.tools))
    extra_tools = request.extra_tools
    settings = request.settings
    if not plan.same:
        if not plan.family:
            kept = []
            for i, tool in enumerate(extra_tools):
                kind = tool.get("type") or next(iter(tool), "?")  # Gemini's built-in tools have no "type"
                what = f"{plan.source} tool declaration {str(kind)!r}"
                if plan.cannot(f"extra_tools[{i}]", what):
                    kept.append(tool)  # pragma: no cover - a declaration has no text to mark it with
            extra_tools = tuple(kept)
        settings = _unsaid_stream(plan, request.settings, _settings(plan, settings), defaults)
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
    if plan.target in _URL_MODEL and not plan.same:
        tools, settings = _native(plan, request, tools, settings)
    if (
        settings is request.settings
        and output is request.output
        and extra_tools is request.extra_tools
        and len(tools) == len(request.tools)
        and all(map(operator.is_, tools, request.tools))
        and all(map(operator.is_, messages, request.messages))
    ):
        return request
    return replace(
        request, messages=tuple(messages), tools=tools, extra_tools=extra_tools, settings=settings, output=output
    )


def _output(
    plan: _Plan, output: OutputSchema | None, tools: tuple[ToolSpec, ...], settings: Settings
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
_URL_MODEL = frozenset({"gemini", "bedrock", "ollama"})
"""The native formats of Gemini, Bedrock and Ollama (the first two name the model in the URL)."""
_OBJECT_ARGUMENTS = frozenset({"anthropic", *_URL_MODEL})
"""Formats whose call arguments are an object, not JSON text."""


def _native(
    plan: _Plan, request: Request, tools: tuple[ToolSpec, ...], settings: Settings
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


def _said_elsewhere(key: str, value: Any, settings: Settings) -> bool:
    """Whether a body field says nothing (an empty list of tools, a null stop) or what a neutral slot already
    says (``Settings.stop``; Chat's untyped spelling of the named choice that ``Settings.tool_choice`` holds)."""
    if value in EMPTY_VALUES or (key == "stop" and (value,) == settings.stop):
        return True
    return key == "tool_choice" and isinstance(settings.tool_choice, UseTool)


def _settings(plan: _Plan, settings: Settings) -> Settings:
    """The body fields with no neutral slot, translated where the target has them, reported where not."""
    if plan.family:
        return settings
    extra: dict[str, Any] = {}
    max_tokens = settings.max_tokens
    for key, value in settings.extra.items():
        if _said_elsewhere(key, value, settings):
            continue
        anyway = _said_anyway(plan.target, key, value)
        if anyway is not None:
            plan.note(f"settings.extra.{key}", *anyway)
            continue
        if key in _NESTED_SETTINGS and isinstance(value, Mapping):
            _nested(plan, key, value, extra)
            continue
        if key == "max_completion_tokens" and max_tokens is None and type(value) is int:
            max_tokens = value  # Chat's newer name for the output limit
            continue
        for name, spell in SHARED_FIELDS.items():
            head, _, inner = spell.get(_family(plan.source), "").partition(".")
            if inner and key == head and isinstance(value, Mapping) and inner in value:
                rest = dict(value)
                if _put(plan, extra, name, rest.pop(inner)):
                    value = {k: v for k, v in rest.items() if v not in EMPTY_VALUES}
        if value in EMPTY_VALUES or _translated(plan, extra, key, value):
            continue  # all of it said in the target's own spelling
        what = (
            f"a tool_choice of type {value.get('type')!r}"
            if key == "tool_choice" and isinstance(value, Mapping)
            else _unsaid(plan, key, value)
        )
        if plan.cannot(f"settings.extra.{key}", what):
            extra[key] = value  # pragma: no cover - mark keeps nothing for a field
    if max_tokens == settings.max_tokens and extra == settings.extra:
        return settings
    return replace(settings, max_tokens=max_tokens, extra=extra)


_STREAMS_BY_ENDPOINT = {
    "gemini": "Gemini streams by its endpoint, :streamGenerateContent?alt=sse",
    "bedrock": "Converse streams by its endpoint, /converse-stream",
}
"""Targets whose body has no ``stream`` field: the caller picks the endpoint (the transports and ``serve`` do)."""
_USAGE_IN_EVERY_STREAM = frozenset({"anthropic", "openai-responses", "gemini", "bedrock", "ollama"})
"""Targets whose streams always end with the token counts (``message_delta``, ``response.completed``,
``usageMetadata``, the ``metadata`` event, the last ``done`` line), which Chat asks for with ``include_usage``."""


def _said_anyway(target: str, key: str, value: Any) -> tuple[str, str] | None:
    """(what, how handled) for a body field the target does without: it asks for what the target does
    anyway, or the target says it outside the body. ``None`` for any other field."""
    if key == "n" and value == 1 and type(value) is int:
        return "request field 'n' (1, one answer: every format's default)", "left out"
    if key == "stream" and target in _STREAMS_BY_ENDPOINT and type(value) is bool:
        if value:
            return f"request field 'stream' (true: {_STREAMS_BY_ENDPOINT[target]})", "left out of the body"
        return "request field 'stream' (false: one answer, the endpoint's default)", "left out"
    if key == "stream_options" and value == {"include_usage": True} and target in _USAGE_IN_EVERY_STREAM:
        what = f"request field 'stream_options' (include_usage: {target} streams always report usage at their end)"
        return what, "left out"
    return None


def _unsaid_stream(plan: _Plan, source: Settings, settings: Settings, request: bool) -> Settings:
    """Say the default of a request body with no ``stream`` field (``source``) where the target's default is
    the other one: Ollama streams unless told ``"stream": false``, the OpenAI formats and Anthropic answer
    once. ``request`` is False for a tool list, which says nothing of streaming."""
    where = "settings.extra.stream"
    if not request or "stream" in source.extra:
        return settings
    if plan.target == "ollama" and plan.source not in _URL_MODEL:  # Gemini's, Converse's endpoint says it
        plan.note(where, "request field 'stream' (absent: one answer; Ollama streams unless told)", "set to false")
        return replace(settings, extra={**settings.extra, "stream": False})
    if plan.source != "ollama":
        return settings
    if plan.target in _STREAMS_BY_ENDPOINT:
        what = f"request field 'stream' (absent: Ollama streams; {_STREAMS_BY_ENDPOINT[plan.target]})"
        plan.note(where, what, "left out of the body")
        return settings
    plan.note(where, "request field 'stream' (absent: Ollama streams by default)", "set to true")
    return replace(settings, extra={**settings.extra, "stream": True})


_NESTED_SETTINGS = frozenset(
    {"generationConfig", "inferenceConfig", "options", "toolConfig", "additionalModelRequestFields"}
)
"""Gemini's, Converse's and Ollama's objects of knobs: each knob in them is translated or reported alone."""


def _nested(plan: _Plan, head: str, value: Mapping[str, Any], extra: dict[str, Any]) -> None:
    source = _family(plan.source)
    for key, inner in _camel(source, value).items():
        if inner in EMPTY_VALUES:
            continue
        inner = _camel(source, inner) if isinstance(inner, Mapping) else inner
        spelled = f"{head}.{key}"
        if _translated(plan, extra, spelled, inner):
            continue
        if isinstance(inner, Mapping) and any(
            s.get(source, "").startswith(f"{spelled}.") for s in SHARED_FIELDS.values()
        ):
            _nested(plan, spelled, inner, extra)  # Gemini's thinkingConfig: its keys are knobs of their own
            continue
        plan.cannot(f"settings.extra.{spelled}", _unsaid(plan, spelled, inner))


def _camel(source: str, knobs: Mapping[str, Any]) -> Mapping[str, Any]:
    """Gemini's knobs in camelCase: its API reads ``thinking_budget`` as ``thinkingBudget``, and SDKs send either."""
    return camel(dict(knobs))[0] if source == "gemini" else knobs


def _family(fmt: str) -> str:
    return "openai-chat" if fmt == "openai-functions" else fmt


def _sharing(plan: _Plan, spelled: str) -> list[str]:
    """The shared fields the source spells ``spelled`` and the target has."""
    source, target = _family(plan.source), _family(plan.target)
    return [n for n, spell in SHARED_FIELDS.items() if spell.get(source) == spelled and target in spell]


def _translated(plan: _Plan, extra: dict[str, Any], spelled: str, value: Any) -> bool:
    """Whether the body field ``spelled`` was written into ``extra`` in the target's spelling."""
    return any(_put(plan, extra, name, value) for name in _sharing(plan, spelled))


def _unsaid(plan: _Plan, spelled: str, value: Any) -> str:
    """What a refusal of the body field ``spelled`` says: the value, when the target has the field."""
    if _sharing(plan, spelled):
        return f"the value {value!r} of request field {spelled!r} (no exact spelling of it in {plan.target})"
    return f"request field {spelled!r}"


def _put(plan: _Plan, extra: dict[str, Any], shared: str, value: Any) -> bool:
    """Spell shared field ``shared`` for the target in ``extra``; False when the target has no such field or
    no exact spelling of ``value``."""
    spelling = SHARED_FIELDS[shared].get(_family(plan.target))
    if spelling is None:
        return False
    neutral = from_format(shared, _family(plan.source), value)
    spelled = None if neutral is None else to_format(shared, _family(plan.target), neutral)
    if spelled is None:
        return False
    *heads, last = spelling.split(".")
    at = extra
    for head in heads:
        at[head] = dict(at.get(head) or {})  # a copy: the source's own objects are never changed
        at = at[head]
    at[last] = spelled
    return True


def _spec(plan: _Plan, spec: ToolSpec, path: str) -> ToolSpec:
    if plan.target == "openai-functions" and spec.strict:
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


def _response(plan: _Plan, response: ModelResponse) -> ModelResponse:
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
    message = _message(plan, response.message, "message")
    return response if message is response.message else replace(response, message=message)


_UNCOUNTED = {
    "gemini": ("cache_write_tokens",),
    "bedrock": ("reasoning_tokens",),
    "ollama": ("cache_read_tokens", "cache_write_tokens", "reasoning_tokens"),
}
"""Token counts a format's usage has no field for (totals still carry them)."""


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
    if plan.same:
        return message
    unread: dict[str, list[str]] = {}
    for key in unstash(message.extra, plan.source).get("unread", ()):
        head = key.split(".", 1)[0] if key.startswith("parts[") else ""
        unread.setdefault(head, []).append(key)
    parts: list[Part] = []
    for j, part in enumerate(message.parts):
        kept = _part(plan, part, f"{path}.parts[{j}]")
        for key in unread.pop(f"parts[{j}]", ()):  # fields the target will not see, after their part
            plan.cannot(f"{path}.{key}", f"{plan.source} field {key.rsplit('.', 1)[-1]!r}")
        if kept is not None:
            parts.append(kept)
    for key in (key for keys in unread.values() for key in keys):
        plan.cannot(f"{path}.{key}", f"{plan.source} field {key.rsplit('.', 1)[-1]!r}")
    _joined(plan, parts, path)
    name = message.name
    if name is not None and plan.target not in CHAT_FAMILY:
        plan.cannot(f"{path}.name", "a participant name")
        name = None
    if name == message.name and len(parts) == len(message.parts) and all(map(operator.is_, parts, message.parts)):
        return message
    return replace(message, parts=tuple(parts), name=name)


def _joined(plan: _Plan, parts: list[Part], path: str) -> None:
    """Report the parts a target spells as one string: Chat's and Ollama's reasoning, Ollama's text."""
    for kind, joins in ((Reasoning, (*CHAT_FAMILY, "ollama")), (Text, ("ollama",))):
        if plan.target in joins:
            at = [j for j, p in enumerate(parts) if type(p) is kind]
            if len(at) > 1:
                for j in at:
                    what = f"a {kind.kind} part joined with {len(at) - 1} more into one string"
                    plan.note(f"{path}.parts[{j}]", what, f"{plan.target} has one such field")


def _part(plan: _Plan, part: Part, where: str) -> Part | None:
    """``part`` as the target can carry it; ``None`` when it is left out (after reporting it)."""
    kind = type(part)
    if kind is ProviderPart:
        return _foreign(plan, part, where)  # type: ignore[arg-type]  # kind is ProviderPart
    if kind is Reasoning:
        return _reasoning(plan, part, where)  # type: ignore[arg-type]  # kind is Reasoning
    if kind is File:
        return _file(plan, part, where, in_result=False)  # type: ignore[arg-type]  # kind is File
    if kind is ToolResult:
        return _result(plan, part, where)  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Image:
        return _image(plan, part, where, in_result=False)  # type: ignore[arg-type]  # kind is Image
    if kind is ToolCall and part.arguments is None and plan.target in _OBJECT_ARGUMENTS:  # type: ignore[union-attr]
        plan.cannot(where, "arguments that are not a JSON object", "sent as input {}", "sent as input {}")
    return part


def _foreign(plan: _Plan, part: ProviderPart, where: str) -> Part | None:
    if part.format == plan.target or (part.format in CHAT_FAMILY and plan.family):
        return part
    # Gemini parts and Converse blocks have no "type": the one key that names the kind is first.
    kind = part.data.get("type") or next(iter(part.data), "?")
    what = f"{part.format} block {str(kind)!r}"
    return Text(text=f"[{what} left out]") if plan.cannot(where, what, "replaced by text") else None


def _reasoning(plan: _Plan, part: Reasoning, where: str) -> Part | None:
    # A signature or encrypted reasoning means something only to the format (provider) that wrote it.
    own = part.source == plan.target or {part.source, plan.target} <= CHAT_FAMILY
    if plan.target == "anthropic" and not own:
        what = f"reasoning from {part.source or 'another format'} (Anthropic takes back only thinking it signed)"
        return Text(text=f"[reasoning left out] {part.text}") if plan.cannot(where, what, "replaced by text") else None
    if not part.text and not own:
        plan.cannot(where, f"encrypted reasoning from {part.source or 'another format'}")
        return None
    if own:
        return part
    if part.signature is not None:
        plan.cannot(f"{where}.signature", "the reasoning's signature (only its text is carried)")
    if part.encrypted is not None:
        plan.cannot(f"{where}.encrypted", "the reasoning's encrypted content (only its text is carried)")
    # The target writes its own reasoning only: the text becomes the target's, the opaque parts stay behind.
    return Reasoning(text=part.text, summary=part.summary, source=plan.target)


def _file(plan: _Plan, file: File, where: str, *, in_result: bool) -> File | Text | None:
    """``file`` if the target can carry it; else reported, and left out or marked."""
    target = plan.target
    problem = None
    if target in CHAT_FAMILY and in_result:
        problem = "a file in a tool result (Chat tool messages hold text)"
    elif file.file_id is not None and not (file.source == target or {file.source, target} <= OPENAI_FORMATS):
        problem = f"a file id of {file.source or 'another provider'}"
    elif file.url is not None and file.data is None and target in CHAT_FAMILY:
        problem = "a file by URL (Chat takes files inline or by file id)"
    elif (
        target == "anthropic"
        and file.data is not None
        and file.media_type != "application/pdf"
        and plain_text(file) is None
    ):
        problem = f"a {file.media_type or 'typeless'} file (Anthropic documents are PDFs or UTF-8 plain text)"
    elif target == "ollama":
        problem = "a file (Ollama messages carry text and images only)"
    elif target == "gemini" and in_result:
        problem = "a file in a tool result (Gemini function responses hold an object)"
    elif target == "bedrock" and (file.data is None or document_format(file.media_type) is None):
        how = "by reference" if file.data is None else (file.media_type or "typeless")
        problem = f"a file ({how}; Converse documents are inline pdf, csv, doc(x), xls(x), html, txt or md)"
    if problem is None:
        return file
    return Text(text=f"[{problem} left out]") if plan.cannot(where, problem, "replaced by text") else None


def _image(plan: _Plan, image: Image, where: str, *, in_result: bool) -> Image | Text | None:
    """``image`` if the target can carry it; else reported, and left out or marked."""
    target = plan.target
    problem = None
    if in_result and target in ("gemini", "ollama"):
        problem = f"an image in a tool result ({target} results hold text)"
    elif image.data is None and target in ("bedrock", "ollama"):
        problem = f"an image by URL ({target} takes images inline)"
    elif target == "bedrock" and image_format(image.media_type) is None:
        problem = f"a {image.media_type} image (Converse takes png, jpeg, gif and webp)"
    if problem is None:
        return image
    return Text(text=f"[{problem} left out]") if plan.cannot(where, problem, "replaced by text") else None


def _result(plan: _Plan, result: ToolResult, where: str) -> ToolResult:
    if result.is_error and plan.target in OPENAI_FORMATS:
        plan.note(where, "is_error flag", 'marked: a first text part "Error: " before the content')
    elif result.is_error and plan.target == "ollama":
        plan.note(where, "is_error flag", 'marked: "Error: " before the content')
    if isinstance(result.content, str):
        return result
    content: list[Any] = []
    for k, inner in enumerate(result.content):
        at = f"{where}.content[{k}]"
        kept: Part | None = inner
        if isinstance(inner, ProviderPart):
            kept = _foreign(plan, inner, at)
        elif isinstance(inner, File):
            kept = _file(plan, inner, at, in_result=True)
        elif isinstance(inner, Image) and not plan.same:
            kept = _image(plan, inner, at, in_result=True)
        if kept is not None:
            content.append(kept)
    if len(content) == len(result.content) and all(map(operator.is_, content, result.content)):
        return result
    return replace(result, content=tuple(content))
