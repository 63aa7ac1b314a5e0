"""Responses API ``input`` / ``output`` items <-> neutral messages (the message half of ``openai_responses``).

Consecutive model-side items (assistant ``message``, ``function_call``, ``reasoning``, hosted-tool items)
form one neutral assistant message, consecutive ``function_call_output`` items one neutral ``tool``
message. Per-part stash: a text part that opened an assistant ``message`` item keeps the item's own
fields (``id``, ``status``...) under ``"item"`` and its number of content parts under ``"n"``, so the
items come back exactly as they were; a ``refusal`` content part is a text part flagged ``"refusal"``;
a ``reasoning`` item is a Reasoning part that keeps the whole item under ``"reasoning"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.errors import CannotExpress, FormatError
from ..core.messages import File, Image, Message, Part, ProviderPart, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._wire import (
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
    unread_keys,
    unstash,
    with_error_mark,
    with_fields,
)

NAME = "openai-responses"

_ROLES = {"system": "system", "developer": "system", "user": "user"}
_CALL_KEYS = frozenset({"type", "call_id", "name", "arguments"})
_OUTPUT_KEYS = frozenset({"type", "call_id", "output"})
_TYPE = frozenset({"type"})

# --- messages (input items) -------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``input`` item list."""
    out: list[Json] = []
    for message in messages:
        items_to_wire(message, out, full=False)
    return out


def items_to_wire(message: Message, out: list[Json], *, full: bool) -> None:
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
            mine = part_kept.get(str(i), EMPTY)
            output = _output_to_wire(result, mine.get("blocks", EMPTY))
            out.append(with_fields({"type": "function_call_output", "call_id": result.call_id, "output": output}, mine))
        if len(results) < len(parts):  # text sent next to results (Anthropic allows it): a user message
            rest = tuple(p for p in parts if type(p) is not ToolResult)
            out.append(_message_item(Message(role="user", parts=rest), EMPTY))
        return
    i = 0
    while i < len(parts):
        part, mine = parts[i], part_kept.get(str(i), EMPTY)
        kind = type(part)
        if kind is ToolCall:
            out.append(_call_to_wire(part, mine, full))  # type: ignore[arg-type]  # kind is ToolCall
        elif kind is Reasoning:
            if part.source == NAME:  # type: ignore[union-attr]  # convert translates other reasoning
                out.append(_reasoning_to_wire(part, mine, full, len(out)))  # type: ignore[arg-type]
        elif isinstance(part, ProviderPart) and "item" not in mine:
            if part.format == NAME:  # hosted-tool items
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


def _reasoning_to_wire(part: Reasoning, kept: Mapping[str, Any], full: bool, at: int) -> Json:
    item = kept.get("reasoning")
    if item is not None and _reasoning_of(item) == part:
        return dict(item)
    out: Json = {"type": "reasoning", "summary": []}
    if part.text and part.summary:
        out["summary"] = [{"type": "summary_text", "text": part.text}]
    elif part.text:  # the reasoning itself, as gpt-oss and other open models return it
        out["content"] = [{"type": "reasoning_text", "text": part.text}]
    if full:
        out = {"id": f"rs_{at}", **out}
    if part.encrypted is not None:
        out["encrypted_content"] = part.encrypted
    return out


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
        content = [_content_to_wire(p, kind, part_kept.get(str(j))) for j, p in enumerate(parts) if fits(p)]
    return {**fields, "role": fields.get("role", role), "content": content}


def fits(part: Part) -> bool:
    """Whether a content part has a spelling here (another provider's file id or block has none)."""
    kind = type(part)
    if kind is ProviderPart:
        return part.format == NAME  # type: ignore[union-attr]
    if kind is File:
        return part.file_id is None or part.source in OPENAI_FORMATS  # type: ignore[union-attr]
    return kind is not Reasoning


def _content_to_wire(part: Part, text_kind: str, kept: Json | None) -> Json:
    block: Json
    if type(part) is Text:
        block = {"type": text_kind, "text": part.text}
    elif type(part) is Image:
        block = {"type": "input_image", "image_url": image_to_url(part)}
        if kept is None:
            block["detail"] = "auto"
    elif type(part) is File:
        block = {"type": "input_file", **openai_file_to_wire(part)}
    elif type(part) is ProviderPart and part.format == NAME:
        block = dict(part.data)  # images by file_id...
    else:
        raise CannotExpress(f"a {part.kind} part cannot be message content in the Responses API")
    return {**kept, **block} if kept else block


def _assistant_item(
    parts: Sequence[Part], part_kept: Mapping[str, Any], start: int, mine: Mapping[str, Any], full: bool
) -> Json:
    content = []
    for j, p in enumerate(parts):
        kept = part_kept.get(str(start + j), EMPTY)
        if kept.get("refusal"):
            content.append({**kept.get("block", EMPTY), "type": "refusal", "refusal": p.text})  # type: ignore[union-attr]
        elif fits(p):
            content.append(_content_to_wire(p, "output_text", kept.get("block")))
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


def _output_to_wire(result: ToolResult, kept: Mapping[str, Json]) -> Any:
    content = result.content
    if isinstance(content, str):
        return with_error_mark(content, "input_text") if result.is_error else content
    blocks = [_content_to_wire(p, "input_text", kept.get(str(j))) for j, p in enumerate(content) if fits(p)]
    return with_error_mark(blocks, "input_text") if result.is_error else blocks


def messages_from_wire(items: object, path: str = "input") -> list[Message]:
    reader = _Reader()
    if isinstance(items, str):
        return [Message(role="user", parts=(Text(text=items),), extra=stash(NAME, None, "input"))]
    for i, raw in enumerate(seq(items, path)):
        reader.item(obj(raw, f"{path}[{i}]"), f"{path}[{i}]")
    reader.flush()
    return reader.out


def unread_parts(parts: Sequence[Part], part_kept: Mapping[str, Json]) -> list[str]:
    """Kept fields of the items and content parts that carry content (annotations, a call's namespace...)."""
    unread: list[str] = []
    for key, kept in part_kept.items():
        where = f"parts[{key}]."
        if type(parts[int(key)]) is ToolCall:
            unread += unread_keys(leftover(kept, frozenset({"id", "status"})), where)
        elif "block" in kept:
            unread += unread_keys(kept["block"], where)
    return unread


class _Reader:
    """Groups items into neutral messages: model-side items into one assistant message, outputs into one tool."""

    def __init__(self) -> None:
        self.out: list[Message] = []
        self.role: str | None = None
        self.parts: list[Part] = []
        self.kept: dict[str, Json] = {}

    def flush(self) -> None:
        if self.role is not None:
            extra = stash(NAME, None, None, self.kept, unread_parts(self.parts, self.kept))
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
            self.add("assistant", call_from_wire(item, path), leftover(item, _CALL_KEYS))
        elif kind == "function_call_output":
            is_error, content, blocks = _output_from_wire(item, path)
            result = ToolResult(call_id=need(item, "call_id", path), content=content, is_error=is_error)
            fields = leftover(item, _OUTPUT_KEYS)  # the item's id and status
            self.add(
                "tool", result, {**({"fields": fields} if fields else {}), **({"blocks": blocks} if blocks else {})}
            )
        elif (
            kind == "message" and item.get("role") == "assistant" and (item.get("content") or item.get("content") == "")
        ):
            self._assistant(item, path)
        elif kind == "message" and item.get("role") in _ROLES:
            self.flush()
            self.out.append(_message_from_wire(item, path))
        elif kind == "message" and item.get("role") != "assistant":
            raise FormatError(f"unknown role {item.get('role')!r}; expected system, developer, user or assistant", path)
        elif kind == "reasoning" and (reasoning := _reasoning_of(item)) is not None:
            self.add("assistant", reasoning, {"reasoning": item})
        else:  # hosted-tool calls, mcp items, item references, anything newer
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
            kind = block.get("type")
            part: Part = ProviderPart(format=NAME, data=block)
            rest: Json = {}
            flag: Json = {}
            if kind == "output_text":
                part = Text(text=need(block, "text", f"{path}.content[{j}]"))
                rest = leftover(block, frozenset({"type", "text"}))
            elif kind == "refusal" and isinstance(block.get("refusal"), str):
                part = Text(text=block["refusal"])
                rest, flag = leftover(block, frozenset({"type", "refusal"})), {"refusal": True}
            kept = {**(head if j == 0 else {}), **flag}
            if type(part) is Text and (j == 0 or rest):
                kept["block"] = rest
            self.add("assistant", part, kept or None)


def _reasoning_of(item: Mapping[str, Any]) -> Reasoning | None:
    """A reasoning item as a Reasoning part: its summaries (and any raw reasoning text) as one text.

    The text is a summary only when the item holds no raw reasoning (``content``) at all."""
    summary, content, encrypted = item.get("summary") or [], item.get("content") or [], item.get("encrypted_content")
    if not isinstance(summary, list) or not isinstance(content, list) or not isinstance(encrypted, str | None):
        return None
    texts = [s.get("text") for s in (*summary, *content) if isinstance(s, dict)]
    if not all(isinstance(t, str) for t in texts):
        return None
    text = "\n\n".join(texts)  # type: ignore[arg-type]  # all strs, checked above
    return Reasoning(text=text, summary=bool(summary) and not content, encrypted=encrypted, source=NAME)


def call_from_wire(item: Json, path: str) -> ToolCall:
    """A ``function_call`` item as a ToolCall (its other keys are the caller's to keep)."""
    arguments = need(item, "arguments", path)
    return ToolCall(
        id=need(item, "call_id", path),
        name=need(item, "name", path),
        arguments=parse_arguments(arguments),
        raw_arguments=arguments,
    )


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
        extra=stash(NAME, fields, "list", part_kept, unread_keys(fields)),
    )


def _content_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json]]:
    parts: list[Part] = []
    kept: dict[str, Json] = {}
    for j, raw in enumerate(seq(content, path)):
        block = obj(raw, f"{path}[{j}]")
        kind = block.get("type")
        rest: Json = {}
        if kind in ("input_text", "output_text"):
            parts.append(Text(text=need(block, "text", f"{path}[{j}]")))
            rest = leftover(block, frozenset({"type", "text"}))
        elif kind == "input_image" and isinstance(block.get("image_url"), str):
            parts.append(image_from_url(block["image_url"]))
            rest = leftover(block, frozenset({"type", "image_url"}))
        elif kind == "input_file" and (file := openai_file_from_wire(leftover(block, _TYPE), NAME)) is not None:
            parts.append(file)
        else:
            parts.append(ProviderPart(format=NAME, data=block))  # images by file_id, audio...
        if rest or kind == "input_image":
            kept[str(j)] = rest
    return parts, kept


def _output_from_wire(item: Json, path: str) -> tuple[bool, str | tuple[ResultPart, ...], dict[str, Json]]:
    """Whether an output carries toolslip's error mark, its content without the mark, and what its content
    parts keep to go back as they came (an image's ``detail``)."""
    is_error, output = split_error_mark(item.get("output"), "input_text")
    if isinstance(output, str):
        return is_error, output, {}
    parts, kept = _content_from_wire(output, f"{path}.output")
    return is_error, tuple(p for p in parts if type(p) is not Reasoning and type(p) is not ToolCall), kept  # type: ignore[misc]
