"""What a streaming model yields while it writes: neutral deltas, then the whole response.

A model that can stream implements ``stream(request)`` next to ``complete(request)`` (see
:class:`~toolslip.core.model.StreamingModel`). The iterator yields, in order of arrival:

    StreamEvent
    ├── TextChunk       a piece of answer text
    ├── CallStarted     a tool call's id and name are known; its arguments are still arriving
    ├── ArgsChunk       a fragment of a call's JSON arguments (not parseable on its own)
    ├── CallComplete    a call's arguments are complete (the parsed ToolCall)
    └── ResponseDone    the last event: the same ModelResponse ``complete`` would have returned

Calls are told apart by ``index`` (their position among the response's calls), because OpenAI sends a
call's id only in its first delta and parallel calls may interleave. Only ``ResponseDone`` is
authoritative: the loop runs the calls of its response, never the deltas. A stream that ends without it
is broken, and the model raises :class:`~toolslip.core.errors.ProviderError` instead.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TypeAlias

from .errors import ProviderError
from .events import Event, TextDelta, ToolCallReady, ToolCallStarted
from .messages import ModelResponse, Text, ToolCall

__all__ = [
    "ArgsChunk",
    "CallComplete",
    "CallStarted",
    "ResponseDone",
    "StreamEvent",
    "TextChunk",
    "collect",
    "response_to_events",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TextChunk:
    """A piece of the answer text, in order."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CallStarted:
    """Call number ``index`` of this response is ``name`` with id ``id``; its arguments follow."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ArgsChunk:
    """A fragment of call ``index``'s arguments as JSON text."""

    index: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CallComplete:
    """Call ``index``'s arguments are all in; ``call`` is what the final response will hold."""

    index: int
    call: ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseDone:
    """The stream ended properly; ``response`` equals what the non-streaming call returns."""

    response: ModelResponse


StreamEvent: TypeAlias = TextChunk | CallStarted | ArgsChunk | CallComplete | ResponseDone


async def collect(
    stream: AsyncIterator[StreamEvent], step: int, emit: Callable[[Event], None], model: str
) -> ModelResponse:
    """Consume a model's stream for the loop: deltas become run events, the final response is returned.

    Only that response counts, so a call is never run from deltas; a stream that ends without it raises.
    """
    response = None
    async for item in stream:
        if isinstance(item, TextChunk):
            emit(TextDelta(step=step, text=item.text))
        elif isinstance(item, CallStarted):
            emit(ToolCallStarted(step=step, id=item.id, name=item.name))
        elif isinstance(item, CallComplete):
            emit(ToolCallReady(step=step, call=item.call))
        elif isinstance(item, ResponseDone):
            response = item.response
    if response is None:
        raise ProviderError(f"the stream of {model} ended without its final response", retryable=True)
    return response


def response_to_events(response: ModelResponse, chunk_size: int = 8) -> Iterator[StreamEvent]:
    """Replay a finished response as a stream, text and arguments cut into ``chunk_size``-character pieces.

    Used by :class:`toolslip.testing.StreamedModel` and by servers that answer a streaming request from a
    model that cannot stream.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    index = 0
    for part in response.message.parts:
        if isinstance(part, Text):
            for piece in split(part.text, chunk_size):
                yield TextChunk(text=piece)
        elif isinstance(part, ToolCall):
            yield CallStarted(index=index, id=part.id, name=part.name)
            raw = part.raw_arguments
            if raw is None:  # a call read from Anthropic holds an object, not text
                raw = json.dumps(dict(part.arguments or {}), ensure_ascii=False)
            for piece in split(raw, chunk_size):
                yield ArgsChunk(index=index, text=piece)
            yield CallComplete(index=index, call=part)
            index += 1
    yield ResponseDone(response=response)


def split(text: str, size: int) -> list[str]:
    """``text`` in pieces of at most ``size`` characters (none for an empty text)."""
    return [text[i : i + size] for i in range(0, len(text), size)]
