"""The durable run journal: every model response and every tool execution, written before it is used.

An append-only log per run, in one SQLite file (WAL mode) by default. A tool execution is written twice:
``tool_start`` with its idempotency key *before* the tool runs and ``tool_end`` with its full output
after. Resuming a run (:meth:`Journal.resume`, ``toolslip resume RUN_ID``) replays the log through
:class:`~toolslip.replay.Replay`: recorded model responses are not requested again, finished calls return
their recorded results, and a side-effecting call with a start but no end is asked about, never silently
run again.

Use it as two hooks around the others, so it answers replays first and records the final results last::

    journal = Journal("runs.sqlite")
    agent = Agent(model=m, tools=tools, hooks=journal.wrap(Dedup(), Approval(approver)))

Another backend implements :class:`JournalStore` (append, entries, runs).
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from .approval import PENDING, Approver, Decision, as_decisions
from .dedup import idempotency_key
from .errors import ConfigError
from .hooks import Hook, RunContext, ToolAnswer
from .messages import (
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
from .replay import Recording, Replay
from .tools import Tool

if TYPE_CHECKING:
    from .loop import Agent, RunResult

__all__ = [
    "Entry",
    "Journal",
    "JournalStore",
    "RunSummary",
    "SqliteStore",
    "default_journal_path",
    "response_from_dict",
    "response_to_dict",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One journal line. ``kind`` is start, resume, model, tool_start, tool_end or finish."""

    seq: int
    run_id: str
    at: float
    kind: str
    step: int
    key: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    run_id: str
    started_at: float
    updated_at: float
    status: str
    """The last finish's stop reason, or ``unfinished`` (still running, or killed)."""
    steps: int
    model: str
    prompt: str


class JournalStore(Protocol):
    """Where entries go; appends must be durable when ``append`` returns."""

    def append(self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "") -> None: ...

    def entries(self, run_id: str) -> list[Entry]: ...

    def runs(self, limit: int = 50) -> list[RunSummary]: ...

    def close(self) -> None: ...


def default_journal_path() -> Path:
    """``$TOOLSLIP_HOME/runs.sqlite``, with ``~/.toolslip`` as the home by default."""
    return Path(os.environ.get("TOOLSLIP_HOME") or Path.home() / ".toolslip") / "runs.sqlite"


_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL, at REAL NOT NULL, kind TEXT NOT NULL,
    step INTEGER NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS entries_run ON entries (run_id, seq);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'the run journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'the run journal is append-only'); END;
"""


class SqliteStore:
    """One SQLite file in WAL mode; each append is its own committed transaction.

    ``synchronous=NORMAL`` survives a killed process (the kill tests prove it) but not a power cut; pass
    ``synchronous="FULL"`` to fsync every append.
    """

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL") -> None:
        self.path = Path(path)
        if self.path.is_dir():  # sqlite would only say "unable to open database file"
            raise ConfigError(
                f"cannot open the run journal {str(path)!r}: it is a directory; give a file such as {path}/runs.sqlite"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(f"PRAGMA synchronous={synchronous}")
            self._db.execute("PRAGMA busy_timeout=5000")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise ConfigError(f"cannot open the run journal {str(self.path)!r}: {exc}") from None

    def append(self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "") -> None:
        self._db.execute(
            "INSERT INTO entries (run_id, at, kind, step, key, data) VALUES (?, ?, ?, ?, ?, ?)",
            (run_id, time.time(), kind, step, key, orjson.dumps(data)),
        )

    def entries(self, run_id: str) -> list[Entry]:
        rows = self._db.execute(
            "SELECT seq, run_id, at, kind, step, key, data FROM entries WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        return [
            Entry(seq=seq, run_id=run, at=at, kind=kind, step=step, key=key, data=orjson.loads(data))
            for seq, run, at, kind, step, key, data in rows
        ]

    def runs(self, limit: int = 50) -> list[RunSummary]:
        rows = self._db.execute(
            """SELECT e.run_id, MIN(e.at), MAX(e.at), MAX(e.step),
                      (SELECT kind || ' ' || data FROM entries l WHERE l.run_id = e.run_id ORDER BY seq DESC LIMIT 1),
                      (SELECT data FROM entries s WHERE s.run_id = e.run_id AND s.kind = 'start' ORDER BY seq LIMIT 1)
               FROM entries e GROUP BY e.run_id ORDER BY MIN(e.seq) DESC LIMIT ?""",
            (limit,),
        ).fetchall()
        return [_summary(*row) for row in rows]

    def close(self) -> None:
        self._db.close()


def _summary(run_id: str, started: float, updated: float, steps: int, last: str, start: bytes | None) -> RunSummary:
    kind, _, data = last.partition(" ")
    status = str(orjson.loads(data).get("stop_reason", "?")) if kind == "finish" else "unfinished"
    begun = orjson.loads(start) if start else {}
    user = [m for m in begun.get("messages", ()) if m.get("role") == "user"]
    prompt = message_from_dict(user[-1]).text if user else ""
    return RunSummary(
        run_id=run_id,
        started_at=started,
        updated_at=updated,
        status=status,
        steps=steps,
        model=str(begun.get("model", "")),
        prompt=prompt,
    )


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
    return ModelResponse(
        message=message_from_dict(data["message"]),
        stop_reason=data["stop_reason"],
        usage=Usage(**data.get("usage", {})),
        model=data.get("model", ""),
        id=data.get("id", ""),
        raw_stop_reason=data.get("raw_stop_reason"),
        extra=data.get("extra") or {},
    )


def recording_from_entries(entries: Sequence[Entry]) -> Recording | None:
    """What the entries say the run did; ``None`` when the run never started."""
    start = next((e for e in entries if e.kind == "start"), None)
    if start is None:
        return None
    recording = Recording(messages=[message_from_dict(m) for m in start.data["messages"]])
    for entry in entries:
        if entry.kind == "model":
            recording.responses[entry.step] = response_from_dict(entry.data["response"])
        elif entry.kind == "tool_start":
            recording.started[entry.step, entry.data["call"]["id"]] = entry.key
        elif entry.kind == "tool_end":
            result = part_from_dict(entry.data["result"])
            assert isinstance(result, ToolResult)
            recording.results[entry.step, result.call_id] = result
            recording.started.pop((entry.step, result.call_id), None)
    return recording


# --- the hooks ----------------------------------------------------------------------------------


class Journal:
    """A run journal over a store; :meth:`wrap` gives the hooks to put on an agent."""

    def __init__(
        self,
        store: JournalStore | str | os.PathLike[str] | None = None,
        *,
        approver: Approver | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if store is None or isinstance(store, str | os.PathLike):
            store = SqliteStore(store or default_journal_path())
        self.store: JournalStore = store
        self.meta = dict(meta or {})
        """Recorded with each run's start (e.g. the tools file and model the CLI used)."""
        self.replayer = _Replayer(self, approver)
        self.recorder = _Recorder(self)

    def wrap(self, *hooks: Hook) -> list[Hook]:
        """``[replayer, *hooks, recorder]``: replays answer before other hooks; the record is the final word."""
        return [self.replayer, *hooks, self.recorder]

    def recording(self, run_id: str) -> Recording | None:
        return recording_from_entries(self.store.entries(run_id))

    async def resume(
        self, agent: Agent, run_id: str, decisions: Mapping[str, Decision | bool] | None = None
    ) -> RunResult:
        """Run ``run_id`` on from where its journal ends; ``agent`` must carry this journal's hooks."""
        if self.replayer not in agent.hooks or self.recorder not in agent.hooks:
            raise ConfigError("the agent does not carry this journal's hooks; build it with hooks=journal.wrap(...)")
        recording = self.recording(run_id)
        if recording is None:
            raise ConfigError(f"no run {run_id!r} in the journal; `toolslip runs` lists the runs it holds")
        self.replayer.decisions.update(as_decisions(decisions))
        return await agent.arun(recording.messages, run_id=run_id)


class _Replayer(Replay):
    def __init__(self, journal: Journal, approver: Approver | None) -> None:
        super().__init__(approver=approver)
        self.journal = journal

    def load(self, ctx: RunContext) -> Recording | None:
        recording = self.journal.recording(ctx.run_id)
        if recording is not None:
            self.journal.store.append(ctx.run_id, "resume", {"responses": len(recording.responses)})
        return recording


class _Recorder(Hook):
    """Writes what the other hooks and the loop settled on, skipping what was only replayed."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.store = journal.store

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        state = self.journal.replayer.state(ctx)
        if state.recording is None and ctx.step == 1:
            messages = [message_to_dict(m) for m in ctx.messages]
            data = {"messages": messages, "model": ctx.model_name, "meta": self.journal.meta}
            self.store.append(ctx.run_id, "start", data)
        return request

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        if ctx.step not in self.journal.replayer.state(ctx).steps:
            self.store.append(ctx.run_id, "model", {"response": response_to_dict(response)}, step=ctx.step)
        return response

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        effects = sorted(tool.effects) if tool is not None else []
        data = {"call": part_to_dict(call), "effects": effects}
        self.store.append(ctx.run_id, "tool_start", data, step=ctx.step, key=idempotency_key(tool, call))
        ctx.state.setdefault("journal.started", set()).add((ctx.step, call.id))
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        replayed = (ctx.step, call.id) in self.journal.replayer.state(ctx).calls
        if replayed or call.id in ctx.state.get(PENDING, {}):  # pending calls are held in the run's last step
            return result
        executed = (ctx.step, call.id) in ctx.state.get("journal.started", ())
        data = {"result": part_to_dict(result), "executed": executed}
        self.store.append(ctx.run_id, "tool_end", data, step=ctx.step, key=idempotency_key(tool, call))
        return result

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        pending = [r.to_dict() for r in ctx.state.get(PENDING, {}).values() if r is not None]
        data = {"stop_reason": result.stop_reason, "output": result.output, "steps": result.steps, "pending": pending}
        self.store.append(ctx.run_id, "finish", data, step=ctx.step)
