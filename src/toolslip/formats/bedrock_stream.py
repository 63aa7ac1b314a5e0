"""Streaming Bedrock Converse (``/model/{modelId}/converse-stream``): the decoded events, both ways.

The service frames its answer in AWS's binary event-stream encoding, not SSE; undoing that framing is the
transport's job (botocore does it). What reaches this module is each event as ``{event type: payload}``,
the shape boto3 yields:

- ``messageStart`` (``role``); per content block ``contentBlockStart`` (only for a ``toolUse``: its id and
  name, and a server tool's ``toolResult``: its id, type and status), ``contentBlockDelta`` (``text``,
  ``toolUse.input`` JSON text pieces, ``toolResult`` content pieces, ``reasoningContent`` text, signature or
  redacted bytes), ``contentBlockStop``; ``messageStop`` (``stopReason``); ``metadata``
  (``usage``, ``metrics``, ``trace``) last.
- An exception event (``internalServerException``, ``modelStreamErrorException``,
  ``throttlingException``, ``validationException``, ``serviceUnavailableException``) ends the stream.

:class:`Accumulator` rebuilds the ``converse`` answer and reads it with
:func:`~toolslip.formats.bedrock.response_from_wire`, so both paths give the same neutral response.
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
from . import bedrock
from ._stream import JsonStream
from ._wire import Json, obj

__all__ = ["NAME", "Accumulator", "response_to_events", "stream_body"]

NAME = bedrock.NAME
_ERRORS = {
    "internalServerException": 500,
    "modelStreamErrorException": 424,
    "throttlingException": 429,
    "validationException": 400,
    "serviceUnavailableException": 503,
}


def stream_body(body: Mapping[str, Any]) -> Json:
    """The body of a ``converse-stream`` call: the same as ``converse`` (the path differs)."""
    return dict(body)


@dataclass
class _Block:
    data: Json = field(default_factory=dict)
    text: list[str] = field(default_factory=list)
    call_index: int | None = None
    server: bool = False
    """A server tool's call (Converse's ``type: server_tool_use``): the service runs it; no call events."""
    stopped: bool = False


class Accumulator(JsonStream):
    """Feed it the decoded events (:meth:`feed_event`); :meth:`finish` gives the response."""

    SERVICE = "Bedrock"

    def __init__(self) -> None:
        self._role: Any = None
        self._blocks: dict[int, _Block] = {}
        self._calls = 0
        self._stop: Json | None = None
        self._metadata: Json = {}
        self.done = False
        """``messageStop`` was read."""

    def feed_event(self, kind: str, payload: object) -> list[StreamEvent]:
        """One event as the transport decoded it: its ``:event-type`` header and JSON payload."""
        return self.feed_object({kind: payload})

    def feed_object(self, raw: object) -> list[StreamEvent]:
        """One event, ``{event type: payload}`` (the shape boto3 yields)."""
        event = obj(raw, "event")
        events: list[StreamEvent] = []
        for kind, payload in event.items():
            if kind in _ERRORS:
                raise _stream_error(kind, payload)
            data = obj(payload, kind)
            if kind == "messageStart":
                self._role = data.get("role", "assistant")
            elif kind == "contentBlockStart":
                events += self._start(data)
            elif kind == "contentBlockDelta":
                events += self._delta(self._block(data, kind), obj(data.get("delta"), f"{kind}.delta"))
            elif kind == "contentBlockStop":
                events += self._end(self._block(data, kind))
            elif kind == "messageStop":
                self._stop = dict(data)
                self.done = True
            elif kind == "metadata":
                self._metadata = dict(data)
        return events

    def _block(self, data: Json, kind: str) -> _Block:
        index = data.get("contentBlockIndex")
        if not isinstance(index, int):
            raise self.malformed(f"{kind} without a contentBlockIndex")
        block = self._blocks.setdefault(index, _Block())  # text blocks have no start event
        if block.stopped:
            raise self.malformed(f"{kind} for content block {index}, which has stopped")
        return block

    def _start(self, data: Json) -> list[StreamEvent]:
        block = self._block(data, "contentBlockStart")
        start = obj(data.get("start") or {}, "contentBlockStart.start")
        use = start.get("toolUse")
        if isinstance(use, dict) and use.get("type") == "server_tool_use":  # run by the service: no call events
            block.data = {"toolUse": {**use, "input": {}}}
            block.server = True
            return []
        if isinstance(use, dict):
            block.data = {"toolUse": {**use, "input": {}}}
            block.call_index, self._calls = self._calls, self._calls + 1
            return [
                CallStarted(index=block.call_index, id=str(use.get("toolUseId", "")), name=str(use.get("name", "")))
            ]
        block.data = dict(start)
        return []

    def _delta(self, block: _Block, delta: Json) -> list[StreamEvent]:
        if isinstance(delta.get("text"), str):
            block.data.setdefault("text", "")
            block.data["text"] += delta["text"]
            return [TextChunk(text=delta["text"])]
        use = delta.get("toolUse")
        if isinstance(use, dict) and (block.call_index is not None or block.server):
            piece = str(use.get("input", ""))
            block.text.append(piece)
            return [ArgsChunk(index=block.call_index, text=piece)] if piece and block.call_index is not None else []
        pieces = delta.get("toolResult")
        if isinstance(pieces, list):  # a server tool's result (web grounding...), in text and JSON pieces
            content: list[Json] = block.data.setdefault("toolResult", {}).setdefault("content", [])
            for piece in pieces:
                if isinstance(piece, dict) and isinstance(piece.get("text"), str) and content and "text" in content[-1]:
                    content[-1] = {"text": content[-1]["text"] + piece["text"]}
                elif isinstance(piece, dict):
                    content.append(dict(piece))
            return []
        reasoning = delta.get("reasoningContent")
        if isinstance(reasoning, dict):
            held = block.data.setdefault("reasoningContent", {})
            if "redactedContent" in reasoning:
                held["redactedContent"] = reasoning["redactedContent"]
            else:
                text = held.setdefault("reasoningText", {})
                if "text" in reasoning:
                    text["text"] = text.get("text", "") + str(reasoning["text"])
                if "signature" in reasoning:
                    text["signature"] = reasoning["signature"]
        return []

    def _end(self, block: _Block) -> list[StreamEvent]:
        block.stopped = True
        if block.call_index is None and not block.server:
            return []
        use = block.data["toolUse"]
        text = "".join(block.text)
        try:
            use["input"] = orjson.loads(text) if text.strip() else {}
        except orjson.JSONDecodeError as exc:
            raise self.malformed(f"the input of {use.get('name')!r} is not JSON ({exc}): {text[:200]!r}") from None
        if block.call_index is None:
            return []
        call = ToolCall(
            id=str(use.get("toolUseId", "")), name=str(use.get("name", "")), arguments=obj(use["input"], "input")
        )
        return [CallComplete(index=block.call_index, call=call)]

    def response(self) -> Json:
        """The ``converse`` answer received so far."""
        content = [self._blocks[i].data for i in sorted(self._blocks)]
        out: Json = {"output": {"message": {"role": self._role or "assistant", "content": content}}}
        if self._stop is not None:
            out.update(self._stop)
        out.update(self._metadata)
        return out

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before ``messageStop``."""
        if not self.done:
            raise self.cut_short("messageStop", f"{len(self._blocks)} content blocks" if self._blocks else "nothing")
        return bedrock.response_from_wire(self.response())


def _stream_error(kind: str, payload: object) -> ProviderError:
    message = payload.get("message") if isinstance(payload, dict) else None
    status = _ERRORS[kind]
    return ProviderError(
        f"the Bedrock stream reported {kind}: {message if isinstance(message, str) else payload!r}",
        status=status,
        body=orjson.dumps(payload).decode(),
        retryable=status >= 500 or status == 429,
    )


def response_to_events(response: ModelResponse, *, chunk_size: int = 16) -> list[tuple[str, Json]]:
    """The ``(event type, payload)`` pairs ConverseStream would send for ``response`` (unframed)."""
    full = bedrock.response_to_wire(response)
    message = full["output"].get("message") or {"role": "assistant", "content": []}
    events: list[tuple[str, Json]] = [("messageStart", {"role": message["role"]})]
    for index, block in enumerate(message["content"]):
        at = {"contentBlockIndex": index}
        if "toolUse" in block:
            use = block["toolUse"]
            start = {k: v for k, v in use.items() if k != "input"}  # its id, name and type (a server tool's)
            events.append(("contentBlockStart", {**at, "start": {"toolUse": start}}))
            text = orjson.dumps(use.get("input") or {}).decode()
            events += [
                ("contentBlockDelta", {**at, "delta": {"toolUse": {"input": p}}}) for p in split(text, chunk_size)
            ]
        elif "toolResult" in block:
            result = block["toolResult"]
            start = {k: v for k, v in result.items() if k != "content"}
            events.append(("contentBlockStart", {**at, "start": {"toolResult": start}}))
            if result.get("content"):
                events.append(("contentBlockDelta", {**at, "delta": {"toolResult": result["content"]}}))
        elif "text" in block:
            events += [("contentBlockDelta", {**at, "delta": {"text": p}}) for p in split(block["text"], chunk_size)]
        elif "reasoningContent" in block:
            events.append(
                ("contentBlockDelta", {**at, "delta": {"reasoningContent": _flat(block["reasoningContent"])}})
            )
        events.append(("contentBlockStop", at))
    stop = {k: v for k, v in full.items() if k in ("stopReason", "additionalModelResponseFields")}
    events.append(("messageStop", stop))
    metadata = {k: v for k, v in full.items() if k in ("usage", "metrics", "trace")}
    events.append(("metadata", {"metrics": {"latencyMs": 0}, **metadata}))
    return events


def _flat(reasoning: Json) -> Json:
    text = reasoning.get("reasoningText")
    if isinstance(text, dict):
        return dict(text)
    return dict(reasoning)
