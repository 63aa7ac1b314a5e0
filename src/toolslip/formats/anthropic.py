"""The Anthropic Messages wire format (``POST /v1/messages``), as pure functions.

What is particular to this format:

- A tool is ``{name, description, input_schema}``: the schema key is ``input_schema``, not ``parameters``.
  Server tools (``{"type": "web_search_20250305", ...}``) come from ``Request.server_tools`` (rendered by
  ``toolslip.formats.server_tools``) or travel verbatim in ``Request.extra_tools``.
- Content is a list of typed blocks. Calls are ``tool_use`` blocks whose ``input`` is already an object.
- There is no tool role: results are ``tool_result`` blocks inside a ``user`` message, with ``is_error``.
  Such a user message is a neutral ``tool`` message, and back.
- The system prompt is the top-level ``system`` field (a string or text blocks), not a message; neutral
  system messages are gathered there, wherever they stood.
- Blocks only this format understands (``thinking`` with its signature, ``redacted_thinking``,
  ``server_tool_use``, ``*_tool_result``, documents, anything new) become ``ProviderPart("anthropic", block)``
  and are sent back unchanged.
- ``max_tokens`` is required: 1024 when the settings leave it unset.
- ``thread`` (message threads, beta ``message-threads-2026-08-12``): ``{"type": "create"}`` or ``{"type":
  "continue", "previous_message_id": ...}`` asks the service to hold the conversation between turns, so a
  ``continue`` carries only the new messages and no ``system`` or ``tools``. It is read (and checked) into
  ``Settings.extra["thread"]`` and written back from there; the transport adds the beta header for it, and
  ``toolslip serve`` holds threads itself (``toolslip.server.threads``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..core.errors import FormatError
from ..core.messages import Message, ModelResponse, Request, Settings, StopReason, ToolChoice, ToolSpec, Usage, UseTool
from ._anthropic_blocks import NAME as NAME  # re-exported: the format module's public names
from ._anthropic_blocks import blocks_from_wire, blocks_to_wire, unread_parts
from ._anthropic_blocks import messages_from_wire as messages_from_wire
from ._anthropic_blocks import messages_to_wire as messages_to_wire
from ._anthropic_blocks import system_to_wire as system_to_wire
from ._memo import RecentMemo
from ._wire import (
    EMPTY,
    Json,
    add_tools,
    drop_absent,
    keep_empty,
    leftover,
    need,
    note_absent,
    obj,
    only_specs,
    seq,
    split_tools,
    stash,
    stop_to_wire,
    text_or_none,
    unstash,
    with_fields,
)
from .structured import output_from_wire, output_to_wire

DEFAULT_MAX_TOKENS = 1024
THREAD_FIELD = "thread"
MESSAGE_THREADS_BETA = "message-threads-2026-08-12"
"""The ``anthropic-beta`` value a request with a ``thread`` needs."""

STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "model_context_window_exceeded": "max_tokens",
}
STOP_BACK: dict[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "pause_turn": "pause_turn",
    "refusal": "refusal",
    "content_filter": "refusal",
    "other": "end_turn",
}
_CHOICES = {"auto": "auto", "any": "required", "none": "none"}
_CHOICES_BACK = {"auto": "auto", "required": "any", "none": "none"}
_TOOL_KEYS = frozenset({"name", "description", "input_schema", "strict"})
_BODY_KEYS = frozenset(
    {"model", "messages", "system", "tools", "tool_choice", "max_tokens", "temperature", "stop_sequences"}
)
_USAGE_KEYS = frozenset({"input_tokens", "output_tokens"})
_SERVER_COUNTERS = {"web_search_requests": 0, "web_fetch_requests": 0}
_RESPONSE_KEYS = frozenset({"id", "role", "model", "content", "stop_reason", "usage"})

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    out: Json = {"name": spec.name}
    if spec.description:
        out["description"] = spec.description
    elif "description" in kept:
        out["description"] = kept["description"]  # spelled "" or null
    out["input_schema"] = spec.parameters
    if spec.strict is not None:
        out["strict"] = spec.strict
    return with_fields(out, kept)


_tools = RecentMemo(tools_to_wire)  # the loop offers the same tuple of specs on every step


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Client tools as ToolSpecs; a server tool raises (``request_from_wire`` keeps those)."""
    return only_specs(split_tools(items, "tools", spec_from_wire), "client")


def spec_from_wire(item: Json, path: str = "tools[0]") -> ToolSpec | None:
    """One ``tools`` entry as a ToolSpec; ``None`` for a server or Anthropic-defined tool (web search, bash...)."""
    if item.get("type", "custom") != "custom" or "input_schema" not in item:
        return None
    description = text_or_none(item.get("description"), f"{path}.description")
    kept = dict(stash(NAME, leftover(item, _TOOL_KEYS)).get(NAME, EMPTY))
    if not description and "description" in item:
        kept["description"] = description
    return ToolSpec(
        name=need(item, "name", path),
        description=description or "",
        parameters=obj(item["input_schema"], f"{path}.input_schema"),
        strict=item.get("strict"),
        extra={NAME: kept} if kept else EMPTY,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/messages``."""
    settings = request.settings
    body: Json = {"model": request.model} if request.model else {}  # a history may have no model yet
    body["max_tokens"] = settings.max_tokens if settings.max_tokens is not None else DEFAULT_MAX_TOKENS
    body["messages"] = messages_to_wire(request.messages)
    system = system_to_wire(request.messages)
    if system is not None:
        body["system"] = system
    add_tools(body, _tools(request.tools), request, NAME)
    choice = _tool_choice_to_wire(settings.tool_choice, settings.parallel_tool_calls)
    if choice is not None:
        body["tool_choice"] = choice
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.stop:
        body["stop_sequences"] = list(settings.stop)
    if settings.extra:
        body.update(settings.extra)
    output_to_wire(NAME, request.output, body)
    return body


def _tool_choice_to_wire(choice: ToolChoice | None, parallel: bool | None) -> Json | None:
    if choice is None and parallel is None:
        return None
    # Parallel control lives inside tool_choice here, so asking for it alone means an explicit "auto".
    out: Json = (
        {"type": "tool", "name": choice.name}
        if isinstance(choice, UseTool)
        else {"type": _CHOICES_BACK[choice or "auto"]}
    )
    if parallel is not None and out["type"] != "none":
        out["disable_parallel_tool_use"] = not parallel
    return out


def _tool_choice_from_wire(choice: object) -> tuple[ToolChoice | None, bool | None] | None:
    """(tool_choice, parallel_tool_calls), or None for a spelling this module does not know."""
    if not isinstance(choice, dict) or not choice.keys() <= {"type", "name", "disable_parallel_tool_use"}:
        return None
    kind = choice.get("type")
    disable = choice.get("disable_parallel_tool_use")
    parallel = None if disable is None else not disable
    if kind == "tool" and isinstance(choice.get("name"), str):
        return UseTool(choice["name"]), parallel
    if kind in _CHOICES and "name" not in choice:
        return _CHOICES[kind], parallel  # type: ignore[return-value]  # values are neutral choices
    return None


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = split_tools(data.get("tools") or [], "tools", spec_from_wire, NAME)
    extra = leftover(data, _BODY_KEYS)
    keep_empty(data, extra, ("tools", "stop_sequences", "system", "temperature", "tool_choice"))
    if extra.get(THREAD_FIELD) is not None:
        read_thread(extra[THREAD_FIELD])
    choice: ToolChoice | None = None
    parallel: bool | None = None
    if data.get("tool_choice") is not None:
        known = _tool_choice_from_wire(data["tool_choice"])
        if known is None:
            extra["tool_choice"] = data["tool_choice"]  # sent back verbatim
        else:
            choice, parallel = known
    stop = data.get("stop_sequences")
    settings = Settings(
        max_tokens=data.get("max_tokens"),
        temperature=data.get("temperature"),
        tool_choice=choice,
        parallel_tool_calls=parallel,
        stop=tuple(seq(stop, "stop_sequences")) if stop is not None else (),
        extra=extra,
    )
    output = output_from_wire(NAME, extra)
    return Request(
        model=text_or_none(data.get("model"), "model") or "",
        messages=tuple(messages_from_wire(data.get("messages"), data.get("system") or None)),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
        output=output,
    )


def read_thread(value: object) -> Json | None:
    """A request's ``thread``: ``{"type": "create"}``, ``{"type": "continue", "previous_message_id": ID}`` or
    None (``null``, no thread). Anything else is a :class:`FormatError` that says what is expected."""
    if value is None:
        return None
    if isinstance(value, dict):
        keys, kind = set(value), value.get("type")
        previous = value.get("previous_message_id")
        if (kind == "create" and keys == {"type"}) or (
            kind == "continue" and keys == {"type", "previous_message_id"} and isinstance(previous, str) and previous
        ):
            return dict(value)
    raise FormatError(
        f'expected {{"type": "create"}} or {{"type": "continue", "previous_message_id": "<reply id>"}}, not {value!r}',
        THREAD_FIELD,
    )


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A full Anthropic ``message`` object."""
    kept = unstash(response.extra, NAME)
    message_kept = unstash(response.message.extra, NAME)
    usage = response.usage
    wire_usage: Json = {
        **kept.get("usage", EMPTY),
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }
    if usage.cache_write_tokens:
        wire_usage["cache_creation_input_tokens"] = usage.cache_write_tokens
    if usage.cache_read_tokens:
        wire_usage["cache_read_input_tokens"] = usage.cache_read_tokens
    spelled = kept.get("servers")
    if usage.server_tool_use or spelled is not None:
        # The current API (and SDK) always spells out both counters; a response read here keeps its own.
        counters = dict.fromkeys(spelled, 0) if spelled is not None else _SERVER_COUNTERS
        wire_usage["server_tool_use"] = {**counters, **usage.server_tool_use}
    out: Json = {
        "type": "message",
        "stop_sequence": None,
        **kept.get("fields", EMPTY),
        "id": response.id,
        "role": "assistant",
        "model": response.model,
        "content": blocks_to_wire(response.message.parts, message_kept.get("parts", EMPTY)),
        "stop_reason": stop_to_wire(response, STOP, STOP_BACK),
        "usage": wire_usage,
    }
    drop_absent(out, kept)
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A message dict, or the SDK's ``anthropic.types.Message``, as a ModelResponse."""
    body = obj(data, "response")
    parts, part_kept = blocks_from_wire(body.get("content"), "content")
    raw = body.get("stop_reason")
    wire_usage = obj(body.get("usage", {}), "usage")
    rest = leftover(wire_usage, _USAGE_KEYS)
    # Zero or null counts are not consumed, so they come back spelled as they were.
    cache_write = wire_usage.get("cache_creation_input_tokens") or 0
    if cache_write:
        del rest["cache_creation_input_tokens"]
    cache_read = wire_usage.get("cache_read_input_tokens") or 0
    if cache_read:
        del rest["cache_read_input_tokens"]
    servers = wire_usage.get("server_tool_use")
    server_use: Mapping[str, int] = {}
    kept: dict[str, object] = {"fields": leftover(body, _RESPONSE_KEYS), "usage": rest}
    note_absent(kept, body, ("type", "stop_sequence", "id", "model"))
    if isinstance(servers, dict) and servers and all(type(v) is int for v in servers.values()):
        server_use = rest.pop("server_tool_use")
        kept["servers"] = list(servers)
    unread = unread_parts(parts, part_kept)
    return ModelResponse(
        message=Message(role="assistant", parts=tuple(parts), extra=stash(NAME, None, None, part_kept, unread)),
        stop_reason=STOP.get(raw, "other") if isinstance(raw, str) else "other",
        usage=Usage(
            input_tokens=wire_usage.get("input_tokens") or 0,
            output_tokens=wire_usage.get("output_tokens") or 0,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            server_tool_use=server_use,
        ),
        model=text_or_none(body.get("model"), "model") or "",
        id=text_or_none(body.get("id"), "id") or "",
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )
