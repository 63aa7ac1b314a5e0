"""Bedrock Converse content blocks <-> neutral messages (the message half of ``bedrock``).

A Converse block is an object with exactly one key naming its kind: ``{"text": ...}``, ``{"toolUse":
{toolUseId, name, input}}``, ``{"toolResult": {toolUseId, content, status}}``, ``{"image": {format, source:
{bytes}}}``, ``{"document": {format, name, source: {bytes}}}``, ``{"reasoningContent": {reasoningText: {text,
signature}} | {redactedContent}}``. In JSON, ``bytes`` is base64. A user message holding ``toolResult``
blocks is a neutral ``tool`` message; ``status: "error"`` is ``is_error``. A result's content items are
``{text}``, ``{json}`` (an object: read as its JSON text, written back as the object), ``{image}`` and
``{document}``. Everything else (``cachePoint``, ``guardContent``, ``citationsContent``, S3 sources,
anything new) is a ``ProviderPart("bedrock", block)`` sent back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from ..core.errors import FormatError
from ..core.messages import (
    File,
    Image,
    Message,
    Part,
    ProviderPart,
    Reasoning,
    ResultPart,
    Role,
    Text,
    ToolCall,
    ToolResult,
)
from ._wire import BOOKKEEPING, EMPTY, EMPTY_VALUES, Json, leftover, need, obj, seq, unstash

NAME = "bedrock"

DOCUMENT_TYPES = {
    "pdf": "application/pdf",
    "csv": "text/csv",
    "doc": "application/msword",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xls": "application/vnd.ms-excel",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "html": "text/html",
    "txt": "text/plain",
    "md": "text/markdown",
}
"""Converse document ``format`` -> media type; a File of another media type has no spelling here."""
_DOCUMENT_FORMATS = {v: k for k, v in DOCUMENT_TYPES.items()}
_IMAGE_FORMATS = {"png", "jpeg", "gif", "webp"}
_USE_KEYS = frozenset({"toolUseId", "name", "input"})
_RESULT_KEYS = frozenset({"toolUseId", "content", "status"})


def image_format(media_type: str) -> str | None:
    """The Converse image ``format`` of a media type (``image/jpeg`` -> ``jpeg``); ``None`` if it has none."""
    kind = media_type.removeprefix("image/").replace("jpg", "jpeg")
    return kind if kind in _IMAGE_FORMATS else None


def document_format(media_type: str) -> str | None:
    return _DOCUMENT_FORMATS.get(media_type)


# --- reading ----------------------------------------------------------------------------------------


def blocks_from_wire(content: object, path: str) -> tuple[list[Part], dict[str, Json]]:
    """Neutral parts for a block list, plus what each needs to be written back exactly (``~`` keys)."""
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    for i, raw in enumerate(seq(content, path)):
        block = obj(raw, f"{path}[{i}]")
        kept: Json = {}
        part = _block(block, f"{path}[{i}]", kept) if len(block) == 1 else None
        parts.append(part if part is not None else ProviderPart(format=NAME, data=block))
        if kept and part is not None:
            part_kept[str(i)] = kept
    return parts, part_kept


def _block(block: Json, where: str, kept: Json) -> Part | None:
    ((kind, value),) = block.items()
    if kind == "text":
        return Text(text=value) if isinstance(value, str) else None
    if not isinstance(value, dict):
        return None
    if kind == "toolUse" and value.get("type") == "server_tool_use":
        return None  # a call the service ran itself (web grounding): kept verbatim, nothing for the loop to run
    if kind == "toolUse":
        args = value.get("input")
        if not value.keys() <= _USE_KEYS:
            kept["~inner"] = leftover(value, _USE_KEYS)
        if not isinstance(args, dict):
            kept["~input"] = args
        return ToolCall(
            id=need(value, "toolUseId", f"{where}.toolUse"),
            name=need(value, "name", f"{where}.toolUse"),
            arguments=args if isinstance(args, dict) else None,
            raw_arguments=None if isinstance(args, dict) else orjson.dumps(args).decode(),
        )
    if kind == "toolResult":
        return _result(value, f"{where}.toolResult", kept)
    if kind == "image":
        return _image(value)
    if kind == "document":
        return _document(value)
    if kind == "reasoningContent":
        return _reasoning(value)
    return None


def _image(value: Json) -> Image | None:
    source, kind = value.get("source"), value.get("format")
    if value.keys() == {"format", "source"} and isinstance(source, dict) and source.keys() == {"bytes"}:
        if isinstance(kind, str) and isinstance(source["bytes"], str):
            return Image(media_type=f"image/{kind}", data=source["bytes"])
    return None  # an S3 location, or anything newer, stays a ProviderPart


def _document(value: Json) -> File | None:
    source, kind, name = value.get("source"), value.get("format"), value.get("name")
    if value.keys() == {"format", "name", "source"} and isinstance(source, dict) and source.keys() == {"bytes"}:
        if kind in DOCUMENT_TYPES and isinstance(name, str) and isinstance(source["bytes"], str):
            return File(media_type=DOCUMENT_TYPES[kind], data=source["bytes"], name=name)
    return None


def _reasoning(value: Json) -> Reasoning | None:
    text = value.get("reasoningText")
    if value.keys() == {"reasoningText"} and isinstance(text, dict) and text.keys() <= {"text", "signature"}:
        body, signature = text.get("text"), text.get("signature")
        if isinstance(body, str) and isinstance(signature, str | None):
            return Reasoning(text=body, signature=signature, source=NAME)
    redacted = value.get("redactedContent")
    if value.keys() == {"redactedContent"} and isinstance(redacted, str):
        return Reasoning(encrypted=redacted, source=NAME)
    return None  # a signature alone (no text), an empty block...: kept verbatim


def _result(value: Json, where: str, kept: Json) -> ToolResult:
    status = value.get("status")
    if status is not None and status != "error":
        kept["~status"] = status  # "success", said explicitly
    if not value.keys() <= _RESULT_KEYS:
        kept["~inner"] = leftover(value, _RESULT_KEYS)
    items = seq(value.get("content", []), f"{where}.content")
    content: str | tuple[ResultPart, ...]
    if (
        len(items) == 1
        and isinstance(items[0], dict)
        and items[0].keys() == {"text"}
        and isinstance(items[0]["text"], str)
    ):
        content = items[0]["text"]
    else:
        inner: list[ResultPart] = []
        marks: Json = {}
        for j, item in enumerate(items):
            data = obj(item, f"{where}.content[{j}]")
            if data.keys() == {"json"}:
                inner.append(Text(text=orjson.dumps(data["json"]).decode()))
                marks[str(j)] = True
                continue
            part = _block(data, f"{where}.content[{j}]", {}) if len(data) == 1 else None
            inner.append(part if isinstance(part, Text | Image | File) else ProviderPart(format=NAME, data=data))
        content = tuple(inner)
        if marks:
            kept["~json"] = marks
    return ToolResult(call_id=need(value, "toolUseId", where), content=content, is_error=status == "error")


def message_from_wire(data: Json, where: str) -> Message:
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise FormatError(f"unknown role {role!r}; expected user or assistant", f"{where}.role")
    parts, part_kept = blocks_from_wire(data.get("content"), f"{where}.content")
    if role == "assistant" and any(type(p) is ToolResult for p in parts):
        # Only a user message can answer a call: a result the model wrote stays a block of its own.
        parts = [
            ProviderPart(format=NAME, data=data["content"][i]) if type(p) is ToolResult else p
            for i, p in enumerate(parts)
        ]
        part_kept = {k: v for k, v in part_kept.items() if type(parts[int(k)]) is not ProviderPart}
    neutral: Role = "assistant" if role == "assistant" else "user"
    if neutral == "user" and any(type(p) is ToolResult for p in parts):
        neutral = "tool"
    stashed: Json = {}
    if not data.keys() <= {"role", "content"}:
        stashed["fields"] = leftover(data, frozenset({"role", "content"}))
        unread = [k for k, v in stashed["fields"].items() if k not in BOOKKEEPING and v not in EMPTY_VALUES]
        if unread:
            stashed["unread"] = unread
    if part_kept:
        stashed["parts"] = part_kept
    return Message(role=neutral, parts=tuple(parts), extra={NAME: stashed} if stashed else EMPTY)


def messages_from_wire(items: object, system: object = None, path: str = "messages") -> list[Message]:
    """Neutral messages; a top-level ``system`` block list, when given, becomes the first message."""
    out: list[Message] = []
    if system is not None:
        parts, part_kept = blocks_from_wire(system, "system")
        out.append(
            Message(role="system", parts=tuple(parts), extra={NAME: {"parts": part_kept}} if part_kept else EMPTY)
        )
    for i, raw in enumerate(seq(items, path)):
        out.append(message_from_wire(obj(raw, f"{path}[{i}]"), f"{path}[{i}]"))
    return out


# --- writing ----------------------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``messages`` list; system messages go to the top-level ``system`` (:func:`system_to_wire`)."""
    return [message_to_wire(m) for m in messages if m.role != "system"]


def message_to_wire(message: Message) -> Json:
    kept = unstash(message.extra, NAME)
    role = "assistant" if message.role == "assistant" else "user"  # results travel in a user message
    out: Json = {"role": role, "content": blocks_to_wire(message.parts, kept.get("parts", EMPTY))}
    fields = kept.get("fields")
    return {**fields, **out} if fields else out


def system_to_wire(messages: Iterable[Message]) -> list[Json] | None:
    """The top-level ``system`` blocks of every system message (``None`` if there are none)."""
    blocks: list[Json] = []
    found = False
    for message in messages:
        if message.role == "system":
            found = True
            blocks += blocks_to_wire(message.parts, unstash(message.extra, NAME).get("parts", EMPTY))
    return blocks if found else None


def blocks_to_wire(parts: Sequence[Part], part_kept: Mapping[str, Any]) -> list[Json]:
    out: list[Json] = []
    for i, part in enumerate(parts):
        block = block_to_wire(part, part_kept.get(str(i), EMPTY) if part_kept else EMPTY)
        if block is not None:
            out.append(block)
    return out


def block_to_wire(part: Part, kept: Mapping[str, Any] = EMPTY) -> Json | None:
    """One block; ``None`` for a part Converse cannot carry (``toolslip.convert`` reports those)."""
    kind = type(part)
    if kind is Text:
        return {"text": part.text}  # type: ignore[union-attr]  # kind is Text
    if kind is ToolCall:
        call: ToolCall = part  # type: ignore[assignment]  # kind is ToolCall
        args: Any = call.arguments if call.arguments is not None else kept.get("~input", {})
        return {"toolUse": {"toolUseId": call.id, "name": call.name, "input": args, **kept.get("~inner", EMPTY)}}
    if kind is ToolResult:
        return {"toolResult": _result_to_wire(part, kept)}  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Image:
        return image_to_wire(part)  # type: ignore[arg-type]  # kind is Image
    if kind is File:
        return document_to_wire(part)  # type: ignore[arg-type]  # kind is File
    if kind is Reasoning:
        return reasoning_to_wire(part)  # type: ignore[arg-type]  # kind is Reasoning
    provider: ProviderPart = part  # type: ignore[assignment]  # the one kind left
    return dict(provider.data) if provider.format == NAME else None


def image_to_wire(image: Image) -> Json | None:
    """An image block: inline bytes only (a URL has no spelling in Converse)."""
    kind = image_format(image.media_type)
    if image.data is None or kind is None:
        return None
    return {"image": {"format": kind, "source": {"bytes": image.data}}}


def document_to_wire(file: File) -> Json | None:
    kind = document_format(file.media_type)
    if file.data is None or kind is None:
        return None
    # Converse requires a name; "document" stands in for a file that came without one.
    return {"document": {"format": kind, "name": file.name or "document", "source": {"bytes": file.data}}}


def reasoning_to_wire(reasoning: Reasoning) -> Json | None:
    if reasoning.source == NAME and reasoning.encrypted is not None and not reasoning.text:
        return {"reasoningContent": {"redactedContent": reasoning.encrypted}}
    if not reasoning.text:
        return None
    text: Json = {"text": reasoning.text}
    if reasoning.signature is not None and reasoning.source == NAME:
        text["signature"] = reasoning.signature
    return {"reasoningContent": {"reasoningText": text}}


def _result_to_wire(result: ToolResult, kept: Mapping[str, Any]) -> Json:
    content: list[Json]
    if isinstance(result.content, str):
        content = [{"text": result.content}]
    else:
        marks = kept.get("~json", EMPTY)
        content = []
        for j, part in enumerate(result.content):
            item = _json_item(part.text) if str(j) in marks and type(part) is Text else block_to_wire(part)
            if item is not None:
                content.append(item)
    out: Json = {"toolUseId": result.call_id, "content": content}
    if result.is_error:
        out["status"] = "error"
    elif "~status" in kept:
        out["status"] = kept["~status"]
    inner = kept.get("~inner")
    return {**out, **inner} if inner else out


def _json_item(text: str) -> Json:
    try:
        return {"json": orjson.loads(text)}
    except orjson.JSONDecodeError:
        return {"text": text}  # changed since it was read: no longer JSON
