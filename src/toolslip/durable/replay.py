"""Replaying a recorded run: what already happened is answered from the record, never done again.

A :class:`Recording` holds how a run started, the model responses by step, the results of finished calls
by (step, call id), and the calls that started but have no recorded end. The :class:`Replay` hook
answers model calls and tool calls from it. Because recorded responses carry the original call ids, a
resumed run walks the same path and meets the same calls. Calls are keyed by step too, because some models
number their calls afresh every turn (``call_0``...). A call that started and never ended is handled by its effects:
read-only and idempotent tools run again; a side-effecting tool is asked about (approver, a decision given
on resume, or the run pauses) and never silently run twice.

The run journal (:mod:`toolslip.durable.journal`) and paused approvals (:mod:`toolslip.durable.approval`) both resume
through this hook.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..agent.toolsets import OFFERED
from ..core.errors import ConfigError
from ..core.messages import Message, ModelResponse, Request, ToolCall, ToolResult
from .decisions import DECISIONS, Approver, Decision, as_decisions, settle

__all__ = ["NOT_RERUN_NOTE", "REPLAYED_NOTE", "Recording", "Replay", "ReplayState"]

REPLAYED_NOTE = "replayed"
NOT_RERUN_NOTE = "not re-run"
UNFINISHED_REASON = "it started before the run was interrupted and has no recorded end, so it may already have happened"


@dataclass(kw_only=True)
class Recording:
    """What a run did, as far as it got."""

    messages: list[Message]
    """The messages the run started with."""
    responses: dict[int, ModelResponse] = field(default_factory=dict)
    results: dict[tuple[int, str], ToolResult] = field(default_factory=dict)
    """Finished calls: (step, call id) -> full result."""
    started: dict[tuple[int, str], str] = field(default_factory=dict)
    """Started calls with no recorded end: (step, call id) -> idempotency key."""
    offered: dict[int, frozenset[str]] = field(default_factory=dict)
    """The tools a step offered, for runs whose tools change by step (:mod:`toolslip.agent.toolsets`)."""

    @classmethod
    def from_transcript(cls, messages: Sequence[Message], *, skip: Collection[str] = ()) -> Recording:
        """Rebuild from a transcript; results of the last turn's calls in ``skip`` are left out, to run again."""
        first = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
        recording = cls(messages=list(messages[:first]))
        last = sum(m.role == "assistant" for m in messages)
        for message in messages[first:]:
            if message.role == "assistant":
                response = ModelResponse(message=message, stop_reason="tool_use" if message.tool_calls else "end_turn")
                recording.responses[len(recording.responses) + 1] = response
            step = len(recording.responses)
            for result in message.tool_results:
                if step != last or result.call_id not in skip:
                    recording.results[step, result.call_id] = result
        return recording


@dataclass(kw_only=True)
class ReplayState:
    """Per run, in ``ctx.state``: what was replayed, so recorders do not record it twice."""

    recording: Recording | None
    steps: set[int] = field(default_factory=set)
    calls: set[tuple[int, str]] = field(default_factory=set)
    reruns: set[tuple[int, str]] = field(default_factory=set)
    """Interrupted side-effecting calls that were approved to run again."""
    not_rerun: set[tuple[int, str]] = field(default_factory=set)
    """Interrupted side-effecting calls that were declined: answered "not run again", possibly done."""


def _same_tools(ctx: RunContext, recorded: frozenset[str] | None) -> None:
    """A recorded step is replayed only with the tools it offered: otherwise its calls could be of a tool
    the application now hides, or the model's choice was made among other tools."""
    now = ctx.state.get(OFFERED)
    if recorded is None or now is None or recorded == now[0]:
        return
    differ = ", ".join(sorted(recorded ^ now[0]))
    raise ConfigError(
        f"step {ctx.step} of run {ctx.run_id} offered other tools when it was recorded (differing: {differ}); "
        "resume it with the tools, prepare functions and deps it ran with"
    )


class Replay(Hook):
    """Answers model and tool calls from a recording; put it first among the hooks."""

    STATE = "replay"

    def __init__(
        self,
        recording: Recording | None = None,
        *,
        approver: Approver | None = None,
        decisions: Mapping[str, Decision | bool] | None = None,
    ) -> None:
        self._recording = recording
        self.approver = approver
        """Asked before a side-effecting call that started but never ended is run again."""
        self.decisions: dict[str, Decision] = as_decisions(decisions)
        self._lock = asyncio.Lock()

    def load(self, ctx: RunContext) -> Recording | None:
        """The recording for this run (a journal loads it from its store)."""
        return self._recording

    def state(self, ctx: RunContext) -> ReplayState:
        state: ReplayState | None = ctx.state.get(self.STATE)
        if state is None:
            state = ctx.state[self.STATE] = ReplayState(recording=self.load(ctx))
            if self.decisions:
                ctx.state.setdefault(DECISIONS, {}).update(self.decisions)
        return state

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        self.state(ctx)  # load before any other hook looks at the run
        return request

    async def before_model(self, ctx: RunContext, request: Request) -> ModelResponse | None:
        state = self.state(ctx)
        response = state.recording.responses.get(ctx.step) if state.recording else None
        if response is not None:
            assert state.recording is not None
            _same_tools(ctx, state.recording.offered.get(ctx.step))
            state.steps.add(ctx.step)
        return response

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        state = self.state(ctx)
        if state.recording is None:
            return None
        result = state.recording.results.get((ctx.step, call.id))
        if result is not None:
            state.calls.add((ctx.step, call.id))
            return ToolAnswer(result=result, note=REPLAYED_NOTE)
        if (ctx.step, call.id) not in state.recording.started or tool is None or not tool.side_effecting:
            return None  # never started, or safe to run again
        outcome = await settle(ctx, call, tool, UNFINISHED_REASON, self.approver, self._lock, interrupted=True)
        if isinstance(outcome, ToolAnswer):
            return outcome
        if outcome.approved:
            state.reruns.add((ctx.step, call.id))
            return None
        # Declining a re-run is not refusing the action: it may well have happened, so this is no error,
        # and Dedup will answer a later identical call with it instead of running the tool.
        why = f" ({outcome.note})" if outcome.note else ""
        text = f"{tool.name} was not run again: {UNFINISHED_REASON}; the user chose not to repeat it{why}."
        result = ToolResult(
            call_id=call.id, name=call.name, content=text + " Treat it as possibly done.", outcome="not_executed"
        )
        state.not_rerun.add((ctx.step, call.id))
        return ToolAnswer(result=result, note=NOT_RERUN_NOTE)
