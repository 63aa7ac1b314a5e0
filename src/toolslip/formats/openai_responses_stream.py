"""Streaming the OpenAI Responses API (``"stream": true``): named, numbered semantic events, both ways.

What is particular to this stream:

- Every event is a named SSE event (``event: response.output_text.delta``) whose data repeats the name in
  ``type`` and carries a ``sequence_number`` counting from 0. There is no ``[DONE]``: the stream ends with
  the terminal event ``response.completed``, ``response.incomplete`` or ``response.failed``, whose
  ``response`` is the whole response object the non-streaming call returns.
- ``response.created`` and ``response.in_progress`` carry the response with ``status: in_progress`` and
  no output. Each output item is opened by ``response.output_item.added`` (``output_index``; a message
  with empty ``content``, a function call with empty ``arguments``) and closed by
  ``response.output_item.done`` with the finished item.
- Inside a message item, each content part is ``response.content_part.added`` (empty text), the
  ``response.output_text.delta`` pieces (``refusal.delta`` for a refusal), ``response.output_text.done``
  and ``response.content_part.done``; ``item_id`` and ``content_index`` say where a piece goes.
- A function call's arguments arrive as ``response.function_call_arguments.delta`` pieces, then
  ``response.function_call_arguments.done`` with the whole text. The call's ``call_id`` and ``name`` are
  in the item that ``output_item.added`` opens, so a call is announced before its arguments.
- Reasoning and hosted-tool items have progress events of their own (``reasoning_summary_text.delta``,
  ``web_search_call.searching``...); their finished item comes in ``output_item.done``.
- An ``error`` event (``{"type": "error", "code", "message", "param"}``) ends a stream that failed.

:class:`Accumulator` keeps the items as they are built and takes the terminal event's response as the
answer, so both paths give the same neutral response (a compatible server that leaves the terminal
response's ``output`` empty gets the streamed items). :func:`response_to_events` goes the other way,
for ``toolslip serve``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ..core.errors import ProviderError
from ..core.messages import ModelResponse
from ..core.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk, split
from . import openai_responses
from ._responses_items import call_from_wire
from ._stream import JsonStream
from ._wire import Json, obj, seq, text

__all__ = ["NAME", "TERMINAL", "Accumulator", "response_to_events", "stream_body"]

NAME = openai_responses.NAME
TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
"""The events that end a stream properly, each with the whole response."""
_STARTED = frozenset({"response.created", "response.in_progress", "response.queued"})


def stream_body(body: Mapping[str, Any]) -> Json:
    return {**body, "stream": True}


class Accumulator(JsonStream):
    """Feed it the stream's events; :meth:`finish` gives the response, or says why the stream is broken."""

    SERVICE = "OpenAI Responses"

    def __init__(self) -> None:
        self._head: Json | None = None
        self._final: Json | None = None
        self._items: dict[int, Json] = {}
        self._calls: dict[int, int] = {}  # output_index -> the call's index among the response's calls
        self.done = False
        """A terminal event (``response.completed``, ``.incomplete`` or ``.failed``) was read."""

    def feed_object(self, raw: object) -> list[StreamEvent]:
        """One event's data (a dict, or the SDK's event object)."""
        data = obj(raw, "event")
        kind = data.get("type")
        if kind == "response.output_text.delta":
            piece = text(data.get("delta"), f"{kind}.delta")
            part = self._part(data)
            part["text"] = part.get("text", "") + piece
            return [TextChunk(text=piece)] if piece else []
        if kind == "response.function_call_arguments.delta":
            piece = text(data.get("delta"), f"{kind}.delta")
            item = self._item(data)
            item["arguments"] = item.get("arguments", "") + piece
            index = self._calls.get(data["output_index"])
            return [ArgsChunk(index=index, text=piece)] if index is not None and piece else []
        if kind == "response.refusal.delta":
            part = self._part(data)
            part["refusal"] = part.get("refusal", "") + text(data.get("delta"), f"{kind}.delta")
        elif kind == "response.content_part.added":
            content = self._item(data).setdefault("content", [])
            content.append(dict(obj(data.get("part"), f"{kind}.part")))
        elif kind == "response.output_item.added":
            return self._added(data)
        elif kind == "response.output_item.done":
            return self._finished(data)
        elif kind in _STARTED:
            self._head = dict(obj(data.get("response"), f"{kind}.response"))
        elif kind in TERMINAL:
            self._final = dict(obj(data.get("response"), f"{kind}.response"))
            self.done = True
        elif kind == "error":
            raise _stream_error(data)
        return []  # the .done events repeat what the deltas built; progress events of hosted tools

    def _started(self, kind: str) -> Json:
        if self._head is None:
            raise self.malformed(f"{kind} before response.created")
        return self._head

    def _item(self, data: Json) -> Json:
        index = data.get("output_index")
        item = self._items.get(index) if isinstance(index, int) else None
        if item is None:
            raise self.malformed(f"{data.get('type')} for output item {index!r}, which was never added")
        return item

    def _part(self, data: Json) -> Json:
        content = self._item(data).get("content")
        index = data.get("content_index")
        if not isinstance(content, list) or not isinstance(index, int) or not 0 <= index < len(content):
            raise self.malformed(f"{data.get('type')} for content part {index!r}, which was never added")
        return obj(content[index], "content")

    def _added(self, data: Json) -> list[StreamEvent]:
        self._started("response.output_item.added")
        index = data.get("output_index")
        if not isinstance(index, int) or index in self._items:
            raise self.malformed(f"response.output_item.added with output_index {index!r}, missing or already used")
        item = self._items[index] = dict(obj(data.get("item"), "response.output_item.added.item"))
        if "content" in item:
            item["content"] = [dict(obj(p, "item.content[]")) for p in seq(item["content"], "item.content")]
        if item.get("type") != "function_call":
            return []
        call = self._calls[index] = len(self._calls)
        return [CallStarted(index=call, id=item.get("call_id", ""), name=item.get("name", ""))]

    def _finished(self, data: Json) -> list[StreamEvent]:
        self._item(data)
        item = self._items[data["output_index"]] = dict(obj(data.get("item"), "response.output_item.done.item"))
        call = self._calls.get(data["output_index"])
        if call is None:
            return []
        return [CallComplete(index=call, call=call_from_wire(item, "function_call"))]

    def response(self) -> Json:
        """The response object: the terminal event's, else the one received so far with the items built."""
        if self._final is not None and self._final.get("output"):
            return self._final
        head = self._final or self._started("the end of the stream")
        return {**head, "output": [self._items[i] for i in sorted(self._items)]}

    def response_object(self) -> ModelResponse:
        """The whole response; :class:`ProviderError` when the stream stopped before its terminal event."""
        if not self.done:
            got = "nothing" if self._head is None else f"{len(self._items)} output items"
            raise self.cut_short("response.completed", got)
        return openai_responses.response_from_wire(self.response())


def _stream_error(data: Json) -> ProviderError:
    message = data.get("message")
    code = data.get("code")
    said = message if isinstance(message, str) else orjson.dumps(data).decode()
    return ProviderError(
        f"the OpenAI Responses stream reported an error: {said}" + (f" ({code})" if code else ""),
        body=orjson.dumps(data).decode(),
        retryable=True,  # an error after the response began is the service failing mid-answer
    )


def response_to_events(response: ModelResponse, *, chunk_size: int = 16) -> list[tuple[str, Json]]:
    """The ``(event name, data)`` pairs the Responses API would stream for ``response``, numbered from 0."""
    full = openai_responses.response_to_wire(response)
    start = {**full, "status": "in_progress", "incomplete_details": None, "output": [], "usage": None}
    events: list[Json] = [
        {"type": "response.created", "response": start},
        {"type": "response.in_progress", "response": start},
    ]
    for index, item in enumerate(full["output"]):
        events += _item_events(index, item, chunk_size)
    status = full["status"]
    end = f"response.{status}" if f"response.{status}" in TERMINAL else "response.completed"
    events.append({"type": end, "response": full})
    return [(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)]


def _item_events(index: int, item: Json, size: int) -> list[Json]:
    kind, where = item.get("type"), {"item_id": item.get("id", ""), "output_index": index}
    opened: Json = item
    inner: list[Json] = []
    if kind == "message" and isinstance(item.get("content"), list):
        opened = {**item, "status": "in_progress", "content": []}
        for j, part in enumerate(item["content"]):
            inner += _part_events({**where, "content_index": j}, part, size)
    elif kind == "function_call":
        opened = {**item, "status": "in_progress", "arguments": ""}
        arguments = item["arguments"]
        inner = [
            {"type": "response.function_call_arguments.delta", **where, "delta": p} for p in split(arguments, size)
        ]
        inner.append(
            {"type": "response.function_call_arguments.done", **where, "name": item["name"], "arguments": arguments}
        )
    return [
        {"type": "response.output_item.added", "output_index": index, "item": opened},
        *inner,
        {"type": "response.output_item.done", "output_index": index, "item": item},
    ]


def _part_events(where: Json, part: Json, size: int) -> list[Json]:
    kind = part.get("type")
    opened, inner = part, []
    if kind == "output_text":
        opened = {**part, "text": "", "annotations": []}
        pieces = split(part["text"], size)
        inner = [{"type": "response.output_text.delta", **where, "delta": p, "logprobs": []} for p in pieces]
        inner.append({"type": "response.output_text.done", **where, "text": part["text"], "logprobs": []})
    elif kind == "refusal":
        opened = {**part, "refusal": ""}
        inner = [{"type": "response.refusal.delta", **where, "delta": p} for p in split(part["refusal"], size)]
        inner.append({"type": "response.refusal.done", **where, "refusal": part["refusal"]})
    return [
        {"type": "response.content_part.added", **where, "part": opened},
        *inner,
        {"type": "response.content_part.done", **where, "part": part},
    ]
