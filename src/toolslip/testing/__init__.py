"""Models for tests and offline demos: they follow a script or a function instead of a neural network.

These are public API: test your own tools and loops with them instead of mocking toolslip.

* :class:`ScriptedModel` replays a list of turns (tool calls or answers) and records every request it
  was sent, so a test can assert on what the loop really sent (tools re-offered, results paired...).
* :class:`FunctionModel` answers with whatever a function of the request returns, for one-off cases.
* :class:`StreamedModel` makes either of them stream: each answer is cut into text and argument deltas.
* :class:`GullibleModel` obeys every instruction it finds in a tool result: the worst case for prompt
  injection, for testing what the harness (not the model) guarantees.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from ..core.errors import ScriptExhausted
from ..core.messages import ModelResponse, Request
from ..core.model import Model
from ..core.streaming import StreamEvent, response_to_events
from ..providers.scripted import Turn, call, call_ids, raw_call, reply, to_response
from .gullible import GullibleModel, instructions, json_in

__all__ = [
    "FunctionModel",
    "GullibleModel",
    "ScriptedModel",
    "StreamedModel",
    "Turn",
    "call",
    "call_ids",
    "instructions",
    "json_in",
    "last_results",
    "raw_call",
    "reply",
    "to_response",
]


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
        return to_response(turn, taken=call_ids(request))


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
        return to_response(turn, taken=call_ids(request))


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
