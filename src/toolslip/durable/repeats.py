"""The repeated-call guard: an identical call is answered from memory, and a model stuck in a loop is
made to answer.

Small models (and sometimes large ones) call the same tool with the same arguments again and again
after the result is already in front of them; the 0.5B embedded model did so in every run without
this guard (0/8 answers) and answered in every run with it. So within one run, a call whose tool and
canonical arguments (validated, defaults filled in, keys sorted) equal an earlier successful call is
not executed again: the model gets the earlier result with a note saying so. ``max_repeats`` such
repeats are tolerated (default 0); the one after that makes the next model call go out with
``tool_choice="none"`` and a line asking for the answer, so the weather demo answers in 3 model calls.
That forced request leaves out the turns that held only repeated calls and their remembered answers
(the transcript keeps them): with them in, the 0.5B model's forced answer dropped the temperature
("The weather in Beijing is cloudy."); without them it kept it, in each weather question tried.

Failed calls are not remembered: the same call may succeed once the cause is fixed. Tools whose
output changes between identical calls (polling a job, reading a clock) belong in ``exempt``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..code.mode import INNER_CALLS
from ..core.errors import ArgumentError
from ..core.messages import Message, Request, Text, ToolCall, ToolResult
from ..providers.local_chat import ANSWER_PROMPT
from .dedup import canonical_json

if TYPE_CHECKING:
    from ..agent.tools import Tool

__all__ = ["RepeatGuard", "canonical_arguments"]


def canonical_arguments(call: ToolCall, tool: Tool | None) -> str | None:
    """The call's arguments as the tool will see them, as sorted JSON; ``None`` if they do not validate."""
    if call.arguments is None:
        return None
    arguments: Mapping[str, Any] = call.arguments
    if tool is not None:
        try:
            arguments = tool.validate(call.arguments)
        except ArgumentError:
            return None
    return canonical_json(arguments)


@dataclass(kw_only=True)
class _State:
    results: dict[tuple[str, str], asyncio.Future[ToolResult]] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    """Ids of the calls answered from an earlier result."""
    repeats: int = 0
    force_answer: bool = False


@dataclass(kw_only=True, eq=False)
class RepeatGuard(Hook):
    """Answer a repeated identical call with the earlier result; force an answer once repeats exceed max_repeats."""

    max_repeats: int = 0
    """Repeats allowed before the next step is forced to answer (0: the step after the first repeat)."""
    exempt: Collection[str] = ()
    """Names of tools whose identical calls must always run (their result changes over time)."""
    answer_prompt: str = ANSWER_PROMPT
    """Added after the tool results of the forced step (in the request only, not the transcript)."""

    def __post_init__(self) -> None:
        if self.max_repeats < 0:
            raise ValueError(f"max_repeats must be 0 or more, got {self.max_repeats}")

    def _state(self, ctx: RunContext) -> _State:
        state = ctx.state.get("repeats")
        if not isinstance(state, _State):
            state = ctx.state["repeats"] = _State()
        return state

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        state = self._state(ctx)
        if not state.force_answer or not request.tools:
            return request
        messages = _without_repeats(request.messages, state.answered)
        if messages and messages[-1].role == "tool":
            # Only sent, never stored. With tool_choice "none" alone, the 0.5B model's forced answer held
            # the temperature in 0 of 4 weather questions ("Sorry, but I can't assist with that."); with
            # this line, in 4 of 4.
            last = messages[-1]
            messages[-1] = replace(last, parts=(*last.parts, Text(text=self.answer_prompt)))
        return replace(request, messages=tuple(messages), settings=replace(request.settings, tool_choice="none"))

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        key = self._key(call, tool)
        if key is None:
            return None
        state = self._state(ctx)
        earlier = state.results.get(key)
        if earlier is None:
            # Registered before running, so a duplicate in the same turn waits for this call's result.
            state.results[key] = asyncio.get_running_loop().create_future()
            return None
        result = await asyncio.shield(earlier)
        if result.is_error:  # the first call failed: it was not remembered, so run this one
            return None
        if any(c is call for c in ctx.state.get(INNER_CALLS, ())):
            # A program run again after a fix repeats its calls by design: it gets the value, with no note (a
            # note is for a model; in a program it broke the value) and no step toward forcing an answer.
            return ToolAnswer(
                result=replace(result, call_id=call.id), note="repeated call answered from the earlier result"
            )
        self._count(state, call)
        note = (
            f"not run again: {call.name} was already called with these arguments in this run, "
            f"and this is its earlier result. Use it to answer instead of calling {call.name} again."
        )
        return ToolAnswer(result=_with_note(result, call, note), note="repeated call answered from the earlier result")

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        key = self._key(call, tool)
        if key is None:
            return result
        state = self._state(ctx)
        if result.outcome == "duplicate" and call.id not in state.answered:
            # Another hook (Dedup, for side effects) answered this repeat before it reached this guard: a
            # repeat all the same, or a model re-sending a payment would go on until the step limit.
            self._count(state, call)
        pending = state.results.get(key)
        if pending is None:  # another hook answered the first call, or it was retried after a failure
            pending = state.results[key] = asyncio.get_running_loop().create_future()
        if not pending.done():
            pending.set_result(result)
            if result.is_error:
                del state.results[key]
        return result

    def _count(self, state: _State, call: ToolCall) -> None:
        """One more repeat, answered without running; past ``max_repeats`` the next step must answer."""
        state.repeats += 1
        state.answered.add(call.id)
        if state.repeats > self.max_repeats:
            state.force_answer = True

    def _key(self, call: ToolCall, tool: Tool | None) -> tuple[str, str] | None:
        if call.name in self.exempt:
            return None
        arguments = canonical_arguments(call, tool)
        return None if arguments is None else (call.name, arguments)


def _without_repeats(messages: Sequence[Message], answered: Collection[str]) -> list[Message]:
    """``messages`` less each turn of nothing but calls answered from memory, together with its results.

    Only a whole pair goes (an assistant turn and the tool message right after it, whose results answer
    exactly its calls), so every call that is sent still has its result and every result its call.
    """
    kept: list[Message] = []
    i = 0
    while i < len(messages):
        if i + 1 < len(messages) and _only_repeats(messages[i], messages[i + 1], answered):
            i += 2
            continue
        kept.append(messages[i])
        i += 1
    return kept


def _only_repeats(turn: Message, results: Message, answered: Collection[str]) -> bool:
    if turn.role != "assistant" or results.role != "tool" or not turn.parts:
        return False
    calls = {p.id for p in turn.parts if isinstance(p, ToolCall)}
    ids = {p.call_id for p in results.parts if isinstance(p, ToolResult)}
    only_calls = len(turn.tool_calls) == len(turn.parts) and len(results.tool_results) == len(results.parts)
    return only_calls and calls == ids and all(i in answered for i in calls)


def _with_note(result: ToolResult, call: ToolCall, note: str) -> ToolResult:
    content: str | tuple[Any, ...]
    # After the result, not before: a small model asked to answer copies whatever comes first.
    if isinstance(result.content, str):
        content = f"{result.content}\n[{note}]"
    else:
        content = (*result.content, Text(text=f"\n[{note}]"))
    return replace(result, call_id=call.id, content=content)
