"""The Anthropic Messages wire format (``POST /v1/messages``), as pure functions.

What is particular to this format:

- A tool is ``{name, description, input_schema}``: the schema key is ``input_schema``, not ``parameters``.
  Server tools (``{"type": "web_search_20250305", ...}``) come from ``Request.server_tools`` (rendered by
  ``toolslip.server_tools``) or travel verbatim in ``Request.extra_tools``.
- Content is a list of typed blocks. Calls are ``tool_use`` blocks whose ``input`` is already an object.
- There is no tool role: results are ``tool_result`` blocks inside a ``user`` message, with ``is_error``.
  Such a user message is a neutral ``tool`` message, and back.
- The system prompt is the top-level ``system`` field (a string or text blocks), not a message; neutral
  system messages are gathered there, wherever they stood.
- Blocks only this format understands (``thinking`` with its signature, ``redacted_thinking``,
  ``server_tool_use``, ``*_tool_result``, documents, anything new) become ``ProviderPart("anthropic", block)``
  and are sent back unchanged.
- ``max_tokens`` is required: 1024 when the settings leave it unset.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..messages import (
    Image,
    Message,
    ModelResponse,
    Part,
    ProviderPart,
    Request,
    Settings,
    StopReason,
    Text,
    ToolCall,
    ToolChoice,
    ToolResult,
    ToolSpec,
    Usage,
    UseTool,
)
from ..server_tools import render as render_server_tools
from ._memo import MessageMemo
from ._wire import (
    EMPTY,
    Json,
    guess_media_type,
    leftover,
    obj,
    only_specs,
    seq,
    stash,
    stop_to_wire,
    text,
    unstash,
    with_fields,
)

NAME = "anthropic"
DEFAULT_MAX_TOKENS = 1024

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
_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})
_USE_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_USAGE_KEYS = frozenset({"input_tokens", "output_tokens"})
_SERVER_COUNTERS = {"web_search_requests": 0, "web_fetch_requests": 0}
_RESPONSE_KEYS = frozenset({"id", "role", "model", "content", "stop_reason", "usage"})

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    out: Json = {"name": spec.name}
    if spec.description:
        out["description"] = spec.description
    out["input_schema"] = spec.parameters
    if spec.strict is not None:
        out["strict"] = spec.strict
    return with_fields(out, unstash(spec.extra, NAME))


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Client tools as ToolSpecs; a server tool raises (``request_from_wire`` keeps those)."""
    return only_specs(_split_tools(items, "tools"), "client")


def _split_tools(items: object, path: str) -> tuple[list[ToolSpec], list[Json]]:
    specs: list[ToolSpec] = []
    others: list[Json] = []
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        item = obj(raw, where)
        if item.get("type", "custom") != "custom" or "input_schema" not in item:
            others.append(item)  # server tools (web search, bash, text editor...) travel verbatim
            continue
        specs.append(
            ToolSpec(
                name=text(item.get("name"), f"{where}.name"),
                description=text(item.get("description", ""), f"{where}.description"),
                parameters=obj(item["input_schema"], f"{where}.input_schema"),
                strict=item.get("strict"),
                extra=stash(NAME, leftover(item, _TOOL_KEYS)),
            )
        )
    return specs, others


# --- messages ---------------------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``messages`` array; system messages are left out (see :func:`system_to_wire`)."""
    return [_encoded(m) for m in messages if m.role != "system"]


def _message_to_wire(message: Message) -> Json:
    kept = unstash(message.extra, NAME)
    parts = message.parts
    content: Any
    if len(parts) == 1 and type(parts[0]) is Text and not (kept and kept.get("shape") == "list"):
        content = parts[0].text
    elif not parts and kept.get("shape") == "":
        content = ""
    else:
        content = _blocks_to_wire(parts, kept.get("parts", EMPTY) if kept else EMPTY)
    # Anthropic has no tool role: results go back inside a user message.
    out: Json = {"role": "assistant" if message.role == "assistant" else "user", "content": content}
    return with_fields(out, kept)


_encoded = MessageMemo(_message_to_wire)  # a loop resends its whole history: encode each message once


def system_to_wire(messages: Iterable[Message]) -> str | list[Json] | None:
    """The top-level ``system`` value for the system messages among ``messages`` (``None`` if none)."""
    systems = [m for m in messages if m.role == "system"]
    if not systems:
        return None
    first = systems[0]
    kept = unstash(first.extra, NAME)
    if len(systems) == 1 and len(first.parts) == 1 and type(first.parts[0]) is Text and kept.get("shape") != "list":
        return first.parts[0].text
    blocks: list[Json] = []
    for message in systems:
        blocks.extend(_blocks_to_wire(message.parts, unstash(message.extra, NAME).get("parts", EMPTY)))
    return blocks


def _blocks_to_wire(parts: Sequence[Part], part_kept: Mapping[str, Any]) -> list[Json]:
    out: list[Json] = []
    for i, part in enumerate(parts):
        block = _block_to_wire(part)
        if block is None:
            continue
        if part_kept:
            rest = part_kept.get(str(i))
            if rest:
                # Extension fields (citations, cache_control) follow the standard ones, as the API writes
                # them, so a block goes back byte for byte; the keys never overlap.
                block = {**block, **rest}
        out.append(block)
    return out


def _block_to_wire(part: Part) -> Json | None:
    kind = type(part)
    if kind is Text:
        return {"type": "text", "text": part.text}  # type: ignore[union-attr]  # kind is Text
    if kind is ToolCall:
        call: ToolCall = part  # type: ignore[assignment]  # kind is ToolCall
        # A call whose arguments were not a JSON object (possible from OpenAI) is sent with an empty input;
        # its error result, which follows, tells the model what went wrong.
        args = call.arguments if call.arguments is not None else {}
        return {"type": "tool_use", "id": call.id, "name": call.name, "input": args}
    if kind is ToolResult:
        return _result_to_wire(part)  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Image:
        return _image_to_wire(part)  # type: ignore[arg-type]  # kind is Image
    provider: ProviderPart = part  # type: ignore[assignment]  # the one kind left
    # Another format's private block has no meaning here.
    return dict(provider.data) if provider.format == NAME else None


def _image_to_wire(image: Image) -> Json:
    if image.data is not None:
        source: Json = {"type": "base64", "media_type": image.media_type, "data": image.data}
    else:
        source = {"type": "url", "url": image.url}
    return {"type": "image", "source": source}


def _result_to_wire(result: ToolResult) -> Json:
    out: Json = {"type": "tool_result", "tool_use_id": result.call_id}
    content = result.content
    if isinstance(content, str):
        if content:
            out["content"] = content
    else:
        out["content"] = [_block_to_wire(p) for p in content]
    if result.is_error:
        out["is_error"] = True
    return out


def messages_from_wire(items: object, system: object = None, path: str = "messages") -> list[Message]:
    """Neutral messages; a top-level ``system`` value, when given, becomes the first message."""
    out: list[Message] = []
    if system is not None:
        out.append(_system_from_wire(system))
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        data = obj(raw, where)
        role = data.get("role")
        if role not in ("user", "assistant"):
            raise FormatError(f"unknown role {role!r}; expected user or assistant", f"{where}.role")
        content = data.get("content")
        shape = None
        if isinstance(content, str):
            parts: list[Part] = [Text(text=content)] if content else []
            part_kept: dict[str, Json] = {}
            shape = None if content else ""
        else:
            parts, part_kept = _blocks_from_wire(content, f"{where}.content")
            if len(parts) == 1 and type(parts[0]) is Text:
                shape = "list"
        neutral = "assistant" if role == "assistant" else "user"
        if neutral == "user" and any(type(p) is ToolResult for p in parts):
            neutral = "tool"
        fields = leftover(data, frozenset({"role", "content"})) if len(data) > 2 else None
        out.append(
            Message(
                role=neutral,  # type: ignore[arg-type]  # one of the neutral roles
                parts=tuple(parts),
                extra=stash(NAME, fields, shape, part_kept) if fields or shape is not None or part_kept else EMPTY,
            )
        )
    return out


def _system_from_wire(system: object) -> Message:
    if isinstance(system, str):
        return Message(role="system", parts=(Text(text=system),))
    parts, part_kept = _blocks_from_wire(system, "system")
    return Message(role="system", parts=tuple(parts), extra=stash(NAME, None, "list", part_kept))


def _blocks_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json]]:
    """Neutral parts for a block list, plus each block's keys that have no neutral slot."""
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    for i, raw in enumerate(seq(content, path)):
        where = f"{path}[{i}]"
        block = obj(raw, where)
        kind = block.get("type")
        part: Part | None = None
        known = _TEXT_KEYS
        if kind == "text":
            part = Text(text=text(block.get("text"), f"{where}.text"))
        elif kind == "tool_use":
            known = _USE_KEYS
            arguments = obj(block.get("input"), f"{where}.input")
            part = ToolCall(
                id=text(block.get("id"), f"{where}.id"),
                name=text(block.get("name"), f"{where}.name"),
                arguments=arguments,
            )
        elif kind == "tool_result":
            known = _RESULT_KEYS
            part = _result_from_wire(block, where)
        elif kind == "image":
            known = _IMAGE_KEYS
            part = _image_from_wire(block.get("source"))
        if part is None:
            part = ProviderPart(format=NAME, data=block)  # thinking, server tools, documents, new kinds
        elif len(block) > len(known) or known is _RESULT_KEYS:
            rest = leftover(block, known)
            if block.get("is_error") is False:
                rest["is_error"] = False  # said explicitly; sent back the same way
            if "content" in block and block["content"] == "":
                rest["content"] = ""
            if rest:
                part_kept[str(i)] = rest
        parts.append(part)
    return parts, part_kept


def _image_from_wire(source: object) -> Image | None:
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    if kind == "base64" and source.keys() == {"type", "media_type", "data"}:
        return Image(media_type=source["media_type"], data=source["data"])
    if kind == "url" and source.keys() == {"type", "url"} and isinstance(source["url"], str):
        return Image(media_type=guess_media_type(source["url"]), url=source["url"])
    return None  # file sources and anything newer stay a ProviderPart


def _result_from_wire(block: Json, path: str) -> ToolResult | None:
    """A ToolResult, or None when the content holds blocks a ToolResult cannot (search results...)."""
    content = block.get("content", "")
    result_content: str | tuple[Text | Image, ...]
    if isinstance(content, str):
        result_content = content
    else:
        inner, inner_kept = _blocks_from_wire(content, f"{path}.content")
        if inner_kept or any(type(p) not in (Text, Image) for p in inner):
            return None
        result_content = tuple(inner)  # type: ignore[arg-type]  # only Text and Image, checked above
    return ToolResult(
        call_id=text(block.get("tool_use_id"), f"{path}.tool_use_id"),
        content=result_content,
        is_error=block.get("is_error") is True,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/messages``."""
    settings = request.settings
    body: Json = {
        "model": request.model,
        "max_tokens": settings.max_tokens if settings.max_tokens is not None else DEFAULT_MAX_TOKENS,
        "messages": messages_to_wire(request.messages),
    }
    system = system_to_wire(request.messages)
    if system is not None:
        body["system"] = system
    tools = [*tools_to_wire(request.tools), *render_server_tools(request.server_tools, NAME), *request.extra_tools]
    if tools:
        body["tools"] = tools
    choice = _tool_choice_to_wire(settings.tool_choice, settings.parallel_tool_calls)
    if choice is not None:
        body["tool_choice"] = choice
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.stop:
        body["stop_sequences"] = list(settings.stop)
    if settings.extra:
        body.update(settings.extra)
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
    tools, extra_tools = _split_tools(data.get("tools") or [], "tools")
    extra = leftover(data, _BODY_KEYS)
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
    return Request(
        model=text(data.get("model"), "model"),
        messages=tuple(messages_from_wire(data.get("messages"), data.get("system"))),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
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
    if usage.server_tool_use:
        # The current API (and SDK) always spells out both counters.
        wire_usage["server_tool_use"] = {**_SERVER_COUNTERS, **usage.server_tool_use}
    return {
        "type": "message",
        "stop_sequence": None,
        **kept.get("fields", EMPTY),
        "id": response.id,
        "role": "assistant",
        "model": response.model,
        "content": _blocks_to_wire(response.message.parts, message_kept.get("parts", EMPTY)),
        "stop_reason": stop_to_wire(response, STOP, STOP_BACK),
        "usage": wire_usage,
    }


def response_from_wire(data: object) -> ModelResponse:
    """A message dict, or the SDK's ``anthropic.types.Message``, as a ModelResponse."""
    body = obj(data, "response")
    parts, part_kept = _blocks_from_wire(body.get("content"), "content")
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
    if isinstance(servers, dict) and servers and all(type(v) is int for v in servers.values()):
        server_use = rest.pop("server_tool_use")
    return ModelResponse(
        message=Message(role="assistant", parts=tuple(parts), extra=stash(NAME, None, None, part_kept)),
        stop_reason=STOP.get(raw, "other") if isinstance(raw, str) else "other",
        usage=Usage(
            input_tokens=wire_usage.get("input_tokens") or 0,
            output_tokens=wire_usage.get("output_tokens") or 0,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            server_tool_use=server_use,
        ),
        model=text(body.get("model", ""), "model"),
        id=text(body.get("id", ""), "id"),
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: {"fields": leftover(body, _RESPONSE_KEYS), "usage": rest}},
    )
