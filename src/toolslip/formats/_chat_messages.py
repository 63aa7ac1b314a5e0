"""Chat Completions messages <-> neutral messages (the message half of ``openai_chat``).

Consecutive ``role: "tool"`` messages form one neutral ``tool`` message, and back; ``content`` keeps its
spelling (string, list, ``null``, absent) in the stash under ``"shape"`` when the default would differ.

An assistant message's parts come in wire order: its reasoning (``reasoning_content``, ``reasoning`` or
OpenRouter's ``reasoning_details``), its content, its ``refusal`` (a text part flagged in the stash), then
its ``tool_calls``. The stash says which reasoning field was used (``"reasoning"``), keeps each
``reasoning_details`` entry as it was (``"detail"``), and notes ``tool_calls: []`` (``"calls"``).

Writing and reading stay in one module (about 480 lines) because each writer mirrors its reader field by
field, and the pair, read side by side, is what keeps a round trip the identity.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.errors import FormatError
from ..core.messages import File, Image, Message, Part, ProviderPart, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._memo import HistoryMemo
from ._wire import (
    CHAT_FAMILY,
    EMPTY,
    OPENAI_FORMATS,
    Json,
    dump_arguments,
    image_from_url,
    image_to_url,
    leftover,
    need,
    obj,
    openai_file_from_wire,
    openai_file_to_wire,
    parse_arguments,
    seq,
    split_error_mark,
    stash,
    text,
    unread_keys,
    unstash,
    with_error_mark,
    with_fields,
)

NAME = "openai-chat"

_ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}
_REASONING_FIELDS = ("reasoning_content", "reasoning")
_REASONING_KEYS_ORDER = ("reasoning_details", *_REASONING_FIELDS)
_REASONING_KEYS = frozenset(_REASONING_KEYS_ORDER)
_DETAIL_KEYS = frozenset({"type", "text", "summary", "data", "signature"})
"""The keys of a ``reasoning_details`` entry that a Reasoning part holds."""
_MESSAGE_KEYS = frozenset({"role", "content", "tool_calls", "name", "refusal", *_REASONING_KEYS})
_TOOL_MESSAGE_KEYS = frozenset({"role", "tool_call_id", "content"})
_CALL_KEYS = frozenset({"id", "type", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})
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
    part_kept: Mapping[str, Any] = kept.get("parts", EMPTY) if kept else EMPTY
    content_parts: list[tuple[Part, Json | None]] = []
    calls: list[Json] = []
    reasoning: list[tuple[Reasoning, Json | None]] = []
    refusal: str | None = None
    for i, part in enumerate(message.parts):
        mine = part_kept.get(str(i)) if part_kept else None
        kind = type(part)
        if kind is ToolCall:
            calls.append(_call_to_wire(part, mine))  # type: ignore[arg-type]  # kind is ToolCall
        elif kind is Reasoning:
            if part.source in CHAT_FAMILY:  # type: ignore[union-attr]  # kind is Reasoning
                reasoning.append((part, mine))  # type: ignore[arg-type]  # convert translates other reasoning
        elif kind is Text and mine and mine.get("refusal"):
            refusal = part.text  # type: ignore[union-attr]  # kind is Text
        elif _ours(part):
            content_parts.append((part, mine))
    out: Json = {"role": message.role}
    content = _content_to_wire(content_parts, kept, message.role)
    if content is not _ABSENT:
        out["content"] = content
    if message.name is not None:
        out["name"] = message.name
    if refusal is not None:
        out["refusal"] = refusal
    if reasoning:
        _reasoning_to_wire(reasoning, kept.get("reasoning"), out)
    if calls or kept.get("calls") == "empty":
        out["tool_calls"] = calls
    out = with_fields(out, kept)
    if message.role == "system" and kept.get("fields", EMPTY).get("role") == "developer":
        out["role"] = "developer"
    return out


def _ours(part: Part) -> bool:
    kind = type(part)
    if kind is ProviderPart:
        return part.format == NAME  # type: ignore[union-attr]  # another format's block means nothing here
    if kind is File:
        return _file_fits(part)  # type: ignore[arg-type]  # kind is File
    return True


def _file_fits(file: File) -> bool:
    """Chat takes files inline or by an OpenAI file id, not by URL."""
    return file.data is not None or (file.file_id is not None and file.source in OPENAI_FORMATS)


def _reasoning_to_wire(parts: list[tuple[Reasoning, Json | None]], field: object, out: Json) -> None:
    # Only OpenRouter's details can say that a text is a summary of the reasoning, not the reasoning.
    if field == "reasoning_details" or (field is None and any(part.summary for part, _ in parts)):
        out["reasoning_details"] = [_detail_to_wire(part, mine) for part, mine in parts]
        return
    # DeepSeek and vLLM read reasoning back as reasoning_content; OpenRouter and Ollama as reasoning.
    key = field if field in _REASONING_FIELDS else "reasoning_content"
    out[str(key)] = "\n\n".join(part.text for part, _ in parts)


def _detail_to_wire(part: Reasoning, kept: Json | None) -> Json:
    """One ``reasoning_details`` entry: the one read, with the part's values in its keys (a key the entry did
    not have is added only for a value, so an identity write adds no ``"text": ""``)."""
    if kept and "detail" in kept:
        detail: Json = dict(kept["detail"])
    else:
        detail = {"type": "reasoning.summary" if part.summary else "reasoning.text"}
    kind = detail.get("type")
    values: Json
    if kind == "reasoning.encrypted":
        values = {"data": part.encrypted}
    elif kind == "reasoning.summary":
        values = {"summary": part.text}
    else:
        values = {"text": part.text, "signature": part.signature}
    for key, value in values.items():
        if key in detail or value:
            detail[key] = value
    return detail


def _call_to_wire(call: ToolCall, kept: Json | None) -> Json:
    fn: Json = {"name": call.name}
    shape = kept.get("shape") if kept else None
    if shape == "object-arguments" and call.raw_arguments is None and call.arguments is not None:
        fn["arguments"] = dict(call.arguments)  # as the provider sent it
    elif shape == "null-arguments" and call.raw_arguments is None and not call.arguments:
        fn["arguments"] = None
    elif not (shape == "no-arguments" and call.raw_arguments is None and not call.arguments):
        fn["arguments"] = dump_arguments(call.arguments, call.raw_arguments)
    if kept and kept.get("function"):
        fn = {**kept["function"], **fn}
    out: Json = {"id": call.id, "type": "function", "function": fn}
    if kept and kept.get("no_type"):
        del out["type"]  # Mistral leaves it out
    return {**kept["fields"], **out} if kept and kept.get("fields") else out


def _content_to_wire(parts: Sequence[tuple[Part, Json | None]], kept: Mapping[str, Any], role: str) -> Any:
    shape = kept.get("shape") if kept else None
    if not parts:
        if shape == "list":
            return []
        if shape == "absent":
            return _ABSENT
        if shape == "":
            return ""
        return None if role == "assistant" else ""
    if shape is None and len(parts) == 1 and type(parts[0][0]) is Text:
        return parts[0][0].text
    return [_part_to_wire(part, mine) for part, mine in parts]


def _part_to_wire(part: Part, kept: Json | None) -> Json:
    kind = type(part)
    if kind is Text:
        block: Json = {"type": "text", "text": part.text}  # type: ignore[union-attr]  # kind is Text
        return {**kept, **block} if kept else block
    if kind is Image:
        inner: Json = {"url": image_to_url(part)}  # type: ignore[arg-type]  # kind is Image
        if not kept:
            return {"type": "image_url", "image_url": inner}
        kept = dict(kept)
        beside = kept.pop("block", EMPTY)
        return {**beside, "type": "image_url", "image_url": {**kept, **inner}}
    if kind is File:
        return {"type": "file", "file": openai_file_to_wire(part)}  # type: ignore[arg-type]  # kind is File
    if isinstance(part, ProviderPart):
        return dict(part.data)  # audio, refusal parts... of this format
    raise FormatError(f"a {part.kind} part cannot appear in a message's content")


def _toolmessage_to_wire(message: Message, out: list[Json]) -> None:
    part_kept = unstash(message.extra, NAME).get("parts", EMPTY)
    trailing: list[Part] = []
    for i, part in enumerate(message.parts):
        if type(part) is not ToolResult:
            trailing.append(part)
            continue
        kept = part_kept.get(str(i), EMPTY) if part_kept else EMPTY
        wire: Json = {"role": "tool", "tool_call_id": part.call_id, "content": _result_content(part, kept)}
        out.append(with_fields(wire, kept) if kept else wire)
    if trailing:
        # Text sent next to results (Anthropic allows it) becomes the user turn that follows them.
        out.append(message_to_wire(Message(role="user", parts=tuple(trailing))))


def _result_content(result: ToolResult, kept: Mapping[str, Any]) -> Any:
    content = result.content
    if isinstance(content, str):
        return with_error_mark(content, "text") if result.is_error else content
    if kept.get("shape") == "null" and not content and not result.is_error:
        return None
    part_kept = kept.get("parts", EMPTY)
    parts = [(p, part_kept.get(str(i))) for i, p in enumerate(content) if _ours(p)]
    wire = _content_to_wire(parts, {"shape": "list"}, "tool")
    return with_error_mark(wire, "text") if result.is_error else wire


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
        legacy = "; a 'function' message is June-2023 function calling: read it as openai-functions"
        hint = legacy if role == "function" else ""
        raise FormatError(f"unknown role {role!r}; expected system, developer, user, assistant or tool{hint}", path)
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    kept: Json = {}
    if not _REASONING_KEYS.isdisjoint(data):  # the guards here and below skip calls a plain message never needs
        _reasoning_from_wire(data, path, parts, part_kept, kept)
    content = data.get("content", _ABSENT)
    shape: str | None
    if type(content) is str and content:
        parts.append(Text(text=content))
        shape = None
    elif content is None:
        shape = "null"
    else:
        start = len(parts)
        content_parts, content_kept, shape = _content_from_wire(content, path, "content")
        parts += content_parts
        if content_kept:
            part_kept.update({str(start + int(k)): v for k, v in content_kept.items()})
    refusal = data.get("refusal")
    if isinstance(refusal, str):
        part_kept[str(len(parts))] = {"refusal": True}
        parts.append(Text(text=refusal))
    calls = data.get("tool_calls")
    if calls:
        _calls_from_wire(calls, path, parts, part_kept)
    elif isinstance(calls, list):
        kept["calls"] = "empty"
    if neutral == "assistant" and shape == "null":
        shape = None  # null is how an assistant says "no text"
    fields = _unconsumed(data, kept.get("reasoning"))
    # OpenRouter's plain reasoning copy too: no other format takes it; Mistral's prefix: false is its default.
    unread = [k for k in unread_keys(fields) if not (k == "prefix" and fields[k] is False)]
    if part_kept:
        unread += _unread_parts(parts, part_kept)
    if role == "developer":
        fields["role"] = "developer"
    name = data.get("name")
    extra = stash(NAME, fields, shape, part_kept, unread)
    if kept:
        extra = {NAME: {**extra.get(NAME, EMPTY), **kept}}
    return Message(
        role=neutral,  # type: ignore[arg-type]  # _ROLES values are neutral roles
        parts=tuple(parts),
        name=text(name, f"{path}.name") if name is not None else None,
        extra=extra,
    )


def _calls_from_wire(calls: object, path: str, parts: list[Part], part_kept: dict[str, Json]) -> None:
    for j, raw in enumerate(calls if type(calls) is list else seq(calls, f"{path}.tool_calls")):
        call, call_kept = call_from_wire(raw, path, j)
        if call_kept:
            part_kept[str(len(parts))] = call_kept
        parts.append(call)


def _unconsumed(data: Json, reasoning_field: object) -> Json:
    """The message's fields read into no part, kept to go back as they came.

    Besides unknown keys: null names, refusals and tool calls (``tool_calls: []`` is noted apart), empty reasoning
    fields, and OpenRouter's plain ``reasoning`` copy when its ``reasoning_details`` were read.
    """
    fields = leftover(data, _MESSAGE_KEYS)
    if "refusal" in data and not data["refusal"]:
        fields["refusal"] = data["refusal"]
    if "name" in data and data["name"] is None:
        fields["name"] = None  # some clients send name: null; no participant name, written back as it came
    if "tool_calls" in data and not data["tool_calls"] and type(data["tool_calls"]) is not list:
        fields["tool_calls"] = data["tool_calls"]
    if _REASONING_KEYS.isdisjoint(data):
        return fields
    for key in _REASONING_KEYS_ORDER:
        if key in data and not data[key]:
            fields[key] = data[key]
        elif key in _REASONING_FIELDS and reasoning_field == "reasoning_details" and data.get(key):
            fields[key] = data[key]
    return fields


def _unread_parts(parts: list[Part], part_kept: dict[str, Json]) -> list[str]:
    """Kept part fields that carry content: a text part's annotations, a call's extra keys..."""
    unread: list[str] = []
    for key, value in part_kept.items():
        part = parts[int(key)]
        if type(part) is ToolCall:
            value = {**value.get("fields", EMPTY), **value.get("function", EMPTY)}
        elif type(part) is Reasoning:  # a reasoning_details entry's keys with no neutral slot (id, format...)
            value = leftover(value.get("detail", EMPTY), _DETAIL_KEYS)
        elif value.get("refusal"):
            continue
        elif "block" in value:  # an image part's keys beside image_url count as its own
            value = {**leftover(value, frozenset({"block"})), **value["block"]}
        unread += unread_keys(value, f"parts[{key}].")
    return unread


def _reasoning_from_wire(data: Json, path: str, parts: list[Part], part_kept: dict[str, Json], kept: Json) -> None:
    """The message's reasoning fields as Reasoning parts (OpenRouter's details win over its plain copy)."""
    details = data.get("reasoning_details")
    if isinstance(details, list) and details:
        kept["reasoning"] = "reasoning_details"
        for j, raw in enumerate(details):
            detail = obj(raw, f"{path}.reasoning_details[{j}]")
            part_kept[str(len(parts))] = {"detail": detail}
            encrypted = detail.get("data") if detail.get("type") == "reasoning.encrypted" else None
            summary = detail.get("type") == "reasoning.summary"
            words = detail.get("summary") if summary else detail.get("text")
            signature = detail.get("signature")
            parts.append(
                Reasoning(
                    text=words if isinstance(words, str) else "",
                    summary=summary,
                    signature=signature if isinstance(signature, str) else None,
                    encrypted=encrypted if isinstance(encrypted, str) else None,
                    source=NAME,
                )
            )
        return
    for field in _REASONING_FIELDS:
        value = data.get(field)
        if isinstance(value, str) and value:
            kept["reasoning"] = field
            parts.append(Reasoning(text=value, source=NAME))
            return


def _content_from_wire(content: object, parent: str, key: str) -> tuple[list[Part], dict[str, Json], str | None]:
    """Parts, per-part stash and content shape (None when the default spelling gives it back).

    ``content`` is ``parent``'s field ``key``; the path is spelled out only for a list, where a part may be wrong.
    """
    if isinstance(content, str):
        return ([Text(text=content)], {}, None) if content else ([], {}, "")
    if content is _ABSENT:
        return [], {}, "absent"
    if content is None:
        return [], {}, "null"
    path = f"{parent}.{key}"
    parts: list[Part] = []
    kept: dict[str, Json] = {}
    for i, raw in enumerate(seq(content, path)):
        block = obj(raw, f"{path}[{i}]")
        kind = block.get("type")
        rest: Json | None = None
        if kind == "text":
            parts.append(Text(text=need(block, "text", f"{path}[{i}]")))
            rest = leftover(block, frozenset({"type", "text"})) if len(block) > 2 else None
        elif kind == "image_url" and isinstance(block.get("image_url"), dict) and "block" not in block["image_url"]:
            image = obj(block["image_url"], f"{path}[{i}].image_url")
            parts.append(image_from_url(need(image, "url", f"{path}[{i}].image_url")))
            rest = leftover(image, frozenset({"url"})) if len(image) > 1 else None
            if len(block) > 2:  # keys beside image_url ("text": null, cache_control): kept to go back as they came
                rest = {**(rest or {}), "block": leftover(block, frozenset({"type", "image_url"}))}
        elif (
            kind == "file"
            and block.keys() == {"type", "file"}
            and isinstance(block["file"], dict)
            and "file_url" not in block["file"]  # no such spelling in Chat
            and (file := openai_file_from_wire(block["file"], NAME))
        ):
            parts.append(file)
        else:
            parts.append(ProviderPart(format=NAME, data=block))  # audio, refusal parts...
        if rest:
            kept[str(i)] = rest
    return parts, kept, "list"


def call_from_wire(raw: object, parent: str, index: int | None = None) -> tuple[ToolCall, Json | None]:
    """One Chat tool call, at ``parent`` (or entry ``index`` of ``parent``'s ``tool_calls``), with its stash."""
    data = raw if type(raw) is dict else obj(raw, _call_path(parent, index))
    fn = data.get("function")
    if type(fn) is not dict:
        fn = obj(fn, f"{_call_path(parent, index)}.function")
    kept: Json = {}
    # Some providers leave `arguments` out of a call that takes none (or send null), some send an object.
    raw = fn.get("arguments")
    arguments = raw if isinstance(raw, str) else None
    if raw is None:
        kept["shape"] = "no-arguments" if "arguments" not in fn else "null-arguments"
    elif isinstance(raw, dict):
        kept["shape"] = "object-arguments"
    elif arguments is None:
        need(fn, "arguments", f"{_call_path(parent, index)}.function")  # raises: says what the arguments were
    if "type" not in data:
        kept["no_type"] = True
    if not data.keys() <= _CALL_KEYS:
        kept["fields"] = leftover(data, _CALL_KEYS)
    if not fn.keys() <= _FUNCTION_KEYS:
        kept["function"] = leftover(fn, _FUNCTION_KEYS)
    call_id, name = data.get("id"), fn.get("name")
    if type(call_id) is not str:
        call_id = need(data, "id", _call_path(parent, index))  # raises: says what the id was
    if type(name) is not str:
        name = need(fn, "name", f"{_call_path(parent, index)}.function")
    call = ToolCall(
        id=call_id,
        name=name,
        arguments=parse_arguments(arguments) if arguments is not None else raw if isinstance(raw, dict) else {},
        raw_arguments=arguments,
    )
    return call, kept or None


def _call_path(parent: str, index: int | None) -> str:
    return parent if index is None else f"{parent}.tool_calls[{index}]"


def _result_from_wire(data: Json, path: str) -> tuple[ToolResult, Json]:
    is_error, content = split_error_mark(data.get("content"), "text")
    kept: Json = {}
    if len(data) > 3:
        kept["fields"] = leftover(data, _TOOL_MESSAGE_KEYS)
    result_content: str | tuple[ResultPart, ...]
    if isinstance(content, str):
        result_content = content
    else:
        if content is None:
            kept["shape"] = "null"
        parts, part_kept, _ = _content_from_wire(content if content is not None else [], path, "content")
        for i, part in enumerate(parts):
            if type(part) is Reasoning or type(part) is ToolCall:  # pragma: no cover - content parts only
                raise FormatError(
                    "a tool message's content parts must be text, images or files", f"{path}.content[{i}]"
                )
        result_content = tuple(parts)  # type: ignore[arg-type]  # content parts are result parts
        if part_kept:
            kept["parts"] = part_kept
    name = data.get("name")  # some compatible servers send it; it also stays in the stash
    result = ToolResult(
        call_id=need(data, "tool_call_id", path),
        content=result_content,
        is_error=is_error,
        name=name if isinstance(name, str) else None,
    )
    return result, kept
