"""Gemini ``contents`` (``{role, parts}``) <-> neutral messages (the message half of ``gemini``).

- Roles are ``user`` and ``model``; a ``user`` content holding ``functionResponse`` parts is a neutral
  ``tool`` message (the old ``function`` role reads the same way and is written back as it was).
- ``text`` parts are Text, ``thought: true`` text parts are Reasoning (with ``thoughtSignature`` as its
  signature); ``functionCall`` is a ToolCall, ``functionResponse`` a ToolResult; ``inlineData`` and
  ``fileData`` are Images (``image/*``) or Files. Everything else (``executableCode``,
  ``codeExecutionResult``, anything new) is a ``ProviderPart("gemini", part)`` sent back unchanged.
- A ``thoughtSignature`` on a call or text part (Gemini 3 signs the first call of a turn) is kept with the
  part and must go back verbatim; it means nothing to another provider, so ``toolslip.convert`` reports it.
- ``functionResponse.response`` must be an object. The rule, both ways: ``{"output": text}`` is a result
  whose content is ``text``, ``{"error": text}`` one with ``is_error``; ``{"output": {...}}`` (Google's
  documented key around an object) one whose content is the inner object's JSON text, as is the Vercel AI
  SDK's ``{"name": tool, "content": output}`` (written back the same way); any other object
  is a result whose content is that object's JSON text (kept as an object, so it goes back as it came).
  Images and files in ``functionResponse.parts`` (Gemini 3's multimodal results) follow the text in the
  result's content.
- A call without ``id`` gets a made-up one (see ``_pairing``), and a result without ``id`` is paired with
  the previous model turn's calls by order and name; made-up ids are left out again on writing.
- The service also accepts snake_case keys (``function_call``); they are read as their camelCase names and
  written back as they were spelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
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
from ._gemini_media import SNAKE as _SNAKE
from ._gemini_media import camel, media_back, media_from_wire, media_to_wire, result_media, snake
from ._pairing import MADE_UP, Pairing, history_call_id
from ._wire import BOOKKEEPING, EMPTY, EMPTY_VALUES, Json, leftover, need, obj, seq, text_or_none, unstash

NAME = "gemini"

_ROLES: dict[str, Role] = {"model": "assistant", "user": "user", "function": "user"}
_CALL_KEYS = frozenset({"name", "args", "id"})
_RESULT_KEYS = frozenset({"name", "response", "id"})


# --- reading ----------------------------------------------------------------------------------------


def part_from_wire(raw: object, where: str) -> tuple[Part, Json]:
    """One part as a neutral part, plus what to keep for writing it back (wire keys; ``~`` keys are ours)."""
    original = obj(raw, where)
    data, snaked = camel(original)
    kept: Json = {}
    part, known = _part(data, where, kept)
    if part is None:
        return ProviderPart(format=NAME, data=original), {}
    if not data.keys() <= known:
        kept.update(leftover(data, known))
    if snaked:
        kept[_SNAKE] = snaked
    return part, kept


def _part(data: Json, where: str, kept: Json) -> tuple[Part | None, frozenset[str]]:
    text = data.get("text")
    if isinstance(text, str):
        if data.get("thought") is True:
            signature = data.get("thoughtSignature")
            signed = isinstance(signature, str)
            part = Reasoning(text=text, signature=signature if signed else None, source=NAME)
            return part, frozenset({"text", "thought", "thoughtSignature"} if signed else {"text", "thought"})
        return Text(text=text), frozenset({"text"})
    if "functionCall" in data:
        return _call(obj(data["functionCall"], f"{where}.functionCall"), f"{where}.functionCall", kept)
    if "functionResponse" in data:
        return _result(obj(data["functionResponse"], f"{where}.functionResponse"), f"{where}.functionResponse", kept)
    media = media_from_wire(data, kept)
    if media is None:
        return None, frozenset()
    return media, frozenset({"inlineData" if media.data is not None else "fileData"})


def _call(fc: Json, where: str, kept: Json) -> tuple[Part, frozenset[str]]:
    args = fc.get("args")
    if "args" not in fc:
        kept["~noargs"] = True
    elif not isinstance(args, dict):
        kept["~args"] = args  # the model wrote a non-object; the loop answers it with an error result
    call_id = text_or_none(fc.get("id"), f"{where}.id")
    if call_id is None:
        kept[MADE_UP] = True
    if not fc.keys() <= _CALL_KEYS:
        kept["~call"] = leftover(fc, _CALL_KEYS)
    call = ToolCall(
        id=call_id or "",
        name=need(fc, "name", where),
        arguments=args if isinstance(args, dict) else ({} if args is None and "args" not in fc else None),
        raw_arguments=None if isinstance(args, dict) or "args" not in fc else orjson.dumps(args).decode(),
    )
    return call, frozenset({"functionCall"})


def _result(fr: Json, where: str, kept: Json) -> tuple[Part, frozenset[str]]:
    text, is_error = _unwrap(fr["response"], kept, fr.get("name")) if "response" in fr else ("", False)
    call_id = text_or_none(fr.get("id"), f"{where}.id")
    if call_id is None:
        kept[MADE_UP] = True
    media = result_media(fr.get("parts"), kept)
    known = _RESULT_KEYS | {"parts"} if media else _RESULT_KEYS
    if not fr.keys() <= known:
        kept["~result"] = leftover(fr, known)  # willContinue, scheduling...
    if "response" not in fr:
        kept["~noresponse"] = True
    content: str | tuple[ResultPart, ...] = ((Text(text=text),) if text else ()) + media if media else text
    result = ToolResult(call_id=call_id or "", content=content, is_error=is_error, name=need(fr, "name", where))
    return result, frozenset({"functionResponse"})


def _unwrap(response: object, kept: Json, name: object = None) -> tuple[str, bool]:
    """A ``functionResponse.response`` as (content, is_error): the wrap rule of the module doc, read."""
    if isinstance(response, dict) and response.keys() == {"name", "content"} and response["name"] == name:
        inner = response["content"]  # the Vercel AI SDK's {"name": tool, "content": output}: the output is it
        kept["~named"] = "text" if isinstance(inner, str) else "json"
        return (inner, False) if isinstance(inner, str) else (orjson.dumps(inner).decode(), False)
    if isinstance(response, dict) and len(response) == 1:
        ((key, value),) = response.items()
        if isinstance(value, str):
            if key not in ("output", "error"):
                kept["~key"] = key  # {"result": ...} and other one-string objects go back under their key
            return value, key == "error"
        if key in ("output", "error") and isinstance(value, (dict, list)):
            kept["~json"] = key  # Google's documented {"output": {...}}: the object is the content
            return orjson.dumps(value).decode(), key == "error"
    kept["~raw"] = True
    return orjson.dumps(response).decode(), False


def messages_from_wire(items: object, system: object = None, path: str = "contents") -> list[Message]:
    """Neutral messages for a ``contents`` list; ``system`` (a ``systemInstruction``) becomes the first."""
    out: list[Message] = []
    if system is not None:
        out.append(system_from_wire(system))
    pairing = Pairing()
    for i, raw in enumerate(seq(items, path)):
        out.append(content_from_wire(obj(raw, f"{path}[{i}]"), f"{path}[{i}]", pairing, i))
    return out


def content_from_wire(
    data: Json, where: str, pairing: Pairing, index: int, make_id: Callable[[int], str] | None = None
) -> Message:
    """One content as a message; calls without ids get ``make_id(k)`` (history ids by default)."""
    role = data.get("role")
    if role is not None and role not in _ROLES:
        raise FormatError(f"unknown role {role!r}; expected user or model", f"{where}.role")
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    calls: list[ToolCall] = []
    raw_parts = data.get("parts")
    for j, raw in enumerate(seq(raw_parts, f"{where}.parts") if raw_parts is not None else ()):
        at = f"{where}.parts[{j}]"
        part, kept = part_from_wire(raw, at)
        if type(part) is ToolCall:
            if kept.get(MADE_UP):
                part = replace(part, id=make_id(len(calls)) if make_id else history_call_id(index, len(calls)))
            calls.append(part)
        elif type(part) is ToolResult:
            if kept.get(MADE_UP):
                part = replace(part, call_id=pairing.take(part.name, at))
            else:
                pairing.close(part.call_id)
        parts.append(part)
        if kept:
            part_kept[str(j)] = kept
    if role == "model":
        pairing.turn(calls)
    neutral: Role = _ROLES.get(role or "user", "user")
    if neutral == "user" and any(type(p) is ToolResult for p in parts):
        neutral = "tool"
    stashed = _content_stash(data, role, part_kept)
    return Message(role=neutral, parts=tuple(parts), extra={NAME: stashed} if stashed else EMPTY)


def _content_stash(data: Json, role: object, part_kept: dict[str, Json]) -> Json:
    """What a content needs to be written back as it was: its other keys, a missing or old role..."""
    stashed: Json = {}
    if not data.keys() <= {"role", "parts"}:
        stashed["fields"] = leftover(data, frozenset({"role", "parts"}))
    if role is None or role == "function":
        stashed["role"] = role
    if data.get("parts") is None:
        stashed["shape"] = "absent"
    if part_kept:
        stashed["parts"] = part_kept
    unread = unread_parts(part_kept) + _unread(stashed.get("fields"), "")
    if unread:
        stashed["unread"] = unread
    return stashed


def unread_parts(part_kept: Mapping[str, Json]) -> list[str]:
    """Kept part fields that carry content (signatures, multimodal result parts...), as paths."""
    unread: list[str] = []
    for key, kept in part_kept.items():
        unread += _unread(kept, f"parts[{key}].")
        unread += _unread(kept.get("~call"), f"parts[{key}].functionCall.")
        unread += _unread(kept.get("~result"), f"parts[{key}].functionResponse.")
    return unread


def _unread(fields: Mapping[str, Any] | None, where: str) -> list[str]:
    if not fields:
        return []
    return [
        f"{where}{key}"
        for key, value in fields.items()
        if key[:1] != "~" and key not in BOOKKEEPING and value not in EMPTY_VALUES and value is not False
    ]


def system_from_wire(system: object, path: str = "systemInstruction") -> Message:
    """A ``systemInstruction`` (a content; some clients send a bare string) as a system message."""
    if isinstance(system, str):
        return Message(role="system", parts=(Text(text=system),), extra={NAME: {"shape": "string"}})
    data = obj(system, path)
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    raw_parts = data.get("parts")
    if isinstance(raw_parts, dict):  # one part, not in a list: the service takes that too
        raw_parts = [raw_parts]
    for j, raw in enumerate(seq(raw_parts or [], f"{path}.parts")):
        part, kept = part_from_wire(raw, f"{path}.parts[{j}]")
        parts.append(part)
        if kept:
            part_kept[str(j)] = kept
    stashed: Json = {}
    if not data.keys() <= {"parts"}:
        stashed["fields"] = leftover(data, frozenset({"parts"}))
    if isinstance(data.get("parts"), dict):
        stashed["shape"] = "object"
    if part_kept:
        stashed["parts"] = part_kept
    unread = unread_parts(part_kept) + _unread(stashed.get("fields"), "")
    if unread:
        stashed["unread"] = unread
    return Message(role="system", parts=tuple(parts), extra={NAME: stashed} if stashed else EMPTY)


# --- writing ----------------------------------------------------------------------------------------


class _Calls:
    """What writing results needs from the calls written before them: names, and which ids were made up."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.made_up: set[str] = set()


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    """The ``contents`` list; system messages go to ``systemInstruction`` (see :func:`system_to_wire`)."""
    calls = _Calls()
    return [_content_to_wire(m, calls) for m in messages if m.role != "system"]


def _content_to_wire(message: Message, calls: _Calls) -> Json:
    kept = unstash(message.extra, NAME)
    out: Json = {}
    if "role" not in kept:
        out["role"] = "model" if message.role == "assistant" else "user"
    elif kept["role"] is not None:
        out["role"] = kept["role"]
    if kept.get("shape") != "absent" or message.parts:
        out["parts"] = parts_to_wire(message.parts, kept.get("parts", EMPTY), calls)
    fields = kept.get("fields")
    return {**fields, **out} if fields else out


def system_to_wire(messages: Iterable[Message]) -> str | Json | None:
    """The ``systemInstruction`` for every system message, wherever it stood (``None`` if there are none).

    Gemini has no system role in ``contents``, so a system message from the middle of a conversation
    moves here too (``toolslip.convert`` reports that).
    """
    systems = [m for m in messages if m.role == "system"]
    if not systems:
        return None
    kept = unstash(systems[0].extra, NAME)
    if kept.get("shape") == "string" and len(systems) == 1:
        return systems[0].text
    parts: list[Json] = []
    for message in systems:
        parts += parts_to_wire(message.parts, unstash(message.extra, NAME).get("parts", EMPTY), _Calls())
    out: Json = {"parts": parts[0] if kept.get("shape") == "object" and len(parts) == 1 else parts}
    fields = kept.get("fields")
    return {**fields, **out} if fields else out


def parts_to_wire(parts: Sequence[Part], part_kept: Mapping[str, Any], calls: _Calls | None = None) -> list[Json]:
    calls = calls or _Calls()
    out: list[Json] = []
    for i, part in enumerate(parts):
        kept = part_kept.get(str(i), EMPTY) if part_kept else EMPTY
        wire = _part_to_wire(part, kept, calls)
        if wire is None:
            continue
        if kept:
            if "~base64" in kept or "~inner" in kept:
                wire = media_back(wire, kept)
            extras = {k: v for k, v in kept.items() if k[:1] != "~"}
            wire = snake({**wire, **extras}, kept.get(_SNAKE))
        out.append(wire)
    return out


def _part_to_wire(part: Part, kept: Mapping[str, Any], calls: _Calls) -> Json | None:
    kind = type(part)
    if kind is Text:
        return {"text": part.text}  # type: ignore[union-attr]  # kind is Text
    if kind is ToolCall:
        return {"functionCall": _call_to_wire(part, kept, calls)}  # type: ignore[arg-type]  # kind is ToolCall
    if kind is ToolResult:
        return {"functionResponse": _result_to_wire(part, kept, calls)}  # type: ignore[arg-type]  # kind is ToolResult
    if kind is Reasoning:
        return reasoning_to_wire(part)  # type: ignore[arg-type]  # kind is Reasoning
    if kind is Image or kind is File:
        return media_to_wire(part)  # type: ignore[arg-type]  # kind is Image or File
    provider: ProviderPart = part  # type: ignore[assignment]  # the one kind left
    return dict(provider.data) if provider.format == NAME else None  # another format's block means nothing here


def _call_to_wire(call: ToolCall, kept: Mapping[str, Any], calls: _Calls) -> Json:
    out: Json = {"name": call.name}
    if call.arguments is not None:
        if call.arguments or not kept.get("~noargs"):
            out["args"] = call.arguments
    elif "~args" in kept:
        out["args"] = kept["~args"]
    else:
        out["args"] = {}  # arguments that were not an object elsewhere: the error result that follows says so
    if kept.get(MADE_UP):
        calls.made_up.add(call.id)
    else:
        out["id"] = call.id
    calls.names[call.id] = call.name
    inner = kept.get("~call")
    return {**out, **inner} if inner else out


def _result_to_wire(result: ToolResult, kept: Mapping[str, Any], calls: _Calls) -> Json:
    name = result.name or calls.names.get(result.call_id)
    if name is None:
        raise FormatError(
            f"the result for call {result.call_id!r} has no tool name, which Gemini needs; "
            "give the ToolResult a name or keep its call earlier in the history",
            "functionResponse.name",
        )
    out: Json = {"name": name}
    if not kept.get(MADE_UP) and result.call_id not in calls.made_up:
        out["id"] = result.call_id
    if not kept.get("~noresponse") or result.text or result.is_error:
        out["response"] = _wrap(result, kept)
    media = [p for p in result.content if isinstance(p, (Image, File))] if not isinstance(result.content, str) else []
    if media:
        part_kept = kept.get("~parts") or ()
        out["parts"] = [
            snake(media_back(wire, part_kept[k]), part_kept[k].get(_SNAKE)) if k < len(part_kept) else wire
            for k, wire in enumerate(media_to_wire(p) for p in media)
            if wire is not None
        ]
    inner = kept.get("~result")
    return {**out, **inner} if inner else out


def _wrap(result: ToolResult, kept: Mapping[str, Any]) -> Any:
    """The ``functionResponse.response`` object for a result (the wrap rule of the module doc)."""
    text = result.text
    if kept.get("~named"):
        try:
            inner = orjson.loads(text) if kept["~named"] == "json" else text
        except orjson.JSONDecodeError:
            inner = text  # the content was changed since it was read
        return {"name": result.name, "content": inner}
    if kept.get("~json"):
        try:
            return {kept["~json"]: orjson.loads(text)}
        except orjson.JSONDecodeError:
            pass  # the content was changed since it was read: wrap it as any text
    if kept.get("~raw"):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the content was changed since it was read: wrap it as any text
    return {kept.get("~key") or ("error" if result.is_error else "output"): text}


def reasoning_to_wire(reasoning: Reasoning) -> Json | None:
    """A thought part; its signature only when Gemini wrote it, and nothing for text-less reasoning."""
    if not reasoning.text:
        return None
    out: Json = {"text": reasoning.text, "thought": True}
    if reasoning.signature is not None and reasoning.source == NAME:
        out["thoughtSignature"] = reasoning.signature
    return out
