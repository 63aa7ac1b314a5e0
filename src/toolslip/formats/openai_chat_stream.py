"""Streaming OpenAI Chat Completions (``"stream": true``): ``chat.completion.chunk`` events, both ways.

What is particular to this stream:

- Every event is an unnamed SSE ``data:`` line holding a chunk; the stream ends with ``data: [DONE]``.
- A call's ``id``, ``type`` and ``function.name`` come in its first delta only; later deltas carry just
  ``tool_calls[].index`` and a fragment of ``function.arguments``. Parallel calls are told apart by
  ``index`` and may interleave. Some compatible servers leave ``index`` out: a delta with a new ``id``
  then starts the next call and one without continues the last.
- ``finish_reason`` arrives in the last chunk that has choices. With ``stream_options.include_usage``
  one more chunk follows with ``choices: []`` and the ``usage`` of the whole response.
- An error after the response started arrives as a chunk ``{"error": {...}}``.

:class:`Accumulator` rebuilds the ``chat.completion`` object the non-streaming call would have returned
and reads it with :func:`~toolslip.formats.openai_chat.response_from_wire`, so both paths give the same
neutral response. :func:`response_to_chunks` goes the other way, for ``toolslip serve``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..core.errors import ProviderError
from ..core.messages import ModelResponse, ToolCall
from ..core.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk, split
from . import _chat_messages, openai_chat
from ._stream import JsonStream
from ._wire import Json, obj
from .sse import ServerSentEvent

__all__ = ["NAME", "Accumulator", "response_to_chunks", "stream_body"]

NAME = openai_chat.NAME
DONE = "[DONE]"
# Chunk fields that describe one chunk, not the response (obfuscation pads each chunk with noise).
_PER_CHUNK = frozenset({"choices", "usage", "object", "obfuscation"})


def stream_body(body: Mapping[str, Any]) -> Json:
    """``body`` asking for a stream whose last chunk reports the usage."""
    options = {**(body.get("stream_options") or {}), "include_usage": True}
    return {**body, "stream": True, "stream_options": options}


@dataclass
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    announced: bool = False

    def wire(self) -> Json:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": "".join(self.arguments)},
        }


@dataclass
class _Choice:
    content: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    logprobs: list[Any] | None = None
    finish_reason: str | None = None

    def wire(self, index: int) -> Json:
        message: Json = {"role": "assistant", "content": "".join(self.content) or None}
        if self.refusal:
            message["refusal"] = "".join(self.refusal)
        if self.calls:
            message["tool_calls"] = [self.calls[i].wire() for i in sorted(self.calls)]
        out: Json = {"index": index, "message": message, "finish_reason": self.finish_reason}
        if self.logprobs is not None:
            out["logprobs"] = {"content": self.logprobs}
        return out


class Accumulator(JsonStream):
    """Feed it the stream's events; :meth:`finish` gives the response, or says why the stream is broken."""

    SERVICE = "OpenAI"

    def __init__(self) -> None:
        self._head: Json = {}
        self._choices: dict[int, _Choice] = {}
        self._usage: Json | None = None
        self.done = False
        """``data: [DONE]`` was read."""

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]:
        if event.data == DONE:
            self.done = True
            return []
        return super().feed(event)

    def feed_object(self, data: object) -> list[StreamEvent]:
        """One ``chat.completion.chunk`` (a dict or the SDK's ``ChatCompletionChunk``)."""
        chunk = obj(data, "chunk")
        if chunk.get("error") is not None:
            raise _stream_error(chunk["error"])
        for key, value in chunk.items():
            if key not in _PER_CHUNK:
                self._head.setdefault(key, value)
        if chunk.get("usage") is not None:
            self._usage = chunk["usage"]
        events: list[StreamEvent] = []
        for raw in chunk.get("choices") or ():
            choice = obj(raw, "chunk.choices[]")
            index = choice.get("index", 0)
            state = self._choices.setdefault(index, _Choice())
            self._delta(state, choice.get("delta") or {}, events if index == 0 else [])
            if choice.get("logprobs"):
                state.logprobs = (state.logprobs or []) + list(choice["logprobs"].get("content") or ())
            if choice.get("finish_reason") is not None:
                state.finish_reason = choice["finish_reason"]
                if index == 0:
                    events += self._complete_calls(state)
        return events

    def _delta(self, state: _Choice, delta: Json, events: list[StreamEvent]) -> None:
        if delta.get("content"):
            state.content.append(delta["content"])
            events.append(TextChunk(text=delta["content"]))
        if delta.get("refusal"):
            state.refusal.append(delta["refusal"])
        for raw in delta.get("tool_calls") or ():
            item = obj(raw, "chunk.choices[].delta.tool_calls[]")
            index = self._call_index(state, item)
            call = state.calls.setdefault(index, _Call())
            fn = item.get("function") or {}
            call.id = call.id or item.get("id") or ""
            call.name = call.name or fn.get("name") or ""
            if call.name and not call.announced:
                call.announced = True
                events.append(CallStarted(index=index, id=call.id, name=call.name))
            if fn.get("arguments"):
                call.arguments.append(fn["arguments"])
                events.append(ArgsChunk(index=index, text=fn["arguments"]))

    @staticmethod
    def _call_index(state: _Choice, item: Json) -> int:
        index = item.get("index")
        if isinstance(index, int):
            return index
        last = max(state.calls, default=-1)
        if last < 0 or (item.get("id") and item["id"] != state.calls[last].id):
            return last + 1
        return last

    @staticmethod
    def _complete_calls(state: _Choice) -> list[StreamEvent]:
        """finish_reason is the only sign OpenAI gives that every call's arguments are in."""
        return [CallComplete(index=i, call=_call(state.calls[i])) for i in sorted(state.calls)]

    def response(self) -> Json:
        """The ``chat.completion`` object received so far."""
        out: Json = {**self._head, "object": "chat.completion"}
        out["choices"] = [self._choices[i].wire(i) for i in sorted(self._choices)]
        if self._usage is not None:
            out["usage"] = self._usage
        return out

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before ``finish_reason``."""
        first = self._choices.get(0)
        if first is None or first.finish_reason is None:
            got = f"{len(''.join(first.content))} characters and {len(first.calls)} tool calls" if first else "nothing"
            raise self.cut_short("finish_reason", got)
        return openai_chat.response_from_wire(self.response())


def _call(call: _Call) -> ToolCall:
    parsed, _ = _chat_messages.call_from_wire(call.wire(), "tool_calls[]")
    return parsed


def _stream_error(error: object) -> ProviderError:
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) else orjson.dumps(error).decode()
    # An error after the response began is the service failing mid-answer; asking again may well work.
    return ProviderError(
        f"the OpenAI stream reported an error: {text}", body=orjson.dumps(error).decode(), retryable=True
    )


def response_to_chunks(response: ModelResponse, *, include_usage: bool = True, chunk_size: int = 16) -> list[Json]:
    """The chunks OpenAI would stream for ``response``, text and arguments cut into small deltas."""
    full = openai_chat.response_to_wire(response)
    head = {k: v for k, v in full.items() if k not in ("choices", "usage", "object")}
    head["object"] = "chat.completion.chunk"
    chunks: list[Json] = []

    def emit(index: int, delta: Json, finish: str | None = None) -> None:
        choice = {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}
        chunks.append({**head, "choices": [choice]})

    for choice in full["choices"]:
        index, message = choice.get("index", 0), choice["message"]
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = message.get("tool_calls") or []
        emit(index, {"role": "assistant", "content": "" if text or not calls else None})
        for piece in split(text, chunk_size):
            emit(index, {"content": piece})
        for piece in split(message.get("refusal") or "", chunk_size):
            emit(index, {"refusal": piece})
        for j, wire_call in enumerate(calls):
            fn = wire_call["function"]
            start = {"index": j, "id": wire_call["id"], "type": "function"}
            emit(index, {"tool_calls": [{**start, "function": {"name": fn["name"], "arguments": ""}}]})
            for piece in split(fn["arguments"], chunk_size):
                emit(index, {"tool_calls": [{"index": j, "function": {"arguments": piece}}]})
        emit(index, {}, choice.get("finish_reason"))
    if include_usage and "usage" in full:
        chunks.append({**head, "choices": [], "usage": full["usage"]})
    return chunks
