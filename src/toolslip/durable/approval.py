"""Approval: a person (or a policy) says yes or no before a call with effects runs.

Which calls need approval is decided per tool name first, then per effect, then by a default that asks
for every side-effecting tool. A rule is ``"always"`` (ask), ``"never"`` (run without asking) or a
function ``(tool, arguments, ctx) -> bool`` returning whether to ask.

The answer comes from an :data:`Approver` callback, sync or async. A denied call becomes an error result
telling the model the user refused, and the run goes on. With no approver the run *pauses*: the call and
every later non-read-only call of the turn are held back, the run stops with ``stop_reason ==
"paused"``, and :meth:`Approval.paused` gives a :class:`PausedRun` that serializes to JSON and resumes
later with :func:`resume_paused` and the decisions.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from ..agent.execution import run_in_thread
from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool, Toolbox
from ..core.effects import Effect
from ..core.errors import ConfigError
from ..core.messages import Message, ToolCall, message_from_dict, message_to_dict
from .decisions import (
    DECISIONS,
    GRANTED,
    PENDING,
    REFUSED,
    ApprovalRequest,
    Approver,
    Decision,
    as_decisions,
    refusal,
    settle,
)
from .replay import Recording, Replay

if TYPE_CHECKING:
    from ..agent.loop import Agent
    from ..core.result import RunResult

__all__ = [
    "Approval",
    "ApprovalRequest",
    "Approver",
    "Decision",
    "PausedRun",
    "Rule",
    "as_decisions",
    "refusal",
    "resume_paused",
    "settle",
    "terminal_approver",
]

Rule: TypeAlias = Literal["always", "never"] | Callable[[Tool, Mapping[str, Any], RunContext], bool]


def _side_effecting(tool: Tool, arguments: Mapping[str, Any], ctx: RunContext) -> bool:
    return tool.side_effecting


class Approval(Hook):
    """Asks before running calls that the rules say need approval; pauses the run when no one can answer."""

    def __init__(
        self,
        approver: Approver | None = None,
        *,
        tools: Mapping[str, Rule] | None = None,
        effects: Mapping[Effect | str, Rule] | None = None,
        default: Rule = _side_effecting,
        toolsets: Sequence[Toolbox] = (),
    ) -> None:
        self.approver = approver
        self.toolsets = tuple(toolsets)
        """Every tool of these sets asks (``Approval(toolsets=[github])``), read when a call comes: an MCP
        server's tools count once it lists them."""
        self.tools = {name: _checked(rule, f"tool {name!r}") for name, rule in (tools or {}).items()}
        self.effects = {_effect(k): _checked(v, f"effect {k!r}") for k, v in (effects or {}).items()}
        self.default = _checked(default, "the default")
        self._lock = asyncio.Lock()  # one question on the terminal at a time
        self._paused: dict[str, PausedRun] = {}

    def needs_approval(self, tool: Tool, arguments: Mapping[str, Any], ctx: RunContext) -> bool:
        """The tool's own rule if named, else whether any of its effects' rules asks, else the default."""
        if tool.name in self.tools:
            return _apply(self.tools[tool.name], tool, arguments, ctx)
        if any(tool.name in toolset for toolset in self.toolsets):
            return True
        rules = [self.effects[e] for e in tool.effects if e in self.effects]
        if rules:
            return any(_apply(rule, tool, arguments, ctx) for rule in rules)
        return _apply(self.default, tool, arguments, ctx)

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or call.arguments is None or (ctx.step, call.id) in ctx.state.get(GRANTED, ()):
            return None
        held = ctx.stop_reason == "paused" and not tool.read_only
        decided = call.id in ctx.state.get(DECISIONS, {})
        if not held and not decided and not self.needs_approval(tool, call.arguments, ctx):
            return None
        outcome = await settle(ctx, call, tool, "the approval policy asks for it", self.approver, self._lock)
        if isinstance(outcome, ToolAnswer):
            return outcome
        if outcome.approved:
            return None
        why = f": {outcome.note}" if outcome.note else ""
        text = f"the user refused to run {tool.name} with these arguments{why}. Do not retry it unchanged."
        ctx.state.setdefault(REFUSED, set()).add((ctx.step, call.id))
        return refusal(call, text, "denied")

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        pending: dict[str, ApprovalRequest | None] = ctx.state.get(PENDING, {})
        if result.stop_reason == "paused" and pending:
            self._paused[ctx.run_id] = PausedRun(
                run_id=ctx.run_id,
                messages=tuple(result.messages),
                pending=tuple(r for r in pending.values() if r is not None),
                held=tuple(pending),
            )

    def paused(self, run_id: str) -> PausedRun | None:
        """The saved state of ``run_id`` if it stopped waiting for approvals."""
        return self._paused.get(run_id)


def _apply(rule: Rule, tool: Tool, arguments: Mapping[str, Any], ctx: RunContext) -> bool:
    if rule == "always" or rule == "never":
        return rule == "always"
    return bool(rule(tool, arguments, ctx))


def _checked(rule: Rule, what: str) -> Rule:
    if rule in ("always", "never") or callable(rule):
        return rule
    expected = "'always', 'never' or a function (tool, arguments, ctx) -> bool"
    raise ConfigError(f"approval rule for {what} must be {expected}, not {rule!r}")


def _effect(name: Effect | str) -> Effect:
    try:
        return Effect(name)
    except ValueError:
        raise ConfigError(f"unknown effect {name!r} in approval rules; use one of: {', '.join(Effect)}") from None


# --- pause and resume ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PausedRun:
    """A run stopped for approvals: its transcript and the calls waiting for a decision."""

    run_id: str
    messages: tuple[Message, ...] = field(repr=False)
    """The transcript; the last tool message holds placeholders for the held calls."""
    pending: tuple[ApprovalRequest, ...]
    held: tuple[str, ...] = ()
    """Ids of every call held back (pending ones and the ones queued behind them)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "messages": [message_to_dict(m) for m in self.messages],
            "pending": [r.to_dict() for r in self.pending],
            "held": list(self.held),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PausedRun:
        return cls(
            run_id=data["run_id"],
            messages=tuple(message_from_dict(m) for m in data["messages"]),
            pending=tuple(ApprovalRequest.from_dict(r) for r in data["pending"]),
            held=tuple(data.get("held", ())),
        )


async def resume_paused(
    agent: Agent, paused: PausedRun, decisions: Mapping[str, Decision | bool] | None = None, *, deps: Any = None
) -> RunResult:
    """Continue a paused run: recorded turns are replayed, held calls run (or are refused) as decided.

    A pending call with no decision is asked of the agent's approver again, or pauses the run again.
    ``deps`` are the run's dependencies, given again: a paused run's saved state never holds them.
    """
    recording = Recording.from_transcript(paused.messages, skip=set(paused.held))
    replay = Replay(recording, decisions=decisions)
    resumed = dataclasses.replace(agent, hooks=(replay, *agent.hooks))
    return await resumed.arun(recording.messages, run_id=paused.run_id, deps=deps)


# --- the terminal -------------------------------------------------------------------------------


async def terminal_approver(request: ApprovalRequest) -> Decision:
    """Ask on the terminal, showing the tool name and the arguments in full; anything but yes refuses."""
    arguments = json.dumps(dict(request.arguments), indent=2, ensure_ascii=False)
    if request.interrupted:
        prompt = f"\nRun {request.tool} again? It {request.reason.removeprefix('it ')}."
        question = "Run it again? [y/N] (or type a reason not to) "
    else:
        prompt = f"\nApprove {request.tool}?" + (f" ({request.reason})" if request.reason else "")
        question = "Run it? [y/N] (or type a reason to refuse) "
    print(f"{prompt}\narguments:\n{arguments}\n{question}", end="", file=sys.stderr, flush=True)
    answer = await run_in_thread(_read_line)  # a thread nobody joins: Ctrl-C at the prompt exits at once
    if answer.strip().lower() in ("y", "yes"):
        return Decision(approved=True)
    note = "" if answer.strip().lower() in ("", "n", "no") else answer.strip()
    return Decision(approved=False, note=note)


def _read_line() -> str:
    try:
        return input()
    except EOFError:  # no terminal to ask on: refuse, never approve silently
        return ""
