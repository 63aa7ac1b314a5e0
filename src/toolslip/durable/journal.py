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
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, cast

import orjson

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..agent.toolsets import OFFERED
from ..core.errors import ConfigError, RunBusy
from ..core.messages import (
    ModelResponse,
    Request,
    ToolCall,
    ToolResult,
    Usage,
    message_from_dict,
    message_to_dict,
    part_from_dict,
    part_to_dict,
)
from .decisions import PENDING, REFUSED, Approver, Decision, as_decisions
from .dedup import Dedup, duplicate_answer, idempotency_key
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

_BIG = 4096
"""Arguments longer than this are stored once, as the model wrote them (see :func:`_compact`)."""


# --- JSON form of responses ---------------------------------------------------------------------


def response_to_dict(response: ModelResponse) -> dict[str, Any]:
    return {
        "message": message_to_dict(response.message),
        "stop_reason": response.stop_reason,
        "usage": dataclasses.asdict(response.usage),
        "model": response.model,
        "id": response.id,
        "raw_stop_reason": response.raw_stop_reason,
        "extra": dict(response.extra),
    }


def response_from_dict(data: Mapping[str, Any]) -> ModelResponse:
    message = data["message"]
    if any(p.get("arguments_from_raw") for p in message.get("parts", ())):
        message = {**message, "parts": [_expanded(p) for p in message["parts"]]}
    return ModelResponse(
        message=message_from_dict(message),
        stop_reason=data["stop_reason"],
        usage=Usage(**data.get("usage", {})),
        model=data.get("model", ""),
        id=data.get("id", ""),
        raw_stop_reason=data.get("raw_stop_reason"),
        extra=data.get("extra") or {},
    )


def _compact(data: dict[str, Any]) -> dict[str, Any]:
    """Keep a big call's arguments once: the text the model wrote, parsed again when read back.

    A 10 MB argument was stored four times (parsed and raw, in the model entry and in tool_start).
    """
    for part in data["message"]["parts"]:
        raw = part.get("raw_arguments")
        if part.get("kind") == "tool_call" and raw is not None and len(raw) > _BIG and part["arguments"] is not None:
            with suppress(orjson.JSONDecodeError):
                if orjson.loads(raw) == part["arguments"]:
                    part["arguments"], part["arguments_from_raw"] = None, True
    return data


def _expanded(part: Mapping[str, Any]) -> Mapping[str, Any]:
    if not part.get("arguments_from_raw"):
        return part
    return {**part, "arguments": orjson.loads(part["raw_arguments"])}


@dataclasses.dataclass(kw_only=True)
class _Tally:
    """Earlier sessions' refusals, carried into the next finish entry."""

    refused: int = 0
    not_rerun: int = 0


def recording_from_entries(entries: Sequence[Entry]) -> Recording | None:
    """What the entries say the run did; ``None`` when the run never started."""
    start = next((e for e in entries if e.kind == "start"), None)
    if start is None:
        return None
    recording = Recording(messages=[message_from_dict(m) for m in start.data["messages"]])
    first_by_key: dict[str, ToolResult] = {}  # what Dedup answered a duplicate with
    for entry in entries:
        if entry.kind == "model":
            recording.responses[entry.step] = response_from_dict(entry.data["response"])
            if "offered" in entry.data:
                recording.offered[entry.step] = frozenset(entry.data["offered"])
        elif entry.kind == "tool_start":
            recording.started[entry.step, entry.data["call"]["id"]] = entry.key
        elif entry.kind == "tool_end":
            result = part_from_dict(entry.data["result"])
            assert isinstance(result, ToolResult)
            if entry.data.get("duplicate_of"):
                result = duplicate_answer(first_by_key[entry.key], result.call_id)
            elif not result.is_error:
                first_by_key.setdefault(entry.key, result)
            recording.results[entry.step, result.call_id] = result
            recording.started.pop((entry.step, result.call_id), None)
    return recording


def not_resumable(run_id: str, entries: Sequence[Entry], where: object) -> str:
    """Why ``run_id`` cannot be resumed when its entries hold no ``start``: there is no such run, or its first
    write failed (an ``abort`` alone), so nothing of it was journaled and it is to be run again."""
    if not entries:
        return f"no run {run_id!r} in {where}; `toolslip runs` lists the runs it holds"
    error = next((str(e.data.get("error", "")) for e in entries if e.kind == "abort"), "")
    because = f" ({error})" if error else ""
    return (
        f"run {run_id!r} never started: its first entry could not be written{because}; "
        "there is nothing to resume, so run it again"
    )


def _tally(entries: Sequence[Entry]) -> _Tally:
    """Refused and not-re-run calls as the journal has them: one ``tool_end`` each, in every session.

    Counted from the entries, not carried from the last ``finish``: a resume that declines a cut-off call
    and is itself killed writes the call's ``tool_end`` but no ``finish``, and its count was lost.
    """
    ends = [e.data for e in entries if e.kind == "tool_end"]
    return _Tally(
        refused=sum(bool(d.get("refused")) for d in ends), not_rerun=sum(bool(d.get("not_rerun")) for d in ends)
    )


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

    def _append(self, ctx: RunContext, kind: str, data: Mapping[str, Any], *, key: str = "") -> None:
        """Write for a run this journal began, under its lease (RunBusy if another process took it over)."""
        if not ctx.state.get(_BEGUN):
            return
        lease = self._leases.get(ctx.run_id)
        if lease is None:
            self.store.append(ctx.run_id, kind, data, step=ctx.step, key=key)
        else:
            lease.check()  # renews it if the heartbeat fell behind
            cast(LeasedStore, self.store).append(ctx.run_id, kind, data, step=ctx.step, key=key, lease=lease)

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
        self.replayer.decisions.update(as_decisions(decisions))
        self._read[run_id] = entries  # the replayer uses them instead of reading the run again
        return await agent.arun(recording.messages, run_id=run_id, on_event=on_event, deps=deps)


class _Replayer(Replay):
    def __init__(self, journal: Journal, approver: Approver | None) -> None:
        super().__init__(approver=approver)
        self.journal = journal
        self.reran: set[tuple[str, int, str]] = set()
        """(run id, step, call id) of interrupted side-effecting calls approved to run again."""

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        answer = await super().before_tool(ctx, call, tool)
        if (ctx.step, call.id) in self.state(ctx).reruns:
            self.reran.add((ctx.run_id, ctx.step, call.id))
        return answer

    def load(self, ctx: RunContext) -> Recording | None:
        self.journal._begin(ctx)  # the lease first: what is read must not change under us
        entries = self.journal._read.pop(ctx.run_id, None) or self.journal.store.entries(ctx.run_id)
        recording = recording_from_entries(entries)
        ctx.state[_TALLY] = _tally(entries)
        if recording is not None:
            self.journal._append(ctx, "resume", {"responses": len(recording.responses)})
        return recording


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
            data: dict[str, Any] = {"response": _compact(response_to_dict(response))}
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
        self._append(ctx, "tool_end", data, key=idempotency_key(tool, call))
        return result

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        pending = [r.to_dict() for r in ctx.state.get(PENDING, {}).values() if r is not None]
        tally: _Tally = ctx.state.get(_TALLY) or _Tally()
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
