"""The runs the console lists, kept up to date by reading only the journal's new entries.

Listing 10,000 runs by asking the store for them on every page view would read every run's entries each
time. Instead one reader follows the journal (entries with a higher ``seq`` than the last one read) and
folds each entry into a small :class:`RunRow` per run: state, model, steps, tool calls, tokens, cost.
The first read takes the whole journal once; after that a poll reads only what other processes wrote
since, and the pages filter rows in memory.

PostgreSQL hands out ``seq`` values before commit, so an entry may become visible after a higher one was
already read: the reader keeps reading from the oldest gap it saw for a while (:data:`GAP_WAIT`) before it
treats the gap as a rolled-back insert.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..core.messages import message_from_dict
from ..durable.journal_store import Entry
from ..durable.lease import Holder
from ..durable.stores import LeasedStore

__all__ = ["GAP_WAIT", "RunIndex", "RunRow"]

GAP_WAIT = 10.0
"""Seconds a missing ``seq`` is waited for (an insert not yet committed) before it counts as never coming."""

_BATCH = 20_000
_SQLITE_AFTER = "SELECT seq, run_id, at, kind, step, key, data FROM entries WHERE seq > ? ORDER BY seq LIMIT ?"


@dataclass(kw_only=True)
class RunRow:
    """What the runs page shows of one run."""

    run_id: str
    started: float = 0.0
    updated: float = 0.0
    model: str = ""
    prompt: str = ""
    steps: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    ended: str = "interrupted"
    """The state its last entry says, before a live lease is looked at."""
    message: str = ""
    held: int = 0
    asking: set[str] = field(default_factory=set)
    """Calls the running run asks about through the inbox and waits on."""
    holder: Holder | None = field(default=None, repr=False)
    last_seq: int = 0
    """The newest entry read: the row's version, for live pages."""
    eval: Mapping[str, Any] | None = None
    """The eval trial this run is (its start's ``meta["eval"]``: report, suite, model, task, trial, attempt)."""
    verdict: Mapping[str, Any] | None = None
    """The eval check's verdict on it (reward, reason, detail), once the trial is scored."""

    def state(self, now: float) -> str:
        return "running" if self.holder is not None and self.holder.alive(now) else self.ended

    @property
    def host(self) -> str:
        return self.holder.host if self.holder is not None else ""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def matches(self, query: str) -> bool:
        """Whether ``query`` (lowercase) is in the run id, model, prompt, message or holder host."""
        return any(query in s.lower() for s in (self.run_id, self.model, self.prompt, self.message, self.host))

    def fold(self, entry: Entry) -> None:
        data = entry.data
        self.updated, self.last_seq = entry.at, max(self.last_seq, entry.seq)
        self.started = self.started or entry.at
        if entry.kind == "ask":
            self.asking.add(data.get("call_id", ""))
            return
        if entry.kind == "decision":  # written by the resuming process: the run goes on after it
            self.asking.discard(data.get("call_id", ""))
            return
        if entry.kind == "eval":  # an eval's verdict, written just before the run's finish
            self.verdict = data
            return
        self.steps = max(self.steps, entry.step)
        self.ended, self.message = "interrupted", ""
        if entry.kind == "start":
            self.started, self.model = entry.at, str(data.get("model", ""))
            meta = data.get("meta") or {}
            tag = meta.get("eval")
            if isinstance(tag, str) and tag:  # a fleet's trial run in a journal of toolslip before 7 Dec 2026
                tag = {**meta, "report": tag, "model": self.model}
            self.eval = tag if isinstance(tag, dict) and tag.get("report") else None
            users = [m for m in data.get("messages", ()) if m.get("role") == "user"]
            self.prompt = message_from_dict(users[-1]).text if users else ""
        elif entry.kind == "model":
            usage = data["response"].get("usage") or {}
            self.input_tokens += usage.get("input_tokens", 0)
            self.output_tokens += usage.get("output_tokens", 0)
        elif entry.kind == "tool_end":
            self.tool_calls += 1
        elif entry.kind == "finish":
            self.ended, self.cost = str(data.get("stop_reason", "?")), data.get("cost")
            self.held = len(data.get("pending", ()))
            trial = (data.get("extra") or {}).get("trial")
            if isinstance(trial, dict) and "reason" in trial:  # the fleet's trial run keeps its record here
                self.verdict = {k: trial.get(k) for k in ("reward", "reason", "detail")}
            self.message = f"{self.held} waiting for a decision" if self.held else ""
        elif entry.kind == "abort":
            self.ended, self.message = str(data.get("status", "failed")), str(data.get("error", ""))
        if entry.kind != "finish":
            self.held = 0


class _Feed:
    """Entries with ``seq`` above a point, from a SQLite file or a PostgreSQL journal."""

    def __init__(self, store: LeasedStore) -> None:
        self.store = store
        self._db: sqlite3.Connection | None = None

    def exists(self) -> bool:
        return hasattr(self.store, "pool") or Path(self.store.path).is_file()

    def after(self, seq: int) -> list[Entry]:
        pool = getattr(self.store, "pool", None)
        if pool is not None:
            with pool.connection() as conn:
                rows = conn.execute(
                    "SELECT seq, run_id, at, kind, step, key, data FROM toolslip.entries WHERE seq > %s "
                    "ORDER BY seq LIMIT %s",
                    (seq, _BATCH),
                ).fetchall()
        else:
            try:
                rows = self._sqlite().execute(_SQLITE_AFTER, (seq, _BATCH)).fetchall()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                return []  # the file exists, and its first run is writing the schema right now
        return [
            Entry(seq=s, run_id=r, at=a, kind=k, step=st, key=key, data=orjson.loads(bytes(d)))
            for s, r, a, k, st, key, d in rows
        ]

    def _sqlite(self) -> sqlite3.Connection:
        if self._db is None:
            path = Path(self.store.path)
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
            self._db.execute("PRAGMA busy_timeout=30000")
        return self._db


class RunIndex:
    """Every run of the journal as a :class:`RunRow`; :meth:`refresh` folds in what was written since.

    Not thread-safe: the console calls it from one worker thread.
    """

    def __init__(self, store: LeasedStore) -> None:
        self.store = store
        self.rows: dict[str, RunRow] = {}
        self._feed = _Feed(store)
        self._floor = 0
        """Every entry up to here has been read (or given up on)."""
        self._seen: set[int] = set()
        self._gaps: dict[int, float] = {}
        self._first = True
        self.version = 0
        """Grows whenever a row changes: live pages wait for it."""

    def refresh(self, now: float | None = None) -> bool:
        """Read the new entries and the leases; whether anything changed."""
        now = time.time() if now is None else now
        if not self._feed.exists():  # a console serving an agent may start before its journal's first run
            return False
        changed, initial = False, self._first
        while True:
            read = self._feed.after(self._floor)
            entries = [e for e in read if e.seq not in self._seen]
            for entry in entries:
                self.rows.setdefault(entry.run_id, RunRow(run_id=entry.run_id)).fold(entry)
            self._advance([e.seq for e in entries], now, initial)
            changed = changed or bool(entries)
            if len(read) < _BATCH:
                break
        self._first = False
        holders = self.store.leases.holders()
        for run_id, row in self.rows.items():
            holder = holders.get(run_id)
            alive = holder if holder is not None and holder.alive(now) else None
            if (alive is None) != (row.holder is None) or (alive is not None and row.holder != alive):
                row.holder, changed = alive, True
        if changed:
            self.version += 1
        return changed

    def _advance(self, seqs: Iterable[int], now: float, initial: bool) -> None:
        seqs = sorted(seqs)
        if initial and seqs:  # the journal as it stood: its gaps are pruned runs, not inserts still to commit
            self._floor = seqs[-1]
            return
        if not seqs:
            self._drop_gaps(now)
            return
        self._seen.update(seqs)
        for missing in set(range(self._floor + 1, seqs[-1])) - self._seen:
            self._gaps.setdefault(missing, now)
        self._drop_gaps(now)

    def _drop_gaps(self, now: float) -> None:
        for missing, since in list(self._gaps.items()):
            if missing in self._seen or now - since > GAP_WAIT:
                del self._gaps[missing]
                self._seen.add(missing)
        while self._floor + 1 in self._seen:
            self._floor += 1
            self._seen.discard(self._floor)

    def select(self, *, state: str = "", query: str = "", limit: int = 200) -> tuple[list[RunRow], int]:
        """The newest runs in ``state`` whose text holds ``query``, at most ``limit``; and how many matched."""
        now, query = time.time(), query.strip().lower()
        rows = [
            r for r in self.rows.values() if (not state or r.state(now) == state) and (not query or r.matches(query))
        ]
        rows.sort(key=lambda r: r.started, reverse=True)
        return rows[:limit], len(rows)

    def states(self) -> Mapping[str, int]:
        now = time.time()
        counts: dict[str, int] = {}
        for row in self.rows.values():
            counts[row.state(now)] = counts.get(row.state(now), 0) + 1
        return dict(sorted(counts.items()))

    def reports(self) -> dict[str, list[RunRow]]:
        """The runs of each eval report, by report id (newest report first)."""
        found: dict[str, list[RunRow]] = {}
        for row in sorted(self.rows.values(), key=lambda r: r.started, reverse=True):
            if row.eval is not None:
                found.setdefault(str(row.eval["report"]), []).append(row)
        return found

    def held(self) -> list[RunRow]:
        """Runs that may hold calls waiting for a decision: paused ones, interrupted ones (cut-off calls), and
        running ones asking through the inbox."""
        now = time.time()
        return sorted(
            (r for r in self.rows.values() if r.state(now) in ("paused", "interrupted") or r.asking),
            key=lambda r: r.updated,
            reverse=True,
        )
