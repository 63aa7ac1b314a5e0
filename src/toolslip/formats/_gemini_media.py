"""Gemini's media parts (``inlineData``, ``fileData``) and its snake_case spellings, for ``_gemini_parts``.

The service reads ``inline_data``/``mime_type`` as ``inlineData``/``mimeType`` and Python SDKs send either;
google-genai sends bytes in URL-safe base64 (``-``, ``_``). Both are read into the neutral form (camelCase
keys, standard base64, which every other format wants) and written back to Gemini as they came. A
multimodal function response (Gemini 3) holds such parts in ``functionResponse.parts``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.messages import File, Image
from ._wire import Json

SNAKE = "~snake"
"""Stash key: the keys of a wire object that were spelled in snake_case."""


def camel(data: Json) -> tuple[Json, list[str]]:
    """``data`` with its snake_case keys in camelCase, and the keys that were snake_case."""
    if not any("_" in key for key in data):  # the usual case
        return data, []
    out: Json = {}
    snake: list[str] = []
    for key, value in data.items():
        if "_" in key.strip("_"):
            head, *rest = key.split("_")
            name = head + "".join(word[:1].upper() + word[1:] for word in rest)
            if name not in data:
                out[name] = value
                snake.append(key)
                continue
        out[key] = value
    return out, snake


def snake(out: Json, keys: Sequence[str] | None) -> Json:
    """``out`` with the keys read from snake_case (see :func:`camel`) spelled as they were."""
    if not keys:
        return out
    back = {camel({key: None})[0].popitem()[0]: key for key in keys}
    return {back.get(key, key): value for key, value in out.items()}


def media_from_wire(data: Json, kept: Json) -> Image | File | None:
    """An ``inlineData`` (base64 bytes) or ``fileData`` (a URI) part, camelCase or not, as an Image
    (``image/*``) or a File; ``None`` for anything else. ``kept`` gets what writing it back needs."""
    inline = _inner(data.get("inlineData"), kept)
    if isinstance(inline, dict) and inline.keys() == {"mimeType", "data"}:
        mime, payload = inline["mimeType"], inline["data"]
        if isinstance(mime, str) and isinstance(payload, str):
            standard = standard_base64(payload)
            if standard != payload:
                kept["~base64"] = payload
            return (
                Image(media_type=mime, data=standard)
                if mime.startswith("image/")
                else File(media_type=mime, data=standard)
            )
    linked = _inner(data.get("fileData"), kept)
    if isinstance(linked, dict) and linked.keys() == {"mimeType", "fileUri"}:
        mime, uri = linked["mimeType"], linked["fileUri"]
        if isinstance(mime, str) and isinstance(uri, str):
            return Image(media_type=mime, url=uri) if mime.startswith("image/") else File(media_type=mime, url=uri)
    return None


def _inner(value: object, kept: Json) -> object:
    """A media object with its snake_case keys (``mime_type``, ``file_uri``) read as camelCase; the keys
    that were snake_case are kept so they are written back as they were."""
    if not isinstance(value, dict):
        return value
    value, snaked = camel(value)
    if snaked:
        kept["~inner"] = snaked
    return value


def standard_base64(data: str) -> str:
    """``data`` in the standard base64 alphabet, padded: google-genai sends bytes URL-safe (``-``, ``_``),
    which Anthropic, Converse, OpenAI and Ollama do not read."""
    if "-" not in data and "_" not in data and len(data) % 4 == 0:
        return data
    return data.replace("-", "+").replace("_", "/") + "=" * (-len(data) % 4)


def media_back(wire: Json, kept: Mapping[str, Any]) -> Json:
    """A media part spelled as it was read: its inner snake_case keys and its URL-safe bytes."""
    key = next(iter(wire))
    inner = wire[key]
    if key not in ("inlineData", "fileData") or not isinstance(inner, dict):
        return wire
    original = kept.get("~base64")
    if original is not None and inner.get("data") == standard_base64(original):
        inner = {**inner, "data": original}
    return {key: snake(inner, kept.get("~inner")), **{k: v for k, v in wire.items() if k != key}}


def result_media(raw: object, kept: Json) -> tuple[Image | File, ...]:
    """The images and files of a multimodal ``functionResponse.parts`` (Gemini 3), or ``()`` when the list
    holds anything else (then it is kept verbatim, and reported where it cannot go)."""
    if not isinstance(raw, list) or not raw:
        return ()
    media: list[Image | File] = []
    part_kept: list[Json] = []
    for item in raw:
        if not isinstance(item, dict):
            return ()
        data, snaked = camel(item)
        inner: Json = {SNAKE: snaked} if snaked else {}
        part = media_from_wire(data, inner) if len(data) == 1 else None
        if part is None:
            return ()
        media.append(part)
        part_kept.append(inner)
    kept["~parts"] = part_kept
    return tuple(media)


def media_to_wire(media: Image | File) -> Json | None:
    """``inlineData`` for inline bytes, ``fileData`` for a URL; ``None`` for another provider's file id."""
    if media.data is not None:
        return {"inlineData": {"mimeType": media.media_type, "data": media.data}}
    if media.url is not None:
        return {"fileData": {"mimeType": media.media_type, "fileUri": media.url}}
    return None
