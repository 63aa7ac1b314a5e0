"""The durable run journal: every model response and every tool execution, written before it is used.

An append-only log per run, in one SQLite file (WAL mode) by default, or in a PostgreSQL database that
many machines share (``Journal("postgresql://...")``, :mod:`toolslip.durable.journal_pg`). A tool
execution is written twice:
``tool_start`` with its idempotency key *before* the tool runs and ``tool_end`` with its full output
after. Resuming a run (:meth:`Journal.resume`, ``toolslip resume RUN_ID``) replays the log through
:class:`~toolslip.durable.replay.Replay`: recorded model responses are not requested again, finished calls return
their recorded results, and a side-effecting call with a start but no end is asked about, never silently
run again.

Use it as two hooks around the others, so it answers replays first and records the final results last::

    journal = Journal("runs.sqlite")
    agent = Agent(model=m, tools=tools, hooks=journal.wrap(Dedup(), Approval(approver)))

A run is executed under its lease (:mod:`toolslip.durable.lease`): the hooks take it before reading the run,
every entry is written only while it holds, and it is released when the run finishes, fails (an
``abort`` entry: ``failed``) or is interrupted (``abort``: ``interrupted``). The stores live in
:mod:`toolslip.durable.journal_store` and :mod:`toolslip.durable.journal_pg` (:mod:`toolslip.durable.stores`
picks one from a location); another backend implements :class:`JournalStore` (append, entries, runs) and
then runs without leases.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..agent.toolsets import OFFERED
from ..core.errors import ConfigError, RunBusy
from ..core.messages import (
    ModelResponse,
    Request,
    ToolCall,
    ToolResult,
    message_to_dict,
    part_to_dict,
)
from .decisions import DECISIONS, PENDING, REFUSED, ApprovalRequest, Approver, Decision, as_decisions
from .dedup import Dedup, duplicate_answer, idempotency_key
from .inbox import call_hash, decision_for, edit_response, held_calls, inbox_decisions
from .journal_entries import (
    Tally,
    compact_response,
    not_resumable,
    recording_from_entries,
    response_from_dict,
    response_to_dict,
    tally,
)
from .journal_store import Entry, JournalStore, RunSummary, SqliteStore, default_journal_path
from .lease import Lease, LeaseKeeper
from .replay import Recording, Replay
from .stores import LeasedStore, open_store

if TYPE_CHECKING:
    from ..agent.loop import Agent
    from ..core.events import Event
    from ..core.result import RunResult

__all__ = [
    "Entry",
    "Journal",
    "JournalStore",
    "RunSummary",
    "SqliteStore",
    "default_journal_path",
    "not_resumable",
    "response_from_dict",
    "response_to_dict",
]

# --- the hooks ----------------------------------------------------------------------------------


class Journal:
    """A run journal over a store; :meth:`wrap` gives the hooks to put on an agent.

    ``store`` is a store, a SQLite file path or a ``postgresql://`` URL; by default ``$TOOLSLIP_JOURNAL``,
    else ``$TOOLSLIP_HOME/runs.sqlite``. With either built-in store a run is executed under its lease
    (:mod:`toolslip.durable.lease`): a second process that tries to run or resume it gets
    :class:`~toolslip.core.errors.RunBusy` naming the holder.
    """

    def __init__(
        self,
        store: JournalStore | str | os.PathLike[str] | None = None,
        *,
        approver: Approver | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if store is None or isinstance(store, str | os.PathLike):
            store = open_store(store)
        self.store: JournalStore = store
        self.meta = dict(meta or {})
        """Recorded with each run's start (e.g. the tools file and model the CLI used)."""
        self.replayer = _Replayer(self, approver)
        """Its ``approver`` decides whether a side-effecting call cut off by the interruption runs again."""
        self.recorder = _Recorder(self)
        self._leases: dict[str, Lease | None] = {}
        self._active: set[str] = set()
        self._read: dict[str, list[Entry]] = {}
        self._asking: dict[str, int] = {}
        """Run id -> the step of the call being decided (an approver is not told the step)."""
        self._inbox: dict[str, list[dict[str, Any]]] = {}
        self._decisions: dict[str, dict[str, Decision]] = {}  # given to resume(): for that run, and no other
        """Decisions taken from the inbox for a run being resumed, journaled when it begins."""

    def wrap(self, *hooks: Hook) -> list[Hook]:
        """``[replayer, *hooks, recorder]``: replays answer before other hooks; the record is the final word."""
        return [self.replayer, *hooks, self.recorder]

    def recording(self, run_id: str) -> Recording | None:
        return recording_from_entries(self.store.entries(run_id))

    def lease(self, run_id: str) -> None:
        """Take ``run_id``'s lease now, e.g. to look at a run before resuming it; raises RunBusy naming the holder.

        The hooks take it when a run starts, and release it when the run ends.
        """
        if run_id not in self._leases:
            leases = getattr(
                self.store, "leases", None
            )  # another store has none: one process at a time is up to its user
            self._leases[run_id] = leases.take(run_id) if isinstance(leases, LeaseKeeper) else None

    def release(self, run_id: str) -> None:
        self._active.discard(run_id)
        lease = self._leases.pop(run_id, None)
        if lease is not None:
            lease.release()

    def _begin(self, ctx: RunContext) -> None:
        if ctx.run_id in self._active:
            raise RunBusy(f"run {ctx.run_id} is already being executed in this process")
        self.lease(ctx.run_id)
        self._active.add(ctx.run_id)
        ctx.state[_BEGUN] = True

    def _append(
        self, ctx: RunContext, kind: str, data: Mapping[str, Any], *, key: str = "", step: int | None = None
    ) -> None:
        """Write for a run this journal began, under its lease (RunBusy if another process took it over)."""
        if ctx.state.get(_BEGUN):
            self._write(ctx.run_id, kind, data, step=ctx.step if step is None else step, key=key)

    def note(self, ctx: RunContext, kind: str, data: Mapping[str, Any]) -> None:
        """Add an entry of the caller's own ``kind`` to a run this journal is executing (e.g. an eval's verdict,
        from a hook's ``on_finish`` before the run's ``finish`` entry); readers skip kinds they do not know."""
        self._append(ctx, kind, data)

    def append(self, run_id: str, kind: str, data: Mapping[str, Any]) -> None:
        """Write an entry for a run this journal holds the lease of (:meth:`lease`), for a run that something
        other than the loop carries out (an eval's trial on the fleet); RunBusy if the lease was lost."""
        if run_id not in self._leases:
            raise ConfigError(f"run {run_id} is written only under its lease: take it first (Journal.lease)")
        self._write(run_id, kind, data, step=0)

    def _write(self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int, key: str = "") -> None:
        lease = self._leases.get(run_id)
        if lease is None:
            self.store.append(run_id, kind, data, step=step, key=key)
        else:
            lease.check()  # renews it if the heartbeat fell behind
            cast(LeasedStore, self.store).append(run_id, kind, data, step=step, key=key, lease=lease)

    def inbox_approver(self, *, poll: float = 0.2) -> Approver:
        """An approver that asks through the inbox and waits: for ``Approval(...)`` or ``TaintGate(approver=...)``
        in a process no one watches. The call shows in ``toolslip console``'s inbox while the run holds its
        lease; the person approves or denies it there (no edits: the call is already under way).
        """

        async def ask(request: ApprovalRequest) -> Decision:
            step = self._asking.get(request.run_id, 0)
            shown = call_hash(request.run_id, step, request.call_id, request.tool, request.arguments)
            self._write(request.run_id, "ask", {**request.to_dict(), "shown": shown}, step=step)
            while True:
                found = await asyncio.to_thread(decision_for, self.store, request.run_id, step, request.call_id, shown)
                if found is not None:
                    break
                await asyncio.sleep(poll)  # another process decides: nothing here to wait on but the journal
            data = {k: v for k, v in found.items() if k != "step"}
            self._write(request.run_id, "decision", data, step=step)  # who decided, in the run's log
            return Decision(approved=bool(found["approved"]), note=str(found.get("note") or ""))

        return ask

    def _end(self, ctx: RunContext) -> None:
        if ctx.state.pop(_BEGUN, False):
            self.release(ctx.run_id)

    async def resume(
        self,
        agent: Agent,
        run_id: str,
        decisions: Mapping[str, Decision | bool] | None = None,
        *,
        on_event: Callable[[Event], None] | None = None,
        deps: Any = None,
    ) -> RunResult:
        """Run ``run_id`` on from where its journal ends; ``agent`` must carry this journal's hooks.

        ``deps`` are given again by whoever resumes: the journal never holds a run's dependencies."""
        if self.replayer not in agent.hooks or self.recorder not in agent.hooks:
            raise ConfigError("the agent does not carry this journal's hooks; build it with hooks=journal.wrap(...)")
        if run_id in self._active:
            raise RunBusy(f"run {run_id} is already being executed in this process")
        held = run_id in self._leases
        self.lease(run_id)  # before reading: what is read must not change under us
        entries = self.store.entries(run_id)
        recording = recording_from_entries(entries)
        if recording is None:
            if not held:
                self.release(run_id)
            raise ConfigError(not_resumable(run_id, entries, "the journal"))
        inbox = [d for d in inbox_decisions(self.store, run_id, entries) if d["call_id"] not in (decisions or {})]
        self._inbox[run_id] = inbox
        # For this run only: a call id of another run (models number calls afresh) must not find them.
        given = {d["call_id"]: Decision(approved=d["approved"], note=d["note"]) for d in inbox}
        self._decisions[run_id] = given | as_decisions(decisions)
        self._read[run_id] = entries  # the replayer uses them instead of reading the run again
        return await agent.arun(recording.messages, run_id=run_id, on_event=on_event, deps=deps)

    async def wait_and_resume(
        self, agent: Agent, result: RunResult, *, poll: float = 0.2, give_up: float | None = None, deps: Any = None
    ) -> RunResult:
        """While ``result`` is a pause, wait for every held call to be decided in the inbox (the console, an
        application through its API), then resume the run here; ``give_up`` seconds without them: the pause."""
        deadline = None if give_up is None else time.monotonic() + give_up
        while result.stop_reason == "paused":
            entries = self.store.entries(result.run_id)
            waiting = held_calls(entries)
            if waiting and len(inbox_decisions(self.store, result.run_id, entries)) >= len(waiting):
                result = await self.resume(agent, result.run_id, deps=deps)
                continue
            if deadline is not None and time.monotonic() > deadline:
                break
            await asyncio.sleep(poll)
        return result


class _Replayer(Replay):
    def __init__(self, journal: Journal, approver: Approver | None) -> None:
        super().__init__(approver=approver)
        self.journal = journal
        self.reran: set[tuple[str, int, str]] = set()
        """(run id, step, call id) of interrupted side-effecting calls approved to run again."""

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        self.journal._asking[ctx.run_id] = ctx.step  # calls that are asked about run one at a time
        answer = await super().before_tool(ctx, call, tool)
        if (ctx.step, call.id) in self.state(ctx).reruns:
            self.reran.add((ctx.run_id, ctx.step, call.id))
        return answer

    def load(self, ctx: RunContext) -> Recording | None:
        self.journal._begin(ctx)  # the lease first: what is read must not change under us
        entries = self.journal._read.pop(ctx.run_id, None) or self.journal.store.entries(ctx.run_id)
        recording = recording_from_entries(entries)
        ctx.state[_TALLY] = tally(entries)
        ctx.state.setdefault(DECISIONS, {}).update(self.journal._decisions.pop(ctx.run_id, {}))
        if recording is not None:
            self.journal._append(ctx, "resume", {"responses": len(recording.responses)})
            for decision in self.journal._inbox.pop(ctx.run_id, ()):  # who decided, and any edit, in the run's log
                data = {k: v for k, v in decision.items() if k != "step"}
                self.journal._append(ctx, "decision", data, step=decision["step"])
                if "arguments" in decision and decision["step"] in recording.responses:
                    edits = {decision["call_id"]: decision["arguments"]}
                    recording.responses[decision["step"]] = edit_response(recording.responses[decision["step"]], edits)
        return recording


def _gate(event: Any) -> dict[str, Any]:
    """A gate's decision (:class:`~toolslip.core.events.GateDecided`) as the journal keeps it."""
    fields = ("gate", "decision", "reason", "approved", "sources")
    return {name: list(value) if isinstance(value := getattr(event, name), tuple) else value for name in fields}


_TALLY = "journal.tally"
_BEGUN = "journal.begun"


class _Recorder(Hook):
    """Writes what the other hooks and the loop settled on, skipping what was only replayed."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def _append(self, ctx: RunContext, kind: str, data: Mapping[str, Any], *, key: str = "") -> None:
        self.journal._append(ctx, kind, data, key=key)

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        state = self.journal.replayer.state(ctx)
        if state.recording is None and ctx.step == 1:
            messages = [message_to_dict(m) for m in ctx.messages]
            data = {"messages": messages, "model": ctx.model_name, "meta": self.journal.meta}
            self._append(ctx, "start", data)
        return request

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        if ctx.step not in self.journal.replayer.state(ctx).steps:
            data: dict[str, Any] = {"response": compact_response(response_to_dict(response))}
            if (offered := ctx.state.get(OFFERED)) is not None:  # tools that change by step: what this one had
                data["offered"] = sorted(offered[0])
            self._append(ctx, "model", data)
        return response

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        # The arguments are in this step's model entry: written once, not again here.
        data: dict[str, Any] = {
            "call": {"id": call.id, "name": call.name},
            "effects": sorted(tool.effects) if tool is not None else [],
        }
        if (ctx.step, call.id) in self.journal.replayer.state(ctx).reruns:
            data["rerun"] = True
        self._append(ctx, "tool_start", data, key=idempotency_key(tool, call))
        ctx.state.setdefault("journal.started", set()).add((ctx.step, call.id))
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        replay = self.journal.replayer.state(ctx)
        if (ctx.step, call.id) in replay.calls or call.id in ctx.state.get(PENDING, {}):
            return result  # replayed, or held (pending calls are held in the run's last step)
        executed = (ctx.step, call.id) in ctx.state.get("journal.started", ())
        data: dict[str, Any] = {"result": part_to_dict(result), "executed": executed}
        earlier = Dedup.answered_with(ctx, ctx.step, call.id)
        if earlier is not None and duplicate_answer(earlier, call.id) == result:
            data["result"], data["duplicate_of"] = part_to_dict(dataclasses.replace(result, content="")), True
        if (ctx.step, call.id) in ctx.state.get(REFUSED, ()):
            data["refused"] = True
        if (ctx.step, call.id) in replay.not_rerun:
            data["not_rerun"] = True
        gates = [_gate(e) for e in ctx.state.get("audit", ()) if e.step == ctx.step and e.call_id == call.id]
        if gates:  # what the injection gate or the secret guard decided about it, and why
            data["gates"] = gates
        self._append(ctx, "tool_end", data, key=idempotency_key(tool, call))
        return result

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        pending = [r.to_dict() for r in ctx.state.get(PENDING, {}).values() if r is not None]
        tally: Tally = ctx.state.get(_TALLY) or Tally()
        data = {
            "stop_reason": result.stop_reason,
            "output": result.output,
            "steps": result.steps,
            "usage": dataclasses.asdict(result.usage),
            "cost": result.cost,
            "pending": pending,
            "refused": tally.refused + len(ctx.state.get(REFUSED, ())),
            "not_rerun": tally.not_rerun + len(self.journal.replayer.state(ctx).not_rerun),
        }
        try:
            self._append(ctx, "finish", data)
        finally:
            self.journal._end(ctx)

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        """Ctrl-C (a cancellation) leaves the run ``interrupted``; any other exception leaves it ``failed``."""
        if isinstance(error, asyncio.CancelledError | KeyboardInterrupt):
            data = {"status": "interrupted", "error": "interrupted (Ctrl-C, or the task was cancelled)"}
        else:
            data = {"status": "failed", "error": f"{type(error).__name__}: {error}".removesuffix(": ")}
        try:
            self._append(ctx, "abort", data)
        except Exception:  # the lease is gone (RunBusy) or the journal is broken: the run's own error matters more
            pass
        finally:
            self.journal._end(ctx)
