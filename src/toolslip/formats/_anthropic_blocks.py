"""Anthropic content blocks <-> neutral messages (the message half of ``anthropic``).

A user message holding ``tool_result`` blocks is a neutral ``tool`` message; system messages leave the
``messages`` array for the top-level ``system`` field. Blocks with no neutral part (thinking, server
tools, documents, anything new) become ``ProviderPart("anthropic", block)`` and go back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import FormatError
from ..messages import Image, Message, Part, ProviderPart, Text, ToolCall, ToolResult
from ._memo import HistoryMemo
from ._wire import EMPTY, Json, guess_media_type, leftover, obj, seq, stash, text, unstash, with_fields

NAME = "anthropic"

_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})
_USE_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``messages`` array; system messages are left out (see :func:`system_to_wire`)."""
    return _encoded(messages)


def history_to_wire(messages: Iterable[Message]) -> tuple[list[Json], tuple[Message, ...]]:
    """The ``messages`` array and the system messages that left it, in one pass over what is new."""
    return _encoded.encode(messages)


def _message_to_wire(message: Message) -> Json:
    kept = unstash(message.extra, NAME)
    parts = message.parts
    content: Any
    if len(parts) == 1 and type(parts[0]) is Text and not (kept and kept.get("shape") == "list"):
        content = parts[0].text
    elif not parts and kept.get("shape") == "":
        content = ""
    else:
        content = blocks_to_wire(parts, kept.get("parts", EMPTY) if kept else EMPTY)
    # Anthropic has no tool role: results go back inside a user message.
    out: Json = {"role": "assistant" if message.role == "assistant" else "user", "content": content}
    return with_fields(out, kept)


def _encode(message: Message) -> list[Json]:
    return [] if message.role == "system" else [_message_to_wire(message)]


_encoded = HistoryMemo(_encode, pick=lambda m: m.role == "system")  # a loop resends its history: encode what is new


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
        blocks.extend(blocks_to_wire(message.parts, unstash(message.extra, NAME).get("parts", EMPTY)))
    return blocks


def blocks_to_wire(parts: Sequence[Part], part_kept: Mapping[str, Any]) -> list[Json]:
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
            parts, part_kept = blocks_from_wire(content, f"{where}.content")
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
    parts, part_kept = blocks_from_wire(system, "system")
    return Message(role="system", parts=tuple(parts), extra=stash(NAME, None, "list", part_kept))


def blocks_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json]]:
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
        inner, inner_kept = blocks_from_wire(content, f"{path}.content")
        if inner_kept or any(type(p) not in (Text, Image) for p in inner):
            return None
        result_content = tuple(inner)  # type: ignore[arg-type]  # only Text and Image, checked above
    return ToolResult(
        call_id=text(block.get("tool_use_id"), f"{path}.tool_use_id"),
        content=result_content,
        is_error=block.get("is_error") is True,
    )
