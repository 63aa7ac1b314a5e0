"""Models for tests and offline demos: they follow a script or a function instead of a neural network.

These are public API: test your own tools and loops with them instead of mocking toolslip.

* :class:`ScriptedModel` replays a list of turns (tool calls or answers) and records every request it
  was sent, so a test can assert on what the loop really sent (tools re-offered, results paired...).
* :class:`FunctionModel` answers with whatever a function of the request returns, for one-off cases.
* :class:`StreamedModel` makes either of them stream: each answer is cut into text and argument deltas.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .errors import ScriptExhausted
from .messages import Message, ModelResponse, Part, Request, ToolCall, Usage
from .model import Model
from .streaming import StreamEvent, response_to_events

__all__ = [
    "FunctionModel",
    "ScriptedModel",
    "StreamedModel",
    "Turn",
    "call",
    "last_results",
    "raw_call",
    "reply",
    "to_response",
]

_ids = itertools.count(1)


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A well-formed slip: ``call("fx", amount=320, currency="USD")``."""
    return ToolCall(
        id=f"call_{next(_ids)}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments, ensure_ascii=False)
    )


def raw_call(name: str, raw_arguments: str) -> ToolCall:
    """A slip whose arguments are whatever text the model wrote, malformed JSON included."""
    try:
        parsed = json.loads(raw_arguments)
    except json.JSONDecodeError:
        parsed = None
    return ToolCall(
        id=f"call_{next(_ids)}",
        name=name,
        arguments=parsed if isinstance(parsed, dict) else None,
        raw_arguments=raw_arguments,
    )


def reply(text: str) -> Message:
    """An answer with no tool call: it ends the run."""
    return Message.assistant(text)


Turn: TypeAlias = Message | ModelResponse | str | ToolCall | Iterable[ToolCall]


def to_response(turn: Turn, usage: Usage | None = None) -> ModelResponse:
    """Normalise a scripted turn to a :class:`ModelResponse` with the stop reason a provider would give."""
    if isinstance(turn, ModelResponse):
        return turn
    if isinstance(turn, str):
        message = Message.assistant(turn)
    elif isinstance(turn, ToolCall):
        message = Message.assistant(calls=[turn])
    elif isinstance(turn, Message):
        message = turn
    else:
        message = Message.assistant(calls=list(turn))
    # Fresh ids per replay: the same script may run many times and ids must stay unique in a transcript.
    parts: list[Part] = [
        ToolCall(id=f"call_{next(_ids)}", name=p.name, arguments=p.arguments, raw_arguments=p.raw_arguments)
        if isinstance(p, ToolCall)
        else p
        for p in message.parts
    ]
    message = Message(role="assistant", parts=tuple(parts), name=message.name, extra=message.extra)
    return ModelResponse(
        message=message,
        stop_reason="tool_use" if message.tool_calls else "end_turn",
        usage=usage or Usage(input_tokens=0, output_tokens=0),
    )


@dataclass(eq=False)
class ScriptedModel:
    """Replays ``turns`` in order, one per request; records each request in ``requests``.

    Use ``cycle=True`` to start over after the last turn (useful when one scripted model serves many runs
    concurrently, e.g. in benchmarks; then each run should use its own instance or a stateless script).
    """

    turns: list[Turn]
    name: str = "scripted"
    cycle: bool = False
    requests: list[Request] = field(default_factory=list)
    _position: int = 0

    async def complete(self, request: Request) -> ModelResponse:
        self.requests.append(request)
        if self._position >= len(self.turns):
            if not self.cycle:
                raise ScriptExhausted(
                    f"the scripted model has {len(self.turns)} turns and was asked for turn {self._position + 1}"
                )
            self._position = 0
        turn = self.turns[self._position]
        self._position += 1
        return to_response(turn)


Responder: TypeAlias = Callable[[Request], Turn | Awaitable[Turn]]


@dataclass(eq=False)
class FunctionModel:
    """Answers each request with ``fn(request)`` (sync or async), normalised like a scripted turn."""

    fn: Responder
    name: str = "function"

    async def complete(self, request: Request) -> ModelResponse:
        turn = self.fn(request)
        if inspect.isawaitable(turn):
            turn = await turn
        return to_response(turn)


@dataclass(eq=False)
class StreamedModel:
    """``model``, streaming: each answer comes as ``chunk_size``-character text and argument deltas.

    ``StreamedModel(ScriptedModel([...]))`` drives the loop's streaming path without a server.
    """

    model: Model
    chunk_size: int = 8

    @property
    def name(self) -> str:
        return self.model.name

    async def complete(self, request: Request) -> ModelResponse:
        return await self.model.complete(request)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        for event in response_to_events(await self.model.complete(request), self.chunk_size):
            yield event


def last_results(request: Request) -> Mapping[str, str]:
    """``{call_id: result text}`` of the results in the request's last message (for FunctionModels)."""
    last = request.messages[-1] if request.messages else None
    if last is None or last.role != "tool":
        return {}
    return {r.call_id: r.text for r in last.tool_results}
