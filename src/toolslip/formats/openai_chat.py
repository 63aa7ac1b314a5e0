"""The OpenAI Chat Completions wire format (``POST /v1/chat/completions``), as pure functions.

What is particular to this format:

- A tool is ``{"type": "function", "function": {name, description, parameters, strict}}``.
- Calls ride on the assistant message as ``tool_calls``, with ``function.arguments`` a JSON *string*; it is
  parsed here, and kept verbatim in ``ToolCall.raw_arguments`` (``arguments`` is ``None`` when the text is
  not a JSON object, so the loop can tell the model instead of crashing).
- Results are one ``role: "tool"`` message per call, paired by ``tool_call_id``. Consecutive tool messages
  become one neutral ``tool`` message, and back. There is no error flag: an error result's content is
  prefixed with ``"Error: "`` (reading it back does not guess ``is_error``).
- The system prompt is an ordinary ``system`` (or ``developer``) message in the list.
- ``finish_reason``: stop, tool_calls, length, content_filter, function_call. A message with a
  ``refusal`` reads as stop reason ``refusal``.

Neutral ``input_tokens`` excludes cache reads (as Anthropic counts); ``prompt_tokens`` = input + cached.
"""

from __future__ import annotations

import time
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
    stop_to_wire,
    text,
    unstash,
    with_fields,
)

NAME = "openai-chat"

FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
    "function_call": "tool_use",
}
FINISH_BACK: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",  # OpenAI says "stop" for a matched stop sequence too
    "refusal": "stop",  # the refusal text travels in message.refusal
    "pause_turn": "stop",
    "content_filter": "content_filter",
    "other": "stop",
}
_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "name"})
_TOOL_MESSAGE_KEYS = frozenset({"role", "tool_call_id", "content"})
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
_CALL_KEYS = frozenset({"id", "type", "function"})
_BODY_KEYS = frozenset(
    {"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens", "temperature", "stop"}
)
_ABSENT = object()

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    fn: Json = {"name": spec.name}
    if spec.description:
        fn["description"] = spec.description
    if kept.get("shape") != "absent":
        fn["parameters"] = spec.parameters
    if spec.strict is not None:
        fn["strict"] = spec.strict
    return {"type": "function", "function": with_fields(fn, kept)}


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Function tools as ToolSpecs; any other tool kind raises (``request_from_wire`` keeps those)."""
    return only_specs(_split_tools(items, "tools"), "function")


def _split_tools(items: object, path: str) -> tuple[list[ToolSpec], list[Json]]:
    specs: list[ToolSpec] = []
    others: list[Json] = []
    for i, raw in enumerate(seq(items, path)):
        item = obj(raw, f"{path}[{i}]")
        if item.get("type") != "function" or item.keys() != {"type", "function"}:
            others.append(item)  # hosted or custom tools travel verbatim in Request.extra_tools
            continue
        where = f"{path}[{i}].function"
        fn = obj(item["function"], where)
        params = fn.get("parameters")
        specs.append(
            ToolSpec(
                name=text(fn.get("name"), f"{where}.name"),
                description=text(fn.get("description", ""), f"{where}.description"),
                parameters=obj(params, f"{where}.parameters") if params is not None else {"type": "object"},
                strict=fn.get("strict"),
                extra=stash(NAME, leftover(fn, _FUNCTION_KEYS), "absent" if params is None else None),
            )
        )
    return specs, others


# --- messages ---------------------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    out: list[Json] = []
    for message in messages:
        out.extend(_encoded(message))
    return out


def _encode(message: Message) -> list[Json]:
    if message.role != "tool":
        return [_message_to_wire(message)]
    out: list[Json] = []
    _tool_message_to_wire(message, out)
    return out


_encoded = MessageMemo(_encode)  # a loop resends its whole history: encode each message once


def _message_to_wire(message: Message) -> Json:
    kept = unstash(message.extra, NAME)
    parts = message.parts
    calls = [p for p in parts if type(p) is ToolCall]
    if calls or any(type(p) is ProviderPart for p in parts):
        # Content holds what is left once the calls, and other formats' blocks (thinking...), are taken out.
        parts = tuple(p for p in parts if type(p) is not ToolCall and _ours(p))
    out: Json = {"role": message.role}
    content = _content_to_wire(parts, kept, message.role)
    if content is not _ABSENT:
        out["content"] = content
    if message.name is not None:
        out["name"] = message.name
    if calls:
        part_kept = kept.get("parts", EMPTY)
        out["tool_calls"] = [_call_to_wire(c, part_kept.get(str(len(parts) + j))) for j, c in enumerate(calls)]
    if kept:
        fields = kept.get("fields")
        if fields:
            out = {**fields, **out}
            if message.role == "system" and fields.get("role") == "developer":
                out["role"] = "developer"
    return out


def _ours(part: Part) -> bool:
    return type(part) is not ProviderPart or part.format == NAME


def _call_to_wire(call: ToolCall, kept: Json | None) -> Json:
    out: Json = {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": dump_arguments(call.arguments, call.raw_arguments)},
    }
    return {**kept, **out} if kept else out


def _content_to_wire(parts: Sequence[Part], kept: Mapping[str, Any], role: str) -> Any:
    shape = kept.get("shape") if kept else None
    if not parts:
        if shape == "list":
            return []
        if shape == "absent":
            return _ABSENT
        if shape == "":
            return ""
        return None if role == "assistant" else ""
    if shape is None and len(parts) == 1 and type(parts[0]) is Text:
        return parts[0].text
    part_kept = kept.get("parts", EMPTY) if kept else EMPTY
    out: list[Json] = []
    for i, part in enumerate(parts):
        wire = _part_to_wire(part, part_kept.get(str(i)))
        if wire is not None:
            out.append(wire)
    return out


def _part_to_wire(part: Part, kept: Json | None) -> Json | None:
    if type(part) is Text:
        block: Json = {"type": "text", "text": part.text}
        return {**kept, **block} if kept else block
    if type(part) is Image:
        url = part.url if part.data is None else f"data:{part.media_type};base64,{part.data}"
        inner: Json = {"url": url}
        return {"type": "image_url", "image_url": {**kept, **inner} if kept else inner}
    if type(part) is ProviderPart:
        # Another format's private block (an Anthropic thinking block...) has no meaning here.
        return dict(part.data) if part.format == NAME else None
    raise FormatError(f"a {part.kind} part cannot appear in a message's content")


def _tool_message_to_wire(message: Message, out: list[Json]) -> None:
    part_kept = unstash(message.extra, NAME).get("parts", EMPTY)
    trailing: list[Part] = []
    for i, part in enumerate(message.parts):
        if type(part) is not ToolResult:
            trailing.append(part)
            continue
        kept = part_kept.get(str(i), EMPTY)
        content: Any = _result_content(part, kept)
        wire: Json = {"role": "tool", "tool_call_id": part.call_id, "content": content}
        out.append(with_fields(wire, kept))
    if trailing:
        # Text sent next to results (Anthropic allows it) becomes the user turn that follows them.
        out.append(_message_to_wire(Message(role="user", parts=tuple(trailing))))


def _result_content(result: ToolResult, kept: Mapping[str, Any]) -> Any:
    content = result.content
    if isinstance(content, str):
        return ERROR_PREFIX + content if result.is_error else content
    wire = _content_to_wire(content, {"shape": "list", **kept}, "tool")
    if result.is_error:
        wire.insert(0, {"type": "text", "text": ERROR_PREFIX})
    return wire


def messages_from_wire(items: object, path: str = "messages") -> list[Message]:
    out: list[Message] = []
    results: list[Part] = []
    results_kept: dict[str, Json] = {}
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        data = obj(raw, where)
        role = data.get("role")
        if role == "tool":
            result, kept = _result_from_wire(data, where)
            if kept:
                results_kept[str(len(results))] = kept
            results.append(result)
            continue
        if results:
            out.append(Message(role="tool", parts=tuple(results), extra=stash(NAME, None, None, results_kept)))
            results, results_kept = [], {}
        out.append(_message_from_wire(data, role, where))
    if results:
        out.append(Message(role="tool", parts=tuple(results), extra=stash(NAME, None, None, results_kept)))
    return out


def _message_from_wire(data: Json, role: object, path: str) -> Message:
    neutral = _ROLES.get(role) if isinstance(role, str) else None
    if neutral is None:
        raise FormatError(f"unknown role {role!r}; expected system, developer, user, assistant or tool", path)
    content = data.get("content", _ABSENT)
    parts, part_kept, shape = _content_from_wire(content, f"{path}.content")
    calls = data.get("tool_calls")
    if calls:
        for j, raw in enumerate(seq(calls, f"{path}.tool_calls")):
            call, kept = _call_from_wire(raw, f"{path}.tool_calls[{j}]")
            if kept:
                part_kept[str(len(parts))] = kept
            parts.append(call)
    if neutral == "assistant" and shape == "null":
        shape = None  # null is how an assistant says "no text"
    fields = leftover(data, _MESSAGE_KEYS) if len(data) > 2 or role == "developer" else None
    if role == "developer":
        fields = {**(fields or {}), "role": "developer"}
    name = data.get("name")
    return Message(
        role=neutral,  # type: ignore[arg-type]  # _ROLES values are neutral roles
        parts=tuple(parts),
        name=text(name, f"{path}.name") if name is not None else None,
        extra=stash(NAME, fields, shape, part_kept) if fields or shape is not None or part_kept else EMPTY,
    )


def _content_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json], str | None]:
    """Parts, per-part stash and content shape (None when the default spelling gives it back)."""
    if isinstance(content, str):
        return ([Text(text=content)], {}, None) if content else ([], {}, "")
    if content is _ABSENT:
        return [], {}, "absent"
    if content is None:
        return [], {}, "null"
    parts: list[Part] = []
    kept: dict[str, Json] = {}
    for i, raw in enumerate(seq(content, path)):
        block = obj(raw, f"{path}[{i}]")
        kind = block.get("type")
        if kind == "text":
            parts.append(Text(text=text(block.get("text"), f"{path}[{i}].text")))
            rest = leftover(block, frozenset({"type", "text"})) if len(block) > 2 else None
        elif kind == "image_url" and block.keys() == {"type", "image_url"}:
            image = obj(block["image_url"], f"{path}[{i}].image_url")
            parts.append(image_from_url(text(image.get("url"), f"{path}[{i}].image_url.url")))
            rest = leftover(image, frozenset({"url"})) if len(image) > 1 else None
        else:
            parts.append(ProviderPart(format=NAME, data=block))  # audio, files, refusal parts...
            rest = None
        if rest:
            kept[str(i)] = rest
    return parts, kept, "list"


def _call_from_wire(raw: object, path: str) -> tuple[ToolCall, Json | None]:
    data = obj(raw, path)
    fn = obj(data.get("function"), f"{path}.function")
    arguments = text(fn.get("arguments"), f"{path}.function.arguments")
    call = ToolCall(
        id=text(data.get("id"), f"{path}.id"),
        name=text(fn.get("name"), f"{path}.function.name"),
        arguments=parse_arguments(arguments),
        raw_arguments=arguments,
    )
    return call, (leftover(data, _CALL_KEYS) or None) if len(data) > 3 else None


def _result_from_wire(data: Json, path: str) -> tuple[ToolResult, Json]:
    content = data.get("content")
    kept: Json = {}
    if len(data) > 3:
        kept["fields"] = leftover(data, _TOOL_MESSAGE_KEYS)
    result_content: str | tuple[Text | Image, ...]
    if isinstance(content, str):
        result_content = content
    else:
        parts, part_kept, _ = _content_from_wire(content, f"{path}.content")
        for i, part in enumerate(parts):
            if type(part) is ProviderPart:
                raise FormatError("a tool message's content parts must be text or images", f"{path}.content[{i}]")
        result_content = tuple(parts)  # type: ignore[arg-type]  # checked just above
        if part_kept:
            kept["parts"] = part_kept
    name = data.get("name")  # some compatible servers send it; it also stays in the stash
    result = ToolResult(
        call_id=text(data.get("tool_call_id"), f"{path}.tool_call_id"),
        content=result_content,
        name=name if isinstance(name, str) else None,
    )
    return result, kept


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/chat/completions``."""
    body: Json = {"model": request.model, "messages": messages_to_wire(request.messages)}
    tools = [*tools_to_wire(request.tools), *render_server_tools(request.server_tools, NAME), *request.extra_tools]
    if tools:
        body["tools"] = tools
    settings = request.settings
    if settings.tool_choice is not None:
        choice = settings.tool_choice
        body["tool_choice"] = (
            {"type": "function", "function": {"name": choice.name}} if isinstance(choice, UseTool) else choice
        )
    if settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    # max_tokens, not max_completion_tokens: every compatible server reads it; reasoning models that
    # insist on max_completion_tokens get it through Settings.extra.
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.stop:
        body["stop"] = list(settings.stop)
    if settings.extra:
        body.update(settings.extra)
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = _split_tools(data.get("tools") or [], "tools")
    extra = leftover(data, _BODY_KEYS)
    choice = _tool_choice_from_wire(data.get("tool_choice"))
    if choice is None and data.get("tool_choice") is not None:
        extra["tool_choice"] = data["tool_choice"]  # allowed_tools, custom... sent back verbatim
    stop = data.get("stop")
    settings = Settings(
        max_tokens=data.get("max_tokens"),
        temperature=data.get("temperature"),
        tool_choice=choice,
        parallel_tool_calls=data.get("parallel_tool_calls"),
        stop=(stop,) if isinstance(stop, str) else tuple(seq(stop, "stop")) if stop is not None else (),
        extra=extra,
    )
    return Request(
        model=text(data.get("model"), "model"),
        messages=tuple(messages_from_wire(data.get("messages"), "messages")),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
    )


def _tool_choice_from_wire(choice: object) -> ToolChoice | None:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function" and choice.keys() == {"type", "function"}:
        fn = choice["function"]
        if isinstance(fn, dict) and fn.keys() == {"name"} and isinstance(fn["name"], str):
            return UseTool(fn["name"])
    return None


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A full ``chat.completion`` object."""
    kept = unstash(response.extra, NAME)
    message = _message_to_wire(response.message)
    choice: Json = {
        **kept.get("choice", {"index": 0}),
        "message": message,
        "finish_reason": stop_to_wire(response, FINISH, FINISH_BACK),
    }
    out: Json = {
        "object": "chat.completion",
        "created": int(time.time()),
        **kept.get("fields", EMPTY),
        "id": response.id,
        "model": response.model,
        "choices": [choice, *kept.get("more_choices", ())],
    }
    if not kept.get("no_usage"):
        usage = response.usage
        prompt = usage.input_tokens + usage.cache_read_tokens
        wire: Json = {
            **kept.get("usage", EMPTY),
            "prompt_tokens": prompt,
            "completion_tokens": usage.output_tokens,
            "total_tokens": prompt + usage.output_tokens,
        }
        if usage.cache_read_tokens and "prompt_tokens_details" not in wire:
            wire["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
        out["usage"] = wire
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A ``chat.completion`` dict, or the SDK's ``ChatCompletion`` object, as a ModelResponse."""
    body = obj(data, "response")
    choices = seq(body.get("choices"), "choices")
    if not choices:
        raise FormatError("the response has no choices", "choices")
    choice = obj(choices[0], "choices[0]")
    wire_message = obj(choice.get("message"), "choices[0].message")
    message = _message_from_wire(wire_message, "assistant", "choices[0].message")
    raw = choice.get("finish_reason")
    stop: StopReason = FINISH.get(raw, "other") if isinstance(raw, str) else "other"
    if wire_message.get("refusal"):
        stop = "refusal"
    elif stop == "end_turn" and message.tool_calls:
        stop = "tool_use"  # some compatible servers say "stop" next to tool calls
    kept: Json = {"fields": leftover(body, frozenset({"id", "model", "choices", "usage"}))}
    kept["choice"] = leftover(choice, frozenset({"message", "finish_reason"}))
    if len(choices) > 1:
        kept["more_choices"] = choices[1:]
    wire_usage = body.get("usage")
    if wire_usage is None:
        kept["no_usage"] = True
        usage = Usage()
    else:
        wire_usage = obj(wire_usage, "usage")
        details = wire_usage.get("prompt_tokens_details") or EMPTY
        cached = details.get("cached_tokens") or 0
        usage = Usage(
            input_tokens=(wire_usage.get("prompt_tokens") or 0) - cached,
            output_tokens=wire_usage.get("completion_tokens") or 0,
            cache_read_tokens=cached,
        )
        kept["usage"] = leftover(wire_usage, frozenset({"prompt_tokens", "completion_tokens", "total_tokens"}))
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=usage,
        model=text(body.get("model", ""), "model"),
        id=text(body.get("id", ""), "id"),
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )
