"""Streaming Anthropic Messages (``"stream": true``): named SSE events, both ways.

What is particular to this stream:

- ``message_start`` carries the message with empty ``content`` and the input-side ``usage``.
- Each content block is ``content_block_start`` (the block, with empty text or ``input: {}``), then
  ``content_block_delta`` events, then ``content_block_stop``; ``index`` is the block's position.
  Deltas: ``text_delta``, ``input_json_delta`` (``partial_json`` fragments of a ``tool_use`` or
  ``server_tool_use`` input, parseable only once the block stops), ``thinking_delta``,
  ``signature_delta``, ``citations_delta``. Server-tool result blocks arrive whole in their start event.
- ``message_delta`` brings ``stop_reason`` and the cumulative ``usage``; ``message_stop`` ends the stream.
- ``ping`` events may come anywhere; an ``error`` event (``overloaded_error``...) ends the stream.

:class:`Accumulator` rebuilds the ``message`` object the non-streaming call would have returned and reads it
with :func:`~toolslip.formats.anthropic.response_from_wire`, so both paths give the same neutral response.
:func:`response_to_events` goes the other way, for ``toolslip serve``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..core.errors import ProviderError
from ..core.messages import ModelResponse, ToolCall
from ..core.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk, split
from . import anthropic
from ._stream import JsonStream
from ._wire import Json, obj

__all__ = ["NAME", "Accumulator", "response_to_events", "stream_body"]

NAME = anthropic.NAME
_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
_ERROR_STATUS = {"overloaded_error": 529, "api_error": 500, "rate_limit_error": 429, "timeout_error": 504}


def stream_body(body: Mapping[str, Any]) -> Json:
    return {**body, "stream": True}


@dataclass
class _Block:
    data: Json
    json: list[str] = field(default_factory=list)
    call_index: int | None = None
    stopped: bool = False


class Accumulator(JsonStream):
    """Feed it the stream's events; :meth:`finish` gives the response, or says why the stream is broken."""

    SERVICE = "Anthropic"

    def __init__(self) -> None:
        self._message: Json | None = None
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self.done = False
        """``message_stop`` was read."""

    def feed_object(self, raw: object) -> list[StreamEvent]:
        """One event's data (a dict, or an SDK stream event object)."""
        data = obj(raw, "event")
        kind = data.get("type")
        if kind == "content_block_delta":
            return self._delta(self._block(data), obj(data.get("delta"), "content_block_delta.delta"))
        if kind == "content_block_start":
            return self._start(data)
        if kind == "content_block_stop":
            return self._stop(self._block(data))
        if kind == "message_start":
            self._message = dict(obj(data.get("message"), "message_start.message"))
            self._message["usage"] = dict(self._message.get("usage") or {})
        elif kind == "message_delta":
            message = self._started(kind)
            message.update(data.get("delta") or {})
            # Usage here is cumulative: its counts replace the ones message_start gave.
            message["usage"].update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self._started(kind)
            self.done = True
        elif kind == "error":
            raise _stream_error(data.get("error"))
        return []  # ping, and event types added after this was written

    def _started(self, kind: str) -> Json:
        if self._message is None:
            raise self.malformed(f"{kind} before message_start")
        return self._message

    def _block(self, data: Json) -> _Block:
        index = data.get("index")
        block = self._blocks.get(index) if isinstance(index, int) else None
        if block is None or block.stopped:
            raise self.malformed(f"{data.get('type')} for content block {index!r}, which is not open")
        return block

    def _start(self, data: Json) -> list[StreamEvent]:
        self._started("content_block_start")
        index = data.get("index")
        if not isinstance(index, int) or index in self._blocks:
            raise self.malformed(f"content_block_start with index {index!r}, which is missing or already used")
        block = _Block(data=dict(obj(data.get("content_block"), "content_block_start.content_block")))
        self._blocks[index] = block
        kind = block.data.get("type")
        if kind == "tool_use":
            block.call_index, self._calls = self._calls, self._calls + 1
            return [CallStarted(index=block.call_index, id=block.data.get("id", ""), name=block.data.get("name", ""))]
        if kind == "text" and block.data.get("text"):
            return [TextChunk(text=block.data["text"])]
        return []

    def _delta(self, block: _Block, delta: Json) -> list[StreamEvent]:
        kind, data = delta.get("type"), block.data
        if kind == "text_delta":
            data["text"] = data.get("text", "") + delta.get("text", "")
            return [TextChunk(text=delta.get("text", ""))]
        if kind == "input_json_delta":
            piece = delta.get("partial_json", "")
            block.json.append(piece)
            if block.call_index is not None and piece:
                return [ArgsChunk(index=block.call_index, text=piece)]
        elif kind == "thinking_delta":
            data["thinking"] = data.get("thinking", "") + delta.get("thinking", "")
        elif kind == "signature_delta":
            data["signature"] = delta.get("signature", "")
        elif kind == "citations_delta":
            data["citations"] = [*(data.get("citations") or ()), delta.get("citation")]
        return []

    def _stop(self, block: _Block) -> list[StreamEvent]:
        block.stopped = True
        data = block.data
        if data.get("type") in _INPUT_BLOCKS and block.json:
            text = "".join(block.json)
            try:
                data["input"] = orjson.loads(text) if text.strip() else {}
            except orjson.JSONDecodeError as exc:
                raise self.malformed(f"the input of {data.get('name')!r} is not JSON ({exc}): {text[:200]!r}") from None
        if block.call_index is None:
            return []
        call = ToolCall(id=data.get("id", ""), name=data.get("name", ""), arguments=obj(data.get("input"), "input"))
        return [CallComplete(index=block.call_index, call=call)]

    def response(self) -> Json:
        """The ``message`` object received so far."""
        message = self._started("the end of the stream")
        return {**message, "content": [self._blocks[i].data for i in sorted(self._blocks)]}

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before ``message_stop``."""
        if self._message is None or not self.done:
            got = "nothing" if self._message is None else f"{len(self._blocks)} content blocks"
            raise self.cut_short("message_stop", got)
        if any(not b.stopped for b in self._blocks.values()):
            raise self.malformed("message_stop while a content block was still open")
        return anthropic.response_from_wire(self.response())


def _stream_error(error: object) -> ProviderError:
    kind = error.get("type") if isinstance(error, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    status = _ERROR_STATUS.get(kind, 400) if isinstance(kind, str) else 0
    text = message if isinstance(message, str) else repr(error)
    return ProviderError(
        f"the Anthropic stream reported an error: {text} ({kind})",
        status=status,
        body=orjson.dumps(error).decode(),
        retryable=status >= 500 or status == 429,
    )


def response_to_events(response: ModelResponse, *, chunk_size: int = 16) -> list[tuple[str, Json]]:
    """The ``(event name, data)`` pairs Anthropic would stream for ``response``."""
    full = anthropic.response_to_wire(response)
    usage = full["usage"]
    start = {**full, "content": [], "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 0}}
    events: list[tuple[str, Json]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(full["content"]):
        events += _block_events(index, block, chunk_size)
    delta = {"stop_reason": full["stop_reason"], "stop_sequence": full.get("stop_sequence")}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _block_events(index: int, block: Json, size: int) -> list[tuple[str, Json]]:
    kind = block.get("type")
    first, deltas = block, []
    if kind == "text":
        first = {**block, "text": ""}
        first.pop("citations", None)
        deltas = [{"type": "citations_delta", "citation": c} for c in block.get("citations") or ()]
        deltas += [{"type": "text_delta", "text": piece} for piece in split(block["text"], size)]
    elif kind in _INPUT_BLOCKS:
        first = {**block, "input": {}}
        text = orjson.dumps(block.get("input") or {}).decode()
        deltas = [{"type": "input_json_delta", "partial_json": piece} for piece in split(text, size)]
    elif kind == "thinking":
        first = {k: v for k, v in block.items() if k != "signature"}
        first["thinking"] = ""
        deltas = [{"type": "thinking_delta", "thinking": piece} for piece in split(block.get("thinking", ""), size)]
        if "signature" in block:
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
    out: list[tuple[str, Json]] = [
        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": first})
    ]
    out += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return out
