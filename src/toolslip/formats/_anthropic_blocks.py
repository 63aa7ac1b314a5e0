"""Anthropic content blocks <-> neutral messages (the message half of ``anthropic``).

A user message holding ``tool_result`` blocks is a neutral ``tool`` message. System messages before the
first turn go to the top-level ``system`` field; a system message later in the conversation (the API
takes ``role: "system"`` there too) stays where it is, so nothing is reordered. ``thinking`` and
``redacted_thinking`` blocks are neutral Reasoning parts (signature and data kept verbatim),
``document`` blocks with a base64, URL, file or plain-text source are File parts (plain text as its
UTF-8 bytes); blocks with no neutral part (server tools, search results, anything new) become
``ProviderPart("anthropic", block)`` and go back unchanged.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..core.errors import FormatError
from ..core.messages import File, Image, Message, Part, ProviderPart, Reasoning, ResultPart, Text, ToolCall, ToolResult
from ._memo import MessageMemo
from ._wire import (
    EMPTY,
    Json,
    guess_media_type,
    leftover,
    need,
    obj,
    seq,
    stash,
    unread_keys,
    unstash,
    with_fields,
)

NAME = "anthropic"

_TEXT_KEYS = frozenset({"type", "text"})
_IMAGE_KEYS = frozenset({"type", "source"})
_USE_KEYS = frozenset({"type", "id", "name", "input"})
_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
_REDACTED_KEYS = frozenset({"type", "data"})
_DOCUMENT_KEYS = frozenset({"type", "source", "title"})
_INNER = "~content"
"""Stash key of a tool_result holding the kept fields of its content blocks (never a wire key)."""
_DIRECT = {"type": "direct"}
"""The ``caller`` of a tool_use block the model made itself (not from code execution): no content."""


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``messages`` array; leading system messages are left out (see :func:`system_to_wire`)."""
    messages = list(messages)
    return [_encoded(m) for m in messages[_leading_systems(messages) :]]


def _leading_systems(messages: Sequence[Message]) -> int:
    n = 0
    while (
        n < len(messages) and messages[n].role == "system" and unstash(messages[n].extra, NAME).get("shape") != "inline"
    ):
        n += 1
    return n


def _message_to_wire(message: Message) -> Json:
    kept = unstash(message.extra, NAME)
    parts = message.parts
    content: Any
    shape = kept.get("shape") if kept else None
    if len(parts) == 1 and type(parts[0]) is Text and shape != "list":
        content = parts[0].text
    elif not parts and shape == "":
        content = ""
    else:
        content = blocks_to_wire(parts, kept.get("parts", EMPTY) if kept else EMPTY)
    # Anthropic has no tool role: results go back inside a user message.
    role = {"assistant": "assistant", "system": "system"}.get(message.role, "user")
    return with_fields({"role": role, "content": content}, kept)


_encoded = MessageMemo(_message_to_wire)  # a loop resends its whole history: encode each message once


def system_to_wire(messages: Iterable[Message]) -> str | list[Json] | None:
    """The top-level ``system`` value for the leading system messages (``None`` if there are none)."""
    messages = list(messages)
    systems = messages[: _leading_systems(messages)]
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
        rest = part_kept.get(str(i)) if part_kept else None
        if type(part) is ToolResult:
            inner = rest.get(_INNER) if rest else None
            block: Json | None = _result_to_wire(part, inner or EMPTY)
            if inner is not None:
                rest = leftover(rest, frozenset({_INNER}))  # type: ignore[arg-type]  # rest holds _INNER
        else:
            block = _block_to_wire(part)
        if block is None:
            continue
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
        return _result_to_wire(part, EMPTY)  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Image:
        return _image_to_wire(part)  # type: ignore[arg-type]  # kind is Image
    if kind is Reasoning:
        return reasoning_to_wire(part)  # type: ignore[arg-type]  # kind is Reasoning
    if kind is File:
        return file_to_wire(part)  # type: ignore[arg-type]  # kind is File
    provider: ProviderPart = part  # type: ignore[assignment]  # the one kind left
    # Another format's private block has no meaning here.
    return dict(provider.data) if provider.format == NAME else None


def reasoning_to_wire(reasoning: Reasoning) -> Json | None:
    """A thinking (or redacted thinking) block; ``None`` for reasoning Anthropic did not sign.

    The API accepts thinking blocks back only with its own signature, so another provider's reasoning
    has no spelling here (``toolslip.convert`` reports it).
    """
    if reasoning.source != NAME:
        return None
    if reasoning.encrypted is not None and not reasoning.text:
        return {"type": "redacted_thinking", "data": reasoning.encrypted}
    out: Json = {"type": "thinking", "thinking": reasoning.text}
    if reasoning.signature is not None:
        out["signature"] = reasoning.signature
    return out


def plain_text(file: File) -> str | None:
    """The text of an inline ``text/*`` file (plain, CSV, Markdown...), which Anthropic takes as a plain-text
    document (its source holds the text itself, not base64); ``None`` for any other file, or bytes that are
    not UTF-8."""
    if file.data is None or not file.media_type.startswith("text/"):
        return None
    try:
        return base64.b64decode(file.data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def file_to_wire(file: File) -> Json | None:
    """A document block; ``None`` when Anthropic cannot read it (another provider's file id)."""
    if (words := plain_text(file)) is not None:
        source: Json = {"type": "text", "media_type": "text/plain", "data": words}
    elif file.data is not None:
        source = {"type": "base64", "media_type": file.media_type, "data": file.data}
    elif file.url is not None:
        source = {"type": "url", "url": file.url}
    elif file.file_id is not None and file.source == NAME:
        source = {"type": "file", "file_id": file.file_id}
    else:
        return None
    out: Json = {"type": "document", "source": source}
    if file.name is not None:
        out["title"] = file.name
    return out


def _image_to_wire(image: Image) -> Json:
    if image.data is not None:
        source: Json = {"type": "base64", "media_type": image.media_type, "data": image.data}
    else:
        source = {"type": "url", "url": image.url}
    return {"type": "image", "source": source}


def _result_to_wire(result: ToolResult, inner_kept: Mapping[str, Any]) -> Json:
    out: Json = {"type": "tool_result", "tool_use_id": result.call_id}
    content = result.content
    if isinstance(content, str):
        if content:
            out["content"] = content
    else:
        out["content"] = blocks_to_wire(content, inner_kept)
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
        if role not in ("user", "assistant", "system"):
            raise FormatError(f"unknown role {role!r}; expected user, assistant or system", f"{where}.role")
        content = data.get("content")
        shape = None
        unread: list[str] = []
        if isinstance(content, str):
            parts: list[Part] = [Text(text=content)] if content else []
            part_kept: dict[str, Json] = {}
            shape = None if content else ""
        else:
            parts, part_kept = blocks_from_wire(content, f"{where}.content")
            if len(parts) == 1 and type(parts[0]) is Text:
                shape = "list"
            unread = unread_parts(parts, part_kept)
        neutral = role
        if role == "user" and any(type(p) is ToolResult for p in parts):
            neutral = "tool"
        elif role == "system":
            shape = "inline" if shape is None else shape  # stays in the conversation, where it was
        fields = leftover(data, frozenset({"role", "content"})) if len(data) > 2 else None
        unread += unread_keys(fields)
        out.append(
            Message(
                role=neutral,
                parts=tuple(parts),
                extra=stash(NAME, fields, shape, part_kept, unread)
                if fields or shape is not None or part_kept
                else EMPTY,
            )
        )
    return out


def unread_parts(parts: Sequence[Part], part_kept: Mapping[str, Json]) -> list[str]:
    """Kept block fields that carry content: citations, a code-execution caller, document context..."""
    unread: list[str] = []
    for key, rest in part_kept.items():
        part = parts[int(key)]
        if type(part) is ToolResult:
            if _INNER in rest and not isinstance(part.content, str):
                unread += [
                    f"parts[{key}].content{u.removeprefix('parts')}" for u in unread_parts(part.content, rest[_INNER])
                ]
            rest = leftover(rest, frozenset({"is_error", "content", _INNER}))
        if rest.get("caller") == _DIRECT:
            rest = leftover(rest, frozenset({"caller"}))
        unread += unread_keys(rest, f"parts[{key}].")
    return unread


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
        inner: Json = {}
        part, known = _block_from_wire(block, where, inner)
        if part is None:
            part = ProviderPart(format=NAME, data=block)  # server tools, search results, new kinds
        elif known is _RESULT_KEYS or not block.keys() <= known:
            rest = leftover(block, known)
            if block.get("is_error") is False:
                rest["is_error"] = False  # said explicitly; sent back the same way
            if "content" in block and block["content"] == "":
                rest["content"] = ""
            rest.update(inner)
            if rest:
                part_kept[str(i)] = rest
        parts.append(part)
    return parts, part_kept


def _block_from_wire(block: Json, where: str, inner: Json) -> tuple[Part | None, frozenset[str]]:
    """The neutral part of one block (``None``: no neutral kind) and the block keys it accounts for."""
    kind = block.get("type")
    if kind == "text":
        return Text(text=need(block, "text", where)), _TEXT_KEYS
    if kind == "tool_use":
        arguments = obj(block.get("input"), f"{where}.input")
        return ToolCall(id=need(block, "id", where), name=need(block, "name", where), arguments=arguments), _USE_KEYS
    if kind == "tool_result":
        return _result_from_wire(block, where, inner), _RESULT_KEYS
    if kind == "image":
        return _image_from_wire(block.get("source")), _IMAGE_KEYS
    if kind == "thinking" and isinstance(block.get("thinking"), str):
        signature = block.get("signature")
        part = Reasoning(
            text=block["thinking"], signature=signature if isinstance(signature, str) else None, source=NAME
        )
        # A null signature is not consumed, so it goes back as it came.
        spelled = isinstance(signature, str) or "signature" not in block
        return part, _THINKING_KEYS if spelled else _THINKING_KEYS - {"signature"}
    if kind == "redacted_thinking" and isinstance(block.get("data"), str):
        return Reasoning(encrypted=block["data"], source=NAME), _REDACTED_KEYS
    if kind == "document":
        return _document_from_wire(block), _DOCUMENT_KEYS
    return None, _TEXT_KEYS


def _image_from_wire(source: object) -> Image | None:
    if not isinstance(source, dict):
        return None
    kind = source.get("type")
    if kind == "base64" and source.keys() == {"type", "media_type", "data"}:
        return Image(media_type=source["media_type"], data=source["data"])
    if kind == "url" and source.keys() == {"type", "url"} and isinstance(source["url"], str):
        return Image(media_type=guess_media_type(source["url"]), url=source["url"])
    return None  # file sources and anything newer stay a ProviderPart


def _document_from_wire(block: Json) -> File | None:
    """A document with a base64, URL, file or plain-text source; content sources stay provider blocks."""
    source = block.get("source")
    title = block.get("title")
    if not isinstance(source, dict) or not isinstance(title, str | None):
        return None
    kind = source.get("type")
    if kind == "base64" and source.keys() == {"type", "media_type", "data"} and isinstance(source["data"], str):
        return File(media_type=str(source["media_type"]), data=source["data"], name=title)
    words = source.get("data")
    if (
        kind == "text"
        and isinstance(words, str)
        and source == {"type": "text", "media_type": "text/plain", "data": words}
    ):
        try:
            data = base64.b64encode(words.encode()).decode()
        except UnicodeEncodeError:  # a lone surrogate: no bytes to carry, so it stays a provider block
            return None
        return File(media_type="text/plain", data=data, name=title)
    if kind == "url" and source.keys() == {"type", "url"} and isinstance(source["url"], str):
        return File(media_type="application/pdf", url=source["url"], name=title)
    if kind == "file" and source.keys() == {"type", "file_id"} and isinstance(source["file_id"], str):
        return File(file_id=source["file_id"], name=title, source=NAME)
    return None


def _result_from_wire(block: Json, path: str, kept: Json) -> ToolResult:
    """A tool_result block; the kept fields of its inner blocks go in ``kept`` under ``_INNER``."""
    content = block.get("content", "")
    result_content: str | tuple[ResultPart, ...]
    if isinstance(content, str):
        result_content = content
    else:
        inner, inner_kept = blocks_from_wire(content, f"{path}.content")
        # Only these can be a result's content; anything else there (a nested result...) stays verbatim.
        result_content = tuple(
            p if isinstance(p, Text | Image | File | ProviderPart) else ProviderPart(format=NAME, data=content[j])
            for j, p in enumerate(inner)
        )
        if inner_kept:
            kept[_INNER] = inner_kept
    return ToolResult(
        call_id=need(block, "tool_use_id", path),
        content=result_content,
        is_error=block.get("is_error") is True,
    )
