"""Deciding one call that needs a yes or no: who is asked, what they are asked, and what the call gets meanwhile.

:class:`~toolslip.durable.approval.Approval` (a person approves side effects), the injection gate and the
secret guard (:mod:`toolslip.guard`) and the journal's replay of interrupted calls all come to the same
question about one call, and answer it the same way: a decision given when the run was resumed, else the
approver, else the call is held and the run pauses. They share this module, and the keys in
``RunContext.state`` that record what was granted, held and refused.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..agent.hooks import RunContext, ToolAnswer
from ..agent.tools import Tool
from ..core.messages import ToolCall, ToolResult

__all__ = [
    "DECISIONS",
    "GRANTED",
    "PENDING",
    "REFUSED",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "as_decisions",
    "ask",
    "refusal",
    "settle",
]

# Keys in RunContext.state shared with the journal's replay.
GRANTED = "approval.granted"
"""(step, call id) of calls already approved in this run, so a later hook does not ask twice."""
PENDING = "approval.pending"
"""call id -> ApprovalRequest (awaiting a decision) or None (held back behind one)."""
DECISIONS = "approval.decisions"
"""call id -> Decision given when a paused run is resumed."""
REFUSED = "approval.refused"
"""(step, call id) of calls refused in this run, so the run's record can say so."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """What the approver is asked about: the call in full, and why it needs approval."""

    tool: str
    arguments: Mapping[str, Any]
    call_id: str
    run_id: str
    reason: str = ""
    interrupted: bool = False
    """The call started before the run was interrupted: approving runs it again, and it may already have
    happened once."""

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "arguments": dict(self.arguments)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ApprovalRequest:
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    approved: bool
    note: str = ""
    """Shown to the model with a refusal (e.g. "use the savings account instead")."""


Approver: TypeAlias = Callable[[ApprovalRequest], "bool | Decision | Awaitable[bool | Decision]"]


async def settle(
    ctx: RunContext,
    call: ToolCall,
    tool: Tool,
    reason: str,
    approver: Approver | None,
    lock: asyncio.Lock,
    *,
    interrupted: bool = False,
) -> Decision | ToolAnswer:
    """Decide one call: a decision given on resume, else the approver, else hold it and pause the run.

    A :class:`ToolAnswer` means the call is held (the run pauses); the caller words a refusal itself.
    """
    request = ApprovalRequest(
        tool=tool.name,
        arguments=call.arguments or {},
        call_id=call.id,
        run_id=ctx.run_id,
        reason=reason,
        interrupted=interrupted,
    )
    # Used once: a model that numbers calls afresh each turn may reuse this id in a later step.
    decision: Decision | None = ctx.state.get(DECISIONS, {}).pop(call.id, None)
    if decision is None and ctx.stop_reason == "paused":  # behind a pending approval: keep emitted order
        return _hold(ctx, call, None, "not run yet: an earlier call of this turn is waiting for approval")
    if decision is None and approver is None:
        ctx.stop("paused")
        waiting = "a decision whether to run it again" if interrupted else "the user's approval"
        return _hold(ctx, call, request, f"waiting for {waiting}; the run is paused")
    if decision is None:
        async with lock:
            decision = await ask(approver, request)  # type: ignore[arg-type]  # approver is set here
    if decision.approved:
        ctx.state.setdefault(GRANTED, set()).add((ctx.step, call.id))
    return decision


def _hold(ctx: RunContext, call: ToolCall, request: ApprovalRequest | None, text: str) -> ToolAnswer:
    ctx.state.setdefault(PENDING, {})[call.id] = request
    return refusal(call, text, "pending", outcome="held")


def refusal(call: ToolCall, text: str, note: str, *, outcome: Literal["refused", "held"] = "refused") -> ToolAnswer:
    """The error result a held or blocked call gets instead of running; it must not echo anything secret."""
    result = ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, outcome=outcome)
    return ToolAnswer(result=result, note=note)


async def ask(approver: Approver, request: ApprovalRequest) -> Decision:
    """Call a sync or async approver and normalise its answer to a :class:`Decision`."""
    answer = approver(request)
    if inspect.isawaitable(answer):
        answer = await answer
    return answer if isinstance(answer, Decision) else Decision(approved=bool(answer))


def as_decisions(values: Mapping[str, Decision | bool] | None) -> dict[str, Decision]:
    """``{call_id: Decision}`` from decisions or plain booleans."""
    return {k: v if isinstance(v, Decision) else Decision(approved=bool(v)) for k, v in (values or {}).items()}
