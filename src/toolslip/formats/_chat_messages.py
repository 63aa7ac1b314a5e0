"""Chat Completions messages <-> neutral messages (the message half of ``openai_chat``).

Consecutive ``role: "tool"`` messages form one neutral ``tool`` message, and back; ``content`` keeps its
spelling (string, list, ``null``, absent) in the stash under ``"shape"`` when the default would differ.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..messages import Image, Message, Part, ProviderPart, Text, ToolCall, ToolResult
from ._memo import HistoryMemo
from ._wire import (
    EMPTY,
    ERROR_PREFIX,
    Json,
    dump_arguments,
    image_from_url,
    image_to_url,
    leftover,
    obj,
    parse_arguments,
    seq,
    stash,
    text,
    unstash,
    with_fields,
)

NAME = "openai-chat"

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "name"})
_TOOL_MESSAGE_KEYS = frozenset({"role", "tool_call_id", "content"})
_CALL_KEYS = frozenset({"id", "type", "function"})
_ABSENT = object()


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    return _encoded(messages)


def _encode(message: Message) -> list[Json]:
    if message.role != "tool":
        return [message_to_wire(message)]
    out: list[Json] = []
    _toolmessage_to_wire(message, out)
    return out


_encoded = HistoryMemo(_encode)  # a loop resends its whole history: encode only what is new


def message_to_wire(message: Message) -> Json:
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
    out = with_fields(out, kept)
    if message.role == "system" and kept.get("fields", EMPTY).get("role") == "developer":
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
        inner: Json = {"url": image_to_url(part)}
        return {"type": "image_url", "image_url": {**kept, **inner} if kept else inner}
    if type(part) is ProviderPart:
        # Another format's private block (an Anthropic thinking block...) has no meaning here.
        return dict(part.data) if part.format == NAME else None
    raise FormatError(f"a {part.kind} part cannot appear in a message's content")


def _toolmessage_to_wire(message: Message, out: list[Json]) -> None:
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
        out.append(message_to_wire(Message(role="user", parts=tuple(trailing))))


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
        out.append(message_from_wire(data, role, where))
    if results:
        out.append(Message(role="tool", parts=tuple(results), extra=stash(NAME, None, None, results_kept)))
    return out


def message_from_wire(data: Json, role: object, path: str) -> Message:
    neutral = _ROLES.get(role) if isinstance(role, str) else None
    if neutral is None:
        raise FormatError(f"unknown role {role!r}; expected system, developer, user, assistant or tool", path)
    content = data.get("content", _ABSENT)
    parts, part_kept, shape = _content_from_wire(content, f"{path}.content")
    calls = data.get("tool_calls")
    if calls:
        for j, raw in enumerate(seq(calls, f"{path}.tool_calls")):
            call, kept = call_from_wire(raw, f"{path}.tool_calls[{j}]")
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


def call_from_wire(raw: object, path: str) -> tuple[ToolCall, Json | None]:
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
