"""Streaming Ollama (``"stream": true``, the ``/api/chat`` default): newline-delimited JSON, both ways.

Each line is a chunk shaped like the answer: ``message`` holds the new ``content`` and ``thinking`` text,
tool calls arrive whole in one chunk, and the last chunk (``done: true``) adds ``done_reason``, the
counts and the durations. A line ``{"error": "..."}`` ends the stream.

:class:`Accumulator` rebuilds the answer the non-streaming call would have returned (with the first
chunk's ``created_at``, which the made-up call ids are derived from) and reads it with
:func:`~toolslip.formats.ollama.response_from_wire`. :func:`response_to_chunks` goes the other way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson

from ..core.errors import ProviderError
from ..core.messages import ModelResponse
from ..core.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk, split
from . import ollama
from ._pairing import response_call_id
from ._stream import JsonStream
from ._wire import Json, obj

__all__ = ["NAME", "Accumulator", "response_to_chunks", "stream_body"]

NAME = ollama.NAME


def stream_body(body: Mapping[str, Any]) -> Json:
    return {**body, "stream": True}


class Accumulator(JsonStream):
    """Feed it the stream's lines (:meth:`feed_line`); :meth:`finish` gives the response."""

    SERVICE = "Ollama"

    def __init__(self) -> None:
        self._head: Json = {}
        self._final: Json = {}
        self._role: Any = "assistant"
        self._content: list[str] = []
        self._thinking: list[str] = []
        self._calls: list[Json] = []
        self._extra: Json = {}
        self.done = False
        """The ``done: true`` chunk was read."""

    def feed_line(self, line: str | bytes) -> list[StreamEvent]:
        """One NDJSON line (a blank line is skipped)."""
        if not line.strip():
            return []
        try:
            data = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise self.malformed(f"a line is not JSON ({exc}): {str(line)[:200]!r}") from None
        return self.feed_object(data)

    def feed_object(self, raw: object) -> list[StreamEvent]:
        """One chunk (a dict, or the ``ollama`` SDK's ``ChatResponse``)."""
        chunk = obj(raw, "chunk")
        if chunk.get("error") is not None:
            raise ProviderError(f"the Ollama stream reported an error: {chunk['error']}", retryable=True)
        if not self._head:
            self._head = {k: v for k, v in chunk.items() if k in ("model", "created_at")}
        message = obj(chunk.get("message") or {}, "chunk.message")
        self._role = message.get("role", self._role)
        events: list[StreamEvent] = []
        if message.get("content"):
            self._content.append(message["content"])
            events.append(TextChunk(text=message["content"]))
        if message.get("thinking"):
            self._thinking.append(message["thinking"])
        for key, value in message.items():
            if key not in ("role", "content", "thinking", "tool_calls"):
                self._extra[key] = value
        seed = str(self._head.get("created_at") or "")
        for raw_call in message.get("tool_calls") or ():
            call = obj(raw_call, "chunk.message.tool_calls[]")
            index = len(self._calls)
            self._calls.append(call)
            fn = obj(call.get("function") or {}, "chunk.message.tool_calls[].function")
            call_id = str(call.get("id") or response_call_id(seed, index))
            parsed = ollama.message_from_wire({"role": "assistant", "tool_calls": [call]}, "chunk.message")
            events += [
                CallStarted(index=index, id=call_id, name=str(fn.get("name", ""))),
                ArgsChunk(index=index, text=orjson.dumps(fn.get("arguments") or {}).decode()),
                CallComplete(index=index, call=replace(parsed.tool_calls[0], id=call_id)),
            ]
        if chunk.get("done") is True:
            self.done = True
            self._final = {k: v for k, v in chunk.items() if k not in ("message", "model", "created_at")}
        return events

    def response(self) -> Json:
        """The ``/api/chat`` answer received so far."""
        message: Json = {"role": self._role, "content": "".join(self._content), **self._extra}
        if self._thinking:
            message["thinking"] = "".join(self._thinking)
        if self._calls:
            message["tool_calls"] = self._calls
        return {**self._head, "message": message, **self._final}

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before ``done: true``."""
        if not self.done:
            raise self.cut_short("done: true", f"{len(''.join(self._content))} characters" if self._head else "nothing")
        return ollama.response_from_wire(self.response())


def response_to_chunks(response: ModelResponse, *, chunk_size: int = 16) -> list[Json]:
    """The lines Ollama would stream for ``response``: content in small pieces, then the ``done`` chunk."""
    full = ollama.response_to_wire(response)
    head = {k: v for k, v in full.items() if k in ("model", "created_at")}
    message = full["message"]
    role = message.get("role", "assistant")
    chunks: list[Json] = []
    for piece in split(message.get("thinking") or "", chunk_size):
        chunks.append({**head, "message": {"role": role, "content": "", "thinking": piece}, "done": False})
    for piece in split(message.get("content") or "", chunk_size):
        chunks.append({**head, "message": {"role": role, "content": piece}, "done": False})
    if message.get("tool_calls"):
        chunks.append(
            {**head, "message": {"role": role, "content": "", "tool_calls": message["tool_calls"]}, "done": False}
        )
    last = {k: v for k, v in full.items() if k != "message"}
    chunks.append({**last, "message": {"role": role, "content": ""}, "done": True})
    return chunks
