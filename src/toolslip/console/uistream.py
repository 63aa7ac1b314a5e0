"""``POST /api/chat``: a toolslip run streamed to a front-end in the Vercel AI SDK's UI message stream.

The protocol is the one the ``ai`` package's ``useChat`` (``AbstractChat`` with ``DefaultChatTransport``)
consumes: Server-Sent Events whose ``data`` is one JSON chunk each (``start``, ``start-step``,
``text-start``/``text-delta``/``text-end``, ``tool-input-available``, ``tool-output-available``,
``tool-approval-request``, ``tool-output-denied``, ``finish-step``, ``finish``), then ``[DONE]``, with the
header ``x-vercel-ai-ui-message-stream: v1``.

Tool approvals go through the journal's inbox, so the approved call runs exactly once: the agent runs with
an :class:`~toolslip.Approval` that has no approver, so a side-effecting call holds and the run pauses; the
stream sends ``tool-approval-request`` whose ``approvalId`` names the run, the step, the call and the hash
of its arguments. When the user answers, ``useChat`` posts the messages again with the tool part in state
``approval-responded``; the answer is recorded as a decision bound to that hash (who: ``ui-stream``, the
reason the user gave goes to the model), and the run is resumed from its journal, the rest streamed on.
A new user message starts a new run from the whole conversation, earlier tool calls and results included
(:mod:`~toolslip.console.uimessages`).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from ..core.events import Event, ModelResponded, TextDelta, ToolFinished
from ..core.messages import Reasoning, ToolCall
from ..durable.inbox import DecisionRefused, call_hash, decide
from .uimessages import BadUIMessages, ui_transcript

if TYPE_CHECKING:
    from .state import Console

__all__ = ["UI_HEADERS", "add_stream_routes", "approval_id", "read_approval_id"]

UI_HEADERS = {
    "Content-Type": "text/event-stream",
    "Cache-Control": "no-cache",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
_WHO = "ui-stream"


def approval_id(run_id: str, step: int, call: ToolCall) -> str:
    """What the front-end sends back with its answer: the run, step and call, and the hash of the arguments."""
    shown = call_hash(run_id, step, call.id, call.name, call.arguments or {})
    return base64.urlsafe_b64encode(orjson.dumps([run_id, step, call.id, shown])).decode().rstrip("=")


def read_approval_id(text: str) -> tuple[str, int, str, str] | None:
    try:
        run_id, step, call_id, shown = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, orjson.JSONDecodeError, TypeError):
        return None
    return str(run_id), int(step), str(call_id), str(shown)


def add_stream_routes(app: web.Application, console: Console) -> None:
    async def chat(request: web.Request) -> web.StreamResponse:
        return await _chat(request, console)

    app.router.add_post("/api/chat", chat)


async def _chat(request: web.Request, console: Console) -> web.StreamResponse:
    if console.agent is None or console.journal is None:
        return web.json_response(
            {"error": "this console runs no agent: start it with --model (and --tools) to stream runs"}, status=404
        )
    try:
        body = orjson.loads(await request.read())
        messages = body["messages"]
        assert isinstance(messages, list)
    except (orjson.JSONDecodeError, KeyError, TypeError, AssertionError):
        return web.json_response({"error": "the body must be useChat's: {id, messages: [...]}"}, status=400)
    try:
        transcript = ui_transcript(messages)
    except BadUIMessages as exc:
        return web.json_response({"error": str(exc)}, status=400)
    answers = _answers(messages)
    response = web.StreamResponse(headers=UI_HEADERS)
    await response.prepare(request)
    run_id = answers[0][0] if answers else f"chat-{uuid.uuid4().hex[:12]}"
    stream = _Stream(response, run_id)
    try:
        if answers:
            for run, _step, call_id, shown, approved, reason in answers:
                with contextlib.suppress(DecisionRefused):  # answered already (a retried request): go on
                    await console.db(
                        decide, console.store, run, call_id, shown=shown, approved=approved, note=reason, by=_WHO
                    )
            await stream.send({"type": "start"})
            result = await console.journal.resume(console.agent, run_id, on_event=stream.event)
        else:
            await stream.send({"type": "start", "messageId": f"msg-{run_id}"})
            result = await console.agent.arun(transcript, run_id=run_id, on_event=stream.event)
        await stream.drain()
        await stream.send({"type": "finish", "finishReason": _finish_reason(result.stop_reason)})
    except Exception as exc:  # the front-end shows the error; the run's journal says the rest
        await stream.drain()
        await stream.send({"type": "error", "errorText": f"{type(exc).__name__}: {exc}"})
    await response.write(b"data: [DONE]\n\n")
    return response


def _answers(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, str, str, bool, str]]:
    """The approvals the user answered in the last assistant message: (run, step, call, shown, approved, reason)."""
    last = messages[-1] if messages else {}
    if last.get("role") != "assistant":
        return []
    out = []
    for part in last.get("parts", ()):
        approval = part.get("approval") or {}
        if part.get("state") == "approval-responded" and (key := read_approval_id(str(approval.get("id", "")))):
            out.append((*key, bool(approval.get("approved")), str(approval.get("reason") or "")))
    return out


def _finish_reason(stop: str) -> str:
    return {"completed": "stop", "paused": "tool-calls", "max_steps": "length", "refusal": "content-filter"}.get(
        stop, "other"
    )


class _Stream:
    """Turns the run's events into UI message chunks, in order, on one writer task."""

    def __init__(self, response: web.StreamResponse, run_id: str) -> None:
        self.response = response
        self.run_id = run_id
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.writer = asyncio.create_task(self._write())
        self.open_step: int | None = None
        self.text: str | None = None
        """The id of the text part being streamed, if one is open."""

    async def send(self, chunk: dict[str, Any]) -> None:
        await self.response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")

    async def _write(self) -> None:
        while (chunk := await self.queue.get()) is not None:
            await self.send(chunk)

    def _step(self, step: int) -> None:
        """Open ``step`` (closing the one before): the front-end shows each model step as its own part."""
        if self.open_step != step:
            if self.open_step is not None:
                self.queue.put_nowait({"type": "finish-step"})
            self.queue.put_nowait({"type": "start-step"})
            self.open_step = step

    async def drain(self) -> None:
        if self.open_step is not None:
            self.queue.put_nowait({"type": "finish-step"})
            self.open_step = None
        self.queue.put_nowait(None)
        await self.writer

    def event(self, event: Event) -> None:
        """One run event as its chunks: text as it streams, each step's calls, each call's outcome."""
        put = self.queue.put_nowait
        if isinstance(event, TextDelta):
            self._step(event.step)
            if self.text is None:
                self.text = f"t{event.step}"
                put({"type": "text-start", "id": self.text})
            put({"type": "text-delta", "id": self.text, "delta": event.text})
        elif isinstance(event, ModelResponded) and not event.replayed:
            self._step(event.step)
            message = event.response.message
            for n, part in enumerate(message.parts):
                if isinstance(part, Reasoning) and part.text:
                    rid = f"r{event.step}-{n}"
                    put({"type": "reasoning-start", "id": rid})
                    put({"type": "reasoning-delta", "id": rid, "delta": part.text})
                    put({"type": "reasoning-end", "id": rid})
            if self.text is None and message.text:  # not streamed: the whole text at once
                self.text = f"t{event.step}"
                put({"type": "text-start", "id": self.text})
                put({"type": "text-delta", "id": self.text, "delta": message.text})
            if self.text is not None:
                put({"type": "text-end", "id": self.text})
                self.text = None
            for call in message.tool_calls:
                chunk = {"type": "tool-input-available", "toolCallId": call.id, "toolName": call.name}
                put({**chunk, "input": call.arguments})
        elif isinstance(event, ToolFinished) and event.note != "replayed":
            result = event.result
            if result.outcome == "held" and event.note == "pending":
                key = approval_id(self.run_id, event.step, event.call)
                put({"type": "tool-approval-request", "approvalId": key, "toolCallId": event.call.id})
            elif result.outcome == "held":
                pass  # queued behind a pending call of the same turn: it is asked about when its turn comes
            elif result.outcome == "refused" and event.note == "denied":
                put({"type": "tool-output-denied", "toolCallId": event.call.id})
            elif result.is_error:
                put({"type": "tool-output-error", "toolCallId": event.call.id, "errorText": result.text})
            else:
                put({"type": "tool-output-available", "toolCallId": event.call.id, "output": result.text})
