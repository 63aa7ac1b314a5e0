"""Helpers shared by the wire-format modules: type checks that name the bad field, SDK objects to dicts,
tool-argument JSON, tool lists and ``tool_choice``, and the per-format stash kept in ``extra``.

The stash. A neutral object's ``extra`` maps a format name to what that format alone needs to give back
the exact wire dict it read: ``{"openai-chat": {"fields": {...}, "shape": "list", "parts": {"2": {...}}}}``.

- ``fields``: wire keys with no neutral slot, re-emitted verbatim (keys as on the wire; known keys win).
- ``shape``: how ``content`` was spelled when the default spelling would differ (``"list"``, ``""``,
  ``"absent"``).
- ``parts``: per-part wire keys with no neutral slot (``cache_control``, ``citations``, image ``detail``),
  keyed by the part's index as a string (so the stash survives a JSON round trip).

Keeping it under the format's name means a message read from OpenAI and written to Anthropic carries no
OpenAI-only field across: each format reads only its own stash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from dataclasses import replace
from typing import Any

import orjson

from ..core.errors import FormatError
from ..core.messages import File, Image, ModelResponse, Request, StopReason, Text, ToolChoice, ToolSpec
from .server_tools import render as render_server_tools

Json = dict[str, Any]
EMPTY: Mapping[str, Any] = {}
ERROR_PREFIX = "Error: "
"""How formats without an error flag (the OpenAI ones) mark an error result's content."""


def obj(value: object, path: str) -> Json:
    """``value`` as a JSON object: a dict as is, an SDK (pydantic) object through ``model_dump``.

    SDK objects are accepted at every level, so the SDK habit of appending the response's own message
    (or its content blocks) to the history works here too.
    """
    if type(value) is dict:
        return value
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # exclude_unset keeps exactly the fields the service sent, so the dict matches the JSON body.
        data = dump(mode="json", exclude_unset=True)
        if isinstance(data, dict):
            return data
    raise FormatError(f"expected an object, got {_kind(value)}", path)


def seq(value: object, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise FormatError(f"expected an array, got {_kind(value)}", path)
    return value


def text(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise FormatError(f"expected a string, got {_kind(value)}", path)
    return value


_MISSING = object()


def need(data: Json, key: str, path: str) -> str:
    """``data[key]`` as a string; a missing key says "missing", not "got null"."""
    value = data.get(key, _MISSING)
    if value is _MISSING:
        raise FormatError("missing; expected a string", f"{path}.{key}")
    return text(value, f"{path}.{key}")


def text_or_none(value: object, path: str) -> str | None:
    """A string field the services also send as ``null`` (descriptions...)."""
    return None if value is None else text(value, path)


def mark_error(content: str) -> str:
    """An error result's text for a format without an error flag: ``"Error: "`` first, never twice."""
    return content if is_marked_error(content) else ERROR_PREFIX + content


def is_marked_error(content: str | Sequence[object]) -> bool:
    """Whether a result's content, in a format without an error flag, says it is an error (the mark above):
    its text, or the text of its first part."""
    if isinstance(content, str):
        return content.startswith(ERROR_PREFIX)
    first = content[0] if content else None
    return type(first) is Text and first.text.startswith(ERROR_PREFIX)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def leftover(data: Json, known: frozenset[str]) -> Json:
    """The keys of ``data`` this format has no slot for."""
    if data.keys() <= known:  # the usual case, checked in C
        return {}
    return {k: v for k, v in data.items() if k not in known}


def parse_arguments(raw: str) -> Mapping[str, Any] | None:
    """Tool arguments from the model's JSON text; ``None`` when it is not a JSON object.

    An empty string counts as no arguments: some OpenAI-compatible servers send ``""`` for a call without
    parameters.
    """
    if not raw.strip():
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def dump_arguments(arguments: Mapping[str, Any] | None, raw: str | None) -> str:
    """The JSON text to send for a call: the model's own text when it still says the same thing."""
    if raw is not None and (arguments is None or parse_arguments(raw) == arguments):
        return raw
    return orjson.dumps(arguments or {}).decode()


def stash(
    name: str,
    fields: Json | None,
    shape: str | None = None,
    parts: dict[str, Json] | None = None,
    unread: list[str] | None = None,
) -> Mapping[str, Any]:
    """A neutral ``extra`` holding what format ``name`` needs for an exact round trip (``EMPTY`` if nothing).

    ``unread`` names the kept wire fields that carry content (citations, audio, provider extras...), as
    paths from the object they belong to: another format never sees them, so ``toolslip.convert``
    reports each one.
    """
    kept: Json = {}
    if fields:
        kept["fields"] = fields
    if shape is not None:
        kept["shape"] = shape
    if parts:
        kept["parts"] = parts
    if unread:
        kept["unread"] = unread
    return {name: kept} if kept else EMPTY


OPENAI_FORMATS = frozenset({"openai-chat", "openai-functions", "openai-responses"})
"""The formats of one provider: its file ids and encrypted reasoning mean the same in each, and none of
them has an error flag on a tool result."""
CHAT_FAMILY = frozenset({"openai-chat", "openai-functions"})
"""Formats sharing one request body and Chat's messages (the legacy functions are Chat's messages)."""
EMPTY_VALUES: tuple[object, ...] = (None, [], {}, "")
"""Values that say nothing: a field holding one of them carries no content."""

BOOKKEEPING = frozenset({"id", "type", "status", "index", "object", "created", "cache_control", "detail", "role"})
"""Wire fields that carry no content of their own: ids, statuses, prompt-cache hints, image detail."""


def note_absent(kept: MutableMapping[str, Any], body: Mapping[str, Any], defaults: Iterable[str]) -> None:
    """Remember which of the writer's ``defaults`` the response read here did not have (some providers
    leave out ``id``, ``model``...), so that writing it back does not add them (:func:`drop_absent`)."""
    absent = [k for k in defaults if k not in body]
    if absent:
        kept["absent"] = absent


def drop_absent(out: MutableMapping[str, Any], kept: Mapping[str, Any]) -> None:
    """Leave out of ``out`` the defaults this writer adds that the response read here did not have."""
    for key in kept.get("absent", ()):
        out.pop(key, None)


def unread_keys(fields: Mapping[str, Any] | None, where: str = "") -> list[str]:
    """The keys of kept ``fields`` that carry content (non-empty, not bookkeeping), as ``where`` + key."""
    if not fields:
        return []
    return [f"{where}{key}" for key, value in fields.items() if key not in BOOKKEEPING and value not in EMPTY_VALUES]


def unstash(extra: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The stash of format ``name`` in ``extra`` (``EMPTY`` when there is none)."""
    if not extra:
        return EMPTY
    kept = extra.get(name)
    return kept if isinstance(kept, Mapping) else EMPTY


def with_fields(out: Json, kept: Mapping[str, Any]) -> Json:
    """``out`` plus the stashed wire fields; the fields ``out`` already has win."""
    fields = kept.get("fields") if kept else None
    return {**fields, **out} if fields else out


IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


def guess_media_type(url: str) -> str:
    """A media type from a URL's extension, without I/O; ``image/*`` when the URL does not say."""
    tail = url.rsplit("?", 1)[0].rsplit(".", 1)[-1].lower()
    return IMAGE_TYPES.get(tail, "image/*")


def image_from_url(url: str) -> Image:
    """An Image from an OpenAI ``image_url``: a ``data:`` URL becomes inline base64."""
    if url.startswith("data:") and ";base64," in url:
        head, data = url[5:].split(";base64,", 1)
        return Image(media_type=head, data=data)
    return Image(media_type=guess_media_type(url), url=url)


def image_to_url(image: Image) -> str | None:
    """An Image as an OpenAI image URL: inline data becomes a ``data:`` URL (the inverse of image_from_url)."""
    return image.url if image.data is None else f"data:{image.media_type};base64,{image.data}"


OPENAI_FILE_KEYS = frozenset({"file_data", "file_id", "file_url", "filename"})


def openai_file_from_wire(data: Mapping[str, Any], source: str) -> File | None:
    """An OpenAI file part's fields (Chat ``file.*``, Responses ``input_file``) as a File.

    ``None`` for a spelling a File cannot give back exactly (two sources, a data URL without base64...).
    """
    name = data.get("filename")
    sources = [k for k in ("file_data", "file_id", "file_url") if k in data]
    if not data.keys() <= OPENAI_FILE_KEYS or not isinstance(name, str | None) or len(sources) != 1:
        return None
    key, value = sources[0], data[sources[0]]
    if not isinstance(value, str):
        return None
    if key == "file_id":
        return File(file_id=value, name=name, source=source)
    if key == "file_url":
        return File(url=value, name=name)
    if value.startswith("data:") and ";base64," in value:
        media_type, payload = value[5:].split(";base64,", 1)
        return File(media_type=media_type, data=payload, name=name)
    return None


def openai_file_to_wire(file: File) -> Json:
    """The inverse of :func:`openai_file_from_wire` (inline data as a ``data:`` URL)."""
    out: Json = {}
    if file.data is not None:
        out["file_data"] = f"data:{file.media_type};base64,{file.data}"
    elif file.url is not None:
        out["file_url"] = file.url
    else:
        out["file_id"] = file.file_id
    if file.name is not None:
        out["filename"] = file.name
    return out


def split_tools(
    items: object, path: str, read: Callable[[Json, str], ToolSpec | None], name: str = ""
) -> tuple[list[ToolSpec], list[Json]]:
    """A wire tool list as the specs ``read`` makes and the other tools (``read`` gave ``None``).

    The others (hosted, server and custom tools) travel verbatim in ``Request.extra_tools``. When one of
    them came before a spec, each spec keeps its place (``"at"`` in format ``name``'s stash), so the list
    is written back in its own order: the order of the tools is part of a prompt-cache prefix.
    """
    specs: list[ToolSpec] = []
    others: list[Json] = []
    at: list[int] = []
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        item = obj(raw, where)
        spec = read(item, where)
        if spec is None:
            others.append(item)
        else:
            specs.append(spec)
            at.append(i)
    if name and others and at != list(range(len(specs))):
        specs = [
            replace(s, extra={**s.extra, name: {**unstash(s.extra, name), "at": i}})
            for s, i in zip(specs, at, strict=True)
        ]
    return specs, others


def only_specs(split: tuple[list[ToolSpec], list[Json]], kind: str) -> list[ToolSpec]:
    """The specs of a split tool list; a tool of another kind raises, since only a Request can keep it."""
    specs, others = split
    if others:
        raise FormatError(f"not a {kind} tool: {others[0]!r}; request_from_wire keeps such tools", "tools")
    return specs


def add_tools(body: Json, specs: list[Json], request: Request, name: str) -> None:
    """Put the request's tools in ``body["tools"]``: its specs (as ``specs``), server tools, extra tools."""
    tools = tool_list(specs, request, name)
    if tools:
        body["tools"] = tools


def tool_list(specs: list[Json], request: Request, name: str) -> list[Any]:
    """The request's whole tool list in format ``name``: its specs (as ``specs``), server and extra tools."""
    if not request.server_tools and not request.extra_tools:  # the loop's request, on every step
        return list(specs)
    others: list[Mapping[str, Any]] = [*render_server_tools(request.server_tools, name), *request.extra_tools]
    places = [unstash(s.extra, name).get("at") for s in request.tools]
    return _in_place(specs, places, others)


def keep_empty(data: Json, extra: Json, keys: tuple[str, ...]) -> None:
    """Known body fields given empty (``"tools": []``, ``"stop": null``) are sent back the same way."""
    for key in keys:
        if key in data and data[key] in (None, [], ""):
            extra[key] = data[key]


def _in_place(specs: list[Json], places: list[Any], others: list[Mapping[str, Any]]) -> list[Any]:
    """Specs back at the places they were read from, the other tools filling the gaps in order."""
    n = len(specs) + len(others)
    if not others or not all(type(p) is int and 0 <= p < n for p in places) or len(set(places)) < len(places):
        return [*specs, *others]
    slots = dict(zip(places, specs, strict=True))
    rest = iter(others)
    return [slots[i] if i in slots else next(rest) for i in range(n)]


def choice_from_wire(data: Json, extra: Json, read: Callable[[object], ToolChoice | None]) -> ToolChoice | None:
    """The body's ``tool_choice`` as ``read`` knows it; a spelling it does not know goes to ``extra`` verbatim."""
    choice = read(data.get("tool_choice"))
    if choice is None and data.get("tool_choice") is not None:
        extra["tool_choice"] = data["tool_choice"]  # allowed_tools, custom, hosted-tool choices...
    return choice


def stop_to_wire(response: ModelResponse, known: Mapping[str, StopReason], back: Mapping[StopReason, str]) -> str:
    """The provider's own stop word when it has one for this format (or the stop is unknown), else ours."""
    raw = response.raw_stop_reason
    if raw is not None and (raw in known or response.stop_reason == "other"):
        return raw
    return back[response.stop_reason]


def take_count(rest: Json, key: str) -> int:
    """A positive token count, taken out of the kept usage fields ``rest``; a zero or null count stays
    there, so it goes back spelled as it was."""
    value = rest.get(key)
    if type(value) is int and value > 0:
        del rest[key]
        return value
    return 0
