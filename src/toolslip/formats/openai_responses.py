"""The OpenAI Responses API wire format (``POST /v1/responses``), as pure functions.

What is particular to this format:

- A tool is flat: ``{"type": "function", "name", "description", "parameters", "strict"}``. Hosted tools
  (``web_search``, ``file_search``, ``code_interpreter``, ``mcp``...) travel verbatim in ``Request.extra_tools``.
  ``strict`` defaults to *true* here, unlike Chat Completions: a neutral ``strict=None`` (the provider
  default elsewhere, i.e. not strict) is written ``false``, and ``false`` reads back as ``None``.
- There are no messages, only ``input`` items (and ``output`` items in a response): ``message`` items,
  ``function_call`` items (``call_id`` pairs the call with its output; ``id`` is the item's own ``fc_...``
  id), ``function_call_output`` items, ``reasoning`` items, and hosted-tool items (``web_search_call``,
  ``mcp_call``, ``mcp_list_tools``...). Consecutive model-side items form one neutral assistant message;
  consecutive outputs one neutral ``tool`` message. Reasoning and hosted-tool items become
  ``ProviderPart("openai-responses", item)``, sent back unchanged.
- The system prompt is ``instructions`` (or a ``system``/``developer`` message item).
- There is no error flag on an output: an error result is sent with ``"Error: "`` before its content.
- A response has no finish reason: ``status`` (``completed``, ``incomplete`` with
  ``incomplete_details.reason``, ``failed``...) and the items say why it stopped.
- There are no stop sequences; ``max_output_tokens`` is the output limit.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import CannotExpress, FormatError
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
from ._wire import (
    EMPTY,
    ERROR_PREFIX,
    Json,
    dump_arguments,
    image_from_url,
    leftover,
    obj,
    only_specs,
    parse_arguments,
    seq,
    stash,
    text,
    unstash,
    with_fields,
)

NAME = "openai-responses"

INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}
_STATUSES = frozenset({"completed", "incomplete", "failed", "in_progress", "cancelled", "queued"})
_ROLES = {"system": "system", "developer": "system", "user": "user"}
_TOOL_KEYS = frozenset({"type", "name", "description", "parameters", "strict"})
_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments"})
_OUTPUT_KEYS = frozenset({"type", "call_id", "output"})
_BODY_KEYS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "temperature",
    }
)
_RESPONSE_KEYS = frozenset({"id", "model", "output", "usage", "status", "incomplete_details"})
_USAGE_KEYS = frozenset({"input_tokens", "input_tokens_details", "output_tokens", "total_tokens"})

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    out: Json = {"type": "function", "name": spec.name}
    if spec.description:
        out["description"] = spec.description
    out["parameters"] = spec.parameters
    if not (spec.strict and kept.get("shape") == "no-strict"):
        out["strict"] = bool(spec.strict)
    return with_fields(out, kept)


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Function tools as ToolSpecs; a hosted tool raises (``request_from_wire`` keeps those)."""
    return only_specs(_split_tools(items, "tools"), "function")


def _split_tools(items: object, path: str) -> tuple[list[ToolSpec], list[Json]]:
    specs: list[ToolSpec] = []
    others: list[Json] = []
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        item = obj(raw, where)
        if item.get("type") != "function" or not isinstance(item.get("parameters"), dict):
            others.append(item)  # hosted tools, mcp servers, custom tools: verbatim
            continue
        strict = item.get("strict", True)  # the API's default
        specs.append(
            ToolSpec(
                name=text(item.get("name"), f"{where}.name"),
                description=text(item.get("description", ""), f"{where}.description"),
                parameters=item["parameters"],
                strict=True if strict else None,
                extra=stash(NAME, leftover(item, _TOOL_KEYS), None if "strict" in item else "no-strict"),
            )
        )
    return specs, others


# --- messages (input items) -------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``input`` item list."""
    out: list[Json] = []
    for message in messages:
        _items_to_wire(message, out, full=False)
    return out


def _items_to_wire(message: Message, out: list[Json], *, full: bool) -> None:
    """Append the items spelling ``message``; ``full`` writes output items as a response holds them."""
    kept = unstash(message.extra, NAME)
    if message.role in ("system", "user"):
        out.append(_message_item(message, kept))
        return
    part_kept: Mapping[str, Any] = kept.get("parts", EMPTY) if kept else EMPTY
    parts = message.parts
    if message.role == "tool":
        results = [p for p in parts if type(p) is ToolResult]
        for i, result in enumerate(results):
            wire: Json = {"type": "function_call_output", "call_id": result.call_id, "output": _output_to_wire(result)}
            out.append(with_fields(wire, part_kept.get(str(i), EMPTY)))
        if len(results) < len(parts):  # text sent next to results (Anthropic allows it): a user message
            rest = tuple(p for p in parts if type(p) is not ToolResult)
            out.append(_message_item(Message(role="user", parts=rest), EMPTY))
        return
    i = 0
    while i < len(parts):
        part, mine = parts[i], part_kept.get(str(i), EMPTY)
        if type(part) is ToolCall:
            out.append(_call_to_wire(part, mine, full))
        elif type(part) is ProviderPart and "item" not in mine:
            if part.format == NAME:  # reasoning and hosted-tool items
                out.append(dict(part.data))
        else:  # the text (or refusal) parts of one assistant message item
            n = mine.get("n", 1)
            if "item" not in mine:  # from another format: consecutive texts make one message item
                mine = EMPTY
                while i + n < len(parts) and type(parts[i + n]) is Text and not part_kept.get(str(i + n)):
                    n += 1
            out.append(_assistant_item(parts[i : i + n], part_kept, i, mine, full))
            i += n
            continue
        i += 1


def _message_item(message: Message, kept: Mapping[str, Any]) -> Json:
    role = message.role
    fields = kept.get("fields", EMPTY) if kept else EMPTY
    parts = message.parts
    shape = kept.get("shape") if kept else None
    content: Any
    if len(parts) == 1 and type(parts[0]) is Text and shape != "list":
        content = parts[0].text
    elif not parts and shape != "list":
        content = ""
    else:
        kind = "input_text"
        part_kept = kept.get("parts", EMPTY) if kept else EMPTY
        content = [_content_to_wire(p, kind, part_kept.get(str(j))) for j, p in enumerate(parts)]
    return {**fields, "role": fields.get("role", role), "content": content}


def _content_to_wire(part: Part, text_kind: str, kept: Json | None) -> Json:
    block: Json
    if type(part) is Text:
        block = {"type": text_kind, "text": part.text}
    elif type(part) is Image:
        url = part.url if part.data is None else f"data:{part.media_type};base64,{part.data}"
        block = {"type": "input_image", "image_url": url}
        if kept is None:
            block["detail"] = "auto"
    elif type(part) is ProviderPart and part.format == NAME:
        block = dict(part.data)  # input_file, refusal...
    else:
        raise CannotExpress(f"a {part.kind} part cannot be message content in the Responses API")
    return {**kept, **block} if kept else block


def _assistant_item(
    parts: Sequence[Part], part_kept: Mapping[str, Any], start: int, mine: Mapping[str, Any], full: bool
) -> Json:
    content = [
        _content_to_wire(p, "output_text", part_kept.get(str(start + j), {}).get("block")) for j, p in enumerate(parts)
    ]
    if mine:
        item = mine["item"]
        if mine.get("str"):
            return {**item, "role": "assistant", "content": parts[0].text}  # type: ignore[union-attr]  # a Text
        return {**item, "role": "assistant", "content": content}
    if not full:
        if len(parts) == 1 and type(parts[0]) is Text:
            return {"role": "assistant", "content": parts[0].text}
        return {"role": "assistant", "content": content}
    for block in content:
        if block["type"] == "output_text":
            block.setdefault("annotations", [])
    return {"id": f"msg_{start}", "type": "message", "role": "assistant", "status": "completed", "content": content}


def _call_to_wire(call: ToolCall, kept: Mapping[str, Any], full: bool) -> Json:
    out: Json = {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": dump_arguments(call.arguments, call.raw_arguments),
    }
    if full and not kept:
        out = {"id": f"fc_{call.id}", **out, "status": "completed"}
    return {**kept, **out} if kept else out


def _output_to_wire(result: ToolResult) -> Any:
    content = result.content
    if isinstance(content, str):
        return ERROR_PREFIX + content if result.is_error else content
    blocks = [_content_to_wire(p, "input_text", None) for p in content]
    if result.is_error:
        blocks.insert(0, {"type": "input_text", "text": ERROR_PREFIX})
    return blocks


def messages_from_wire(items: object, path: str = "input") -> list[Message]:
    reader = _Reader()
    if isinstance(items, str):
        return [Message(role="user", parts=(Text(text=items),), extra=stash(NAME, None, "input"))]
    for i, raw in enumerate(seq(items, path)):
        reader.item(obj(raw, f"{path}[{i}]"), f"{path}[{i}]")
    reader.flush()
    return reader.out


class _Reader:
    """Groups items into neutral messages: model-side items into one assistant message, outputs into one tool."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.role: str | None = None
        self.parts: list[Part] = []
        self.kept: dict[str, Json] = {}

    def flush(self) -> None:
        if self.role is not None:
            extra = stash(NAME, None, None, self.kept)
            self.out.append(Message(role=self.role, parts=tuple(self.parts), extra=extra))  # type: ignore[arg-type]
        self.role, self.parts, self.kept = None, [], {}

    def add(self, role: str, part: Part, kept: Json | None = None) -> None:
        if self.role != role:
            self.flush()
            self.role = role
        if kept:
            self.kept[str(len(self.parts))] = kept
        self.parts.append(part)

    def item(self, item: Json, path: str) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "function_call":
            arguments = text(item.get("arguments"), f"{path}.arguments")
            call = ToolCall(
                id=text(item.get("call_id"), f"{path}.call_id"),
                name=text(item.get("name"), f"{path}.name"),
                arguments=parse_arguments(arguments),
                raw_arguments=arguments,
            )
            self.add("assistant", call, leftover(item, _CALL_KEYS))
        elif kind == "function_call_output":
            result = ToolResult(
                call_id=text(item.get("call_id"), f"{path}.call_id"), content=_output_from_wire(item, path)
            )
            self.add("tool", result, leftover(item, _OUTPUT_KEYS))
        elif kind == "message" and item.get("role") == "assistant" and item.get("content"):
            self._assistant(item, path)
        elif kind == "message" and item.get("role") in _ROLES:
            self.flush()
            self.out.append(_message_from_wire(item, path))
        elif kind == "message" and item.get("role") != "assistant":
            raise FormatError(f"unknown role {item.get('role')!r}; expected system, developer, user or assistant", path)
        else:  # reasoning, hosted-tool calls, mcp items, item references, anything newer
            self.add("assistant", ProviderPart(format=NAME, data=item))

    def _assistant(self, item: Json, path: str) -> None:
        head: Json = {"item": leftover(item, frozenset({"role", "content"}))}
        content = item["content"]
        if isinstance(content, str):
            self.add("assistant", Text(text=content), {**head, "str": True})
            return
        blocks = seq(content, f"{path}.content")
        head["n"] = len(blocks)
        for j, raw in enumerate(blocks):
            block = obj(raw, f"{path}.content[{j}]")
            part: Part = ProviderPart(format=NAME, data=block)
            if block.get("type") == "output_text":
                part = Text(text=text(block.get("text"), f"{path}.content[{j}].text"))
            rest = leftover(block, frozenset({"type", "text"})) if type(part) is Text else {}
            self.add("assistant", part, {**(head if j == 0 else {}), "block": rest} if j == 0 or rest else None)


def _message_from_wire(item: Json, path: str) -> Message:
    role = item["role"]
    content = item.get("content")
    fields = leftover(item, frozenset({"role", "content"}))
    if role == "developer":
        fields["role"] = "developer"
    if isinstance(content, str):
        parts: list[Part] = [Text(text=content)] if content else []
        return Message(role=_ROLES[role], parts=tuple(parts), extra=stash(NAME, fields))  # type: ignore[arg-type]
    parts, part_kept = _content_from_wire(content, f"{path}.content")
    return Message(
        role=_ROLES[role],  # type: ignore[arg-type]  # one of the neutral roles
        parts=tuple(parts),
        extra=stash(NAME, fields, "list", part_kept),
    )


def _content_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json]]:
    parts: list[Part] = []
    kept: dict[str, Json] = {}
    for j, raw in enumerate(seq(content, path)):
        block = obj(raw, f"{path}[{j}]")
        kind = block.get("type")
        if kind in ("input_text", "output_text"):
            parts.append(Text(text=text(block.get("text"), f"{path}[{j}].text")))
            rest = leftover(block, frozenset({"type", "text"}))
        elif kind == "input_image" and isinstance(block.get("image_url"), str):
            parts.append(image_from_url(block["image_url"]))
            rest = leftover(block, frozenset({"type", "image_url"}))
        else:
            parts.append(ProviderPart(format=NAME, data=block))  # files, images by file_id
            rest = {}
        if rest or kind == "input_image":
            kept[str(j)] = rest
    return parts, kept


def _output_from_wire(item: Json, path: str) -> str | tuple[Text | Image, ...]:
    output = item.get("output")
    if isinstance(output, str):
        return output
    parts, _ = _content_from_wire(output, f"{path}.output")
    for j, part in enumerate(parts):
        if type(part) is ProviderPart:
            raise FormatError("an output's content parts must be text or images", f"{path}.output[{j}]")
    return tuple(parts)  # type: ignore[arg-type]  # checked just above


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/responses``."""
    settings = request.settings
    if settings.stop:
        raise CannotExpress("the Responses API has no stop sequences; leave Settings.stop empty", "stop")
    messages = list(request.messages)
    body: Json = {"model": request.model}
    first = messages[0] if messages else None
    if first is not None and first.role == "system" and unstash(first.extra, NAME).get("shape") == "instructions":
        body["instructions"] = first.text
        messages = messages[1:]
    only = messages[0] if len(messages) == 1 else None
    if only is not None and unstash(only.extra, NAME).get("shape") == "input":
        body["input"] = only.text
    else:
        body["input"] = messages_to_wire(messages)
    if request.tools or request.extra_tools:
        body["tools"] = [*tools_to_wire(request.tools), *request.extra_tools]
    choice = settings.tool_choice
    if choice is not None:
        body["tool_choice"] = {"type": "function", "name": choice.name} if isinstance(choice, UseTool) else choice
    if settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.max_tokens is not None:
        body["max_output_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.extra:
        body.update(settings.extra)
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = _split_tools(data.get("tools") or [], "tools")
    extra = leftover(data, _BODY_KEYS)
    choice = _tool_choice_from_wire(data.get("tool_choice"))
    if choice is None and data.get("tool_choice") is not None:
        extra["tool_choice"] = data["tool_choice"]  # allowed_tools, hosted-tool choices: verbatim
    messages = messages_from_wire(data.get("input", []))
    instructions = data.get("instructions")
    if isinstance(instructions, str):
        messages.insert(
            0, Message(role="system", parts=(Text(text=instructions),), extra=stash(NAME, None, "instructions"))
        )
    elif instructions is not None:
        extra["instructions"] = instructions
    return Request(
        model=text(data.get("model"), "model"),
        messages=tuple(messages),
        tools=tuple(tools),
        settings=Settings(
            max_tokens=data.get("max_output_tokens"),
            temperature=data.get("temperature"),
            tool_choice=choice,
            parallel_tool_calls=data.get("parallel_tool_calls"),
            extra=extra,
        ),
        extra_tools=tuple(extra_tools),
    )


def _tool_choice_from_wire(choice: object) -> ToolChoice | None:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.keys() == {"type", "name"} and choice["type"] == "function":
        return UseTool(text(choice["name"], "tool_choice.name"))
    return None


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A full ``response`` object."""
    kept = unstash(response.extra, NAME)
    output: list[Json] = []
    _items_to_wire(response.message, output, full=True)
    status, incomplete = _status_to_wire(response)
    usage = response.usage
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    details = {"cached_tokens": usage.cache_read_tokens, "cache_write_tokens": usage.cache_write_tokens}
    wire_usage: Json = {
        "output_tokens_details": {"reasoning_tokens": 0},
        **kept.get("usage", EMPTY),
        "input_tokens": prompt,
        "input_tokens_details": {**kept.get("input_details", EMPTY), **details},
        "output_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
    }
    out: Json = {
        "object": "response",
        "created_at": int(time.time()),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **kept.get("fields", EMPTY),
        "id": response.id,
        "model": response.model,
        "status": status,
        "incomplete_details": incomplete,
        "output": output,
    }
    if not kept.get("no_usage"):
        out["usage"] = wire_usage
    return out


def _status_to_wire(response: ModelResponse) -> tuple[str, Json | None]:
    raw = response.raw_stop_reason
    if raw in INCOMPLETE or (raw is not None and raw not in _STATUSES and response.stop_reason == "other"):
        return "incomplete", {"reason": raw}
    if raw in _STATUSES and raw != "incomplete":
        return raw, None
    for reason, stop in INCOMPLETE.items():
        if stop == response.stop_reason:
            return "incomplete", {"reason": reason}
    return "completed", None


def response_from_wire(data: object) -> ModelResponse:
    """A ``response`` dict, or the SDK's ``Response`` object, as a ModelResponse."""
    body = obj(data, "response")
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    for m in messages_from_wire(seq(body.get("output"), "output"), "output"):  # all one assistant message
        for key, value in unstash(m.extra, NAME).get("parts", EMPTY).items():
            part_kept[str(len(parts) + int(key))] = value
        parts += m.parts
    status = body.get("status")
    details = body.get("incomplete_details")
    raw: str | None = status if isinstance(status, str) else None
    stop: StopReason = "other"
    if status == "completed":
        stop = "tool_use" if any(type(p) is ToolCall for p in parts) else "end_turn"
        if any(type(p) is ProviderPart and p.data.get("type") == "refusal" for p in parts):
            stop = "refusal"
    elif status == "incomplete" and isinstance(details, dict) and isinstance(details.get("reason"), str):
        raw = details["reason"]
        stop = INCOMPLETE.get(raw, "other")
    kept: Json = {"fields": leftover(body, _RESPONSE_KEYS)}
    wire_usage = body.get("usage")
    usage = Usage()
    if wire_usage is None:
        kept["no_usage"] = True
    else:
        wire_usage = obj(wire_usage, "usage")
        details = obj(wire_usage.get("input_tokens_details") or {}, "usage.input_tokens_details")
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        usage = Usage(
            input_tokens=(wire_usage.get("input_tokens") or 0) - cached - written,
            output_tokens=wire_usage.get("output_tokens") or 0,
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )
        kept["input_details"] = leftover(details, frozenset({"cached_tokens", "cache_write_tokens"}))
        kept["usage"] = leftover(wire_usage, _USAGE_KEYS)
    return ModelResponse(
        message=Message(role="assistant", parts=tuple(parts), extra=stash(NAME, None, None, part_kept)),
        stop_reason=stop,
        usage=usage,
        model=text(body.get("model", ""), "model"),
        id=text(body.get("id", ""), "id"),
        raw_stop_reason=raw,
        extra={NAME: kept},
    )
