"""Streaming Gemini (``:streamGenerateContent?alt=sse``): SSE events, each a whole GenerateContentResponse.

What is particular to this stream:

- Every event is a ``GenerateContentResponse`` holding only the new parts of the first candidate, with
  ``responseId`` and ``modelVersion`` repeated; ``usageMetadata`` grows as it goes (the last one counts).
- Text comes as consecutive text parts, to be joined; a function call comes whole, in one part. Gemini 3
  sends the ``thoughtSignature`` of a text answer on a last, empty text part.
- Vertex AI can also stream one call's arguments (``streamFunctionCallArguments``): a ``functionCall``
  with its name and ``willContinue: true``, then name-less ``functionCall`` parts whose ``partialArgs``
  (``jsonPath``, ``stringValue`` pieces, ``numberValue``...) fill the arguments, until one comes without
  ``willContinue``. They are put back together into the one call the non-streaming answer would hold.
- The chunk carrying ``finishReason`` is the last one; there is no ``[DONE]``.
- The request body is the same as for ``generateContent``; only the URL differs (:func:`stream_body`).

:class:`Accumulator` rebuilds the response the non-streaming call would have returned and reads it with
:func:`~toolslip.formats.gemini.response_from_wire`, so both paths give the same neutral response (call ids
made up from ``responseId`` included). :func:`response_to_chunks` goes the other way, for ``toolslip serve``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from ..core.errors import ProviderError
from ..core.messages import ModelResponse, ToolCall
from ..core.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk, split
from . import gemini
from ._pairing import response_call_id
from ._stream import JsonStream
from ._wire import Json, obj

__all__ = ["NAME", "Accumulator", "response_to_chunks", "stream_body"]

NAME = gemini.NAME
_TEXT_KEYS = frozenset({"text", "thought", "thoughtSignature"})
_PATH_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue", "structValue", "listValue")


def stream_body(body: Mapping[str, Any]) -> Json:
    """The body of a streaming call: Gemini streams by URL (``:streamGenerateContent?alt=sse``), not by a field."""
    return dict(body)


class Accumulator(JsonStream):
    """Feed it the stream's events; :meth:`finish` gives the response, or says why the stream is broken."""

    SERVICE = "Gemini"

    def __init__(self) -> None:
        self._head: Json = {}
        self._role: Any = "model"
        self._parts: list[Json] = []
        self._candidate: Json = {}
        self._usage: Any = None
        self._calls = 0
        self._open: Json | None = None  # a call whose arguments are still streaming (partialArgs)
        self._open_at: tuple[int, str] = (0, "")
        self._started = False
        self.done = False
        """The chunk with ``finishReason`` was read."""

    def feed_object(self, raw: object) -> list[StreamEvent]:
        """One chunk (a dict, or the SDK's ``GenerateContentResponse``)."""
        chunk = obj(raw, "chunk")
        if chunk.get("error") is not None:
            raise _stream_error(chunk["error"])
        self._started = True
        for key, value in chunk.items():
            if key == "usageMetadata":
                self._usage = value
            elif key != "candidates":
                self._head[key] = value
        candidates = chunk.get("candidates") or []
        if not candidates:
            return []
        candidate = obj(candidates[0], "chunk.candidates[0]")
        events: list[StreamEvent] = []
        for key, value in candidate.items():
            if key != "content":
                self._candidate[key] = value
        content = obj(candidate.get("content") or {}, "chunk.candidates[0].content")
        self._role = content.get("role", self._role)
        for part in content.get("parts") or ():
            events += self._part(dict(obj(part, "chunk.candidates[0].content.parts[]")))
        if "finishReason" in candidate:
            self.done = True
        return events

    def _part(self, part: Json) -> list[StreamEvent]:
        last = self._parts[-1] if self._parts else None
        text = part.get("text")
        if isinstance(text, str) and part.keys() <= _TEXT_KEYS:
            same_kind = last is not None and last.keys() <= _TEXT_KEYS and last.get("thought") == part.get("thought")
            if same_kind and last is not None and "thoughtSignature" not in last:
                last["text"] = last.get("text", "") + text
                if "thoughtSignature" in part:
                    last["thoughtSignature"] = part["thoughtSignature"]
            else:
                self._parts.append(part)
            return [TextChunk(text=text)] if text and part.get("thought") is not True else []
        call = part.get("functionCall")
        if isinstance(call, dict) and self._open is not None and "name" not in call:
            return self._continue(call)
        self._parts.append(part)
        if not isinstance(call, dict):
            return []
        if call.get("willContinue") is True:
            return self._begin(part, call)
        index, self._calls = self._calls, self._calls + 1
        call_id = call.get("id") or response_call_id(str(self._head.get("responseId") or ""), index)
        args = call.get("args")
        name = str(call.get("name", ""))
        done = ToolCall(
            id=call_id, name=name, arguments=args if isinstance(args, dict) else {} if args is None else None
        )
        return [
            CallStarted(index=index, id=call_id, name=name),
            ArgsChunk(index=index, text=orjson.dumps(args if args is not None else {}).decode()),
            CallComplete(index=index, call=done),
        ]

    def _begin(self, part: Json, call: Json) -> list[StreamEvent]:
        """A call whose arguments follow in ``partialArgs`` pieces."""
        index, self._calls = self._calls, self._calls + 1
        opened = {k: v for k, v in call.items() if k != "willContinue"}
        opened.setdefault("args", {})
        part["functionCall"] = opened
        self._open = opened
        call_id = call.get("id") or response_call_id(str(self._head.get("responseId") or ""), index)
        self._open_at = (index, call_id)
        return [CallStarted(index=index, id=call_id, name=str(call.get("name", "")))]

    def _continue(self, call: Json) -> list[StreamEvent]:
        opened = self._open
        assert opened is not None  # checked by the caller
        events: list[StreamEvent] = []
        index, call_id = self._open_at
        for piece in call.get("partialArgs") or ():
            item = obj(piece, "functionCall.partialArgs[]")
            text = _set_path(opened["args"], str(item.get("jsonPath", "$")), item)
            if text:
                events.append(ArgsChunk(index=index, text=text))
        if call.get("willContinue") is not True:
            self._open = None
            done = ToolCall(id=call_id, name=str(opened.get("name", "")), arguments=opened["args"])
            events.append(CallComplete(index=index, call=done))
        return events

    def response(self) -> Json:
        """The ``GenerateContentResponse`` received so far."""
        candidate = {"content": {"parts": self._parts, "role": self._role}, **self._candidate}
        out: Json = {"candidates": [candidate], **self._head}
        if self._usage is not None:
            out["usageMetadata"] = self._usage
        return out

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before ``finishReason``."""
        if not self.done:
            got = f"{len(self._parts)} parts" if self._started else "nothing"
            raise self.cut_short("finishReason", got)
        return gemini.response_from_wire(self.response())


def _set_path(args: Json, path: str, item: Json) -> str:
    """Put one ``partialArgs`` value at its ``jsonPath`` (``$.a.b[0]``); a string piece is appended to what
    that place holds. Returns the piece as text, for the ArgsChunk event."""
    steps: list[str | int] = [int(m.group(2)) if m.group(2) else m.group(1) for m in _PATH_STEP.finditer(path)]
    key = next((k for k in _VALUES if k in item), None)
    if not steps or key is None:
        return ""
    value = None if key == "nullValue" else item[key]
    holder: Any = args
    for step, after in zip(steps, [*steps[1:], None], strict=True):
        if after is None:
            break
        empty: Any = [] if isinstance(after, int) else {}
        if isinstance(step, int):
            while len(holder) <= step:
                holder.append(None)
            holder[step] = holder[step] if holder[step] is not None else empty
            holder = holder[step]
        else:
            holder = holder.setdefault(step, empty)
    last = steps[-1]
    if isinstance(last, int):
        while len(holder) <= last:
            holder.append(None)
        current = holder[last]
    else:
        current = holder.get(last)
    if key == "stringValue" and isinstance(current, str):
        value = current + str(value)
    holder[last] = value
    return str(item[key]) if key == "stringValue" else orjson.dumps(item[key]).decode()


def _stream_error(error: object) -> ProviderError:
    message = error.get("message") if isinstance(error, dict) else None
    status = error.get("code") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else orjson.dumps(error).decode()
    code = status if type(status) is int else 0
    return ProviderError(
        f"the Gemini stream reported an error: {text}",
        status=code,
        body=orjson.dumps(error).decode(),
        retryable=code >= 500 or code == 429 or code == 0,
    )


def response_to_chunks(response: ModelResponse, *, chunk_size: int = 16) -> list[Json]:
    """The chunks Gemini would stream for ``response``: text cut into small parts, calls whole, the
    finish reason and usage on the last chunk."""
    full = gemini.response_to_wire(response)
    head = {k: v for k, v in full.items() if k not in ("candidates", "usageMetadata")}
    candidate = full["candidates"][0]
    content = candidate.get("content") or {}
    role = content.get("role", "model")
    pieces: list[Json] = []
    for part in content.get("parts") or ():
        text = part.get("text")
        if isinstance(text, str) and part.keys() <= _TEXT_KEYS and len(text) > chunk_size:
            cut = split(text, chunk_size)
            pieces += [{**part, "text": piece} for piece in cut[:-1]]
            pieces.append({**part, "text": cut[-1]})
            for piece in pieces[-len(cut) : -1]:
                piece.pop("thoughtSignature", None)  # the signature comes with the last piece
        else:
            pieces.append(part)
    chunks = [
        {"candidates": [{"content": {"parts": [piece], "role": role}}], **head} for piece in pieces or [{"text": ""}]
    ]
    last = chunks[-1]["candidates"][0]
    last.update({k: v for k, v in candidate.items() if k != "content"})
    if "usageMetadata" in full:
        chunks[-1]["usageMetadata"] = full["usageMetadata"]
    return chunks
