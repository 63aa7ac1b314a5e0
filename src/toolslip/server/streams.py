"""A whole Converse or Ollama answer cut into the chunks each service streams (Gemini's: ``gemini_stream``).

``toolslip serve`` has the model's whole answer before it streams (as for the other wires), so a stream is
the answer's wire body cut up the way the service cuts it, which is what each SDK's stream reader
expects:

* Converse: ``messageStart``, then per content block ``contentBlockStart`` (tool use only),
  ``contentBlockDelta`` pieces (text, a tool's input as JSON text, reasoning text and its signature),
  ``contentBlockStop``; then ``messageStop`` with ``stopReason`` and ``metadata`` with ``usage`` and
  ``metrics``.
* Ollama: chunks ``{"model", "created_at", "message": {...}, "done": false}`` with a piece of text or
  thinking, the tool calls in one chunk, then a last ``"done": true`` chunk with an empty message, the
  ``done_reason`` and the counters.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import orjson

from ..core.streaming import split

__all__ = ["PIECE", "converse_events", "ollama_chunks"]

PIECE = 8
"""Characters of text per streamed piece: small, so a client's delta handling is exercised."""


def converse_events(body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(eventType, payload)`` of the ConverseStream events for a whole Converse answer."""
    message = (body.get("output") or {}).get("message") or {}
    events: list[tuple[str, dict[str, Any]]] = [("messageStart", {"role": message.get("role", "assistant")})]
    for index, block in enumerate(message.get("content") or ()):
        events += _block_events(index, block)
    events.append(("messageStop", {"stopReason": body.get("stopReason", "end_turn")}))
    metadata: dict[str, Any] = {key: body[key] for key in ("usage", "metrics", "trace") if key in body}
    events.append(("metadata", metadata))
    return events


def _block_events(index: int, block: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    def delta(value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "contentBlockDelta", {"contentBlockIndex": index, "delta": value}

    if "toolUse" in block:
        use = block["toolUse"]
        yield (
            "contentBlockStart",
            {
                "contentBlockIndex": index,
                "start": {"toolUse": {"toolUseId": use.get("toolUseId"), "name": use.get("name")}},
            },
        )
        arguments = orjson.dumps(use.get("input", {})).decode()
        for piece in split(arguments, PIECE):
            yield delta({"toolUse": {"input": piece}})
    elif "text" in block:
        for piece in split(block["text"], PIECE):
            yield delta({"text": piece})
    elif "reasoningContent" in block:
        reasoning = block["reasoningContent"]
        text = reasoning.get("reasoningText") or {}
        for piece in split(text.get("text", ""), PIECE):
            yield delta({"reasoningContent": {"text": piece}})
        if text.get("signature"):
            yield delta({"reasoningContent": {"signature": text["signature"]}})
        if reasoning.get("redactedContent"):
            yield delta({"reasoningContent": {"redactedContent": reasoning["redactedContent"]}})
    else:  # a block ConverseStream has no delta for (an image, a citation): whole, as one delta
        yield delta(copy.deepcopy(block))
    yield "contentBlockStop", {"contentBlockIndex": index}


def ollama_chunks(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The NDJSON chunks of a whole ``/api/chat`` answer."""
    message = body.get("message") or {}
    head = {"model": body.get("model"), "created_at": body.get("created_at")}
    role = message.get("role", "assistant")
    chunks = []
    for field in ("thinking", "content"):
        for piece in split(message.get(field) or "", PIECE):
            chunks.append({**head, "message": {"role": role, "content": "", field: piece}, "done": False})
    if message.get("tool_calls"):
        chunks.append(
            {**head, "message": {"role": role, "content": "", "tool_calls": message["tool_calls"]}, "done": False}
        )
    last = {key: value for key, value in body.items() if key != "message"}
    chunks.append({**last, "message": {"role": role, "content": ""}, "done": True})
    return chunks
