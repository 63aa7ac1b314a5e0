"""What one console serves: the journal, its run index, the worker thread that reads it, the stream's agent.

Every read and write of the journal happens on one worker thread (a SQLite connection belongs to the
thread that opened it, and the journal's reads are blocking calls that must not stall the event loop).
A background task refreshes the run index every :data:`POLL` seconds; live pages and the inbox wait on
it, so a run written by another process or machine shows within about that much time.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..durable.inbox import HeldCall, decide, decision_for, held_calls
from ..durable.journal_store import Entry
from ..durable.stores import LeasedStore
from .index import RunIndex, RunRow
from .security import Guard

__all__ = ["POLL", "Console", "query_int"]

POLL = 0.2
"""Seconds between two reads of the journal's new entries."""

T = TypeVar("T")
_INBOX_RUNS = 200
"""At most this many paused or interrupted runs (the newest) are looked into for held calls."""


@dataclass(kw_only=True)
class Console:
    """The state one console serves: the journal, its index, who decides by default, the stream agent."""

    store: LeasedStore
    token: str
    user: str = field(default_factory=getpass.getuser)
    """Recorded as who decided when a form names no one."""
    loopback: bool = True
    agent: Any = None
    """The agent ``/api/chat`` runs, if any: an :class:`~toolslip.Agent` carrying :attr:`journal`'s hooks
    (``journal.wrap(Dedup(), Approval())``), so its held calls wait in the inbox."""
    journal: Any = None
    """The :class:`~toolslip.Journal` of :attr:`agent`, on the same journal as :attr:`store`."""
    index: RunIndex = field(init=False)
    guard: Guard = field(init=False)

    def __post_init__(self) -> None:
        self.index = RunIndex(self.store)
        self.guard = Guard(self.token, loopback=self.loopback)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="console-journal")
        self._changed = asyncio.Event()
        self._held: dict[str, tuple[tuple[int, bool], list[HeldCall]]] = {}

    async def db(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the journal's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, lambda: fn(*args, **kwargs))

    async def refresh(self) -> None:
        """Fold the journal's new entries into the index; wake the live pages if anything changed."""
        with contextlib.suppress(Exception):  # a journal briefly locked or away: try again next time
            if await self.db(self.index.refresh):
                self._changed.set()
                self._changed = asyncio.Event()

    async def follow(self) -> None:
        """:meth:`refresh` forever, every :data:`POLL` seconds."""
        while True:
            await self.refresh()
            await asyncio.sleep(POLL)

    async def changed(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)

    # --- held calls -----------------------------------------------------------------------------------

    def held(self, rows: list[RunRow]) -> list[HeldCall]:
        """The held calls of ``rows`` (paused or interrupted runs), from each run's entries (cached by version)."""
        calls: list[HeldCall] = []
        for row in rows:
            cached = self._held.get(row.run_id)
            running = row.state(time.time()) == "running"
            if cached is None or cached[0] != (row.last_seq, running):
                calls_now = held_calls(self.store.entries(row.run_id), running=running)
                cached = self._held[row.run_id] = ((row.last_seq, running), calls_now)
            calls += cached[1]
        return calls

    def decided(self, calls: list[HeldCall]) -> dict[str, Any]:
        """Decisions already in the inbox for ``calls``, by ``run/step/call``."""
        found = ((c, decision_for(self.store, c.run_id, c.step, c.call_id, c.hash)) for c in calls)
        return {f"{c.run_id}/{c.step}/{c.call_id}": d for c, d in found if d is not None}

    def inbox(self) -> tuple[list[HeldCall], dict[str, Any]]:
        calls = self.held(self.index.held()[:_INBOX_RUNS])
        return calls, self.decided(calls)

    async def select(self, query: Mapping[str, str]) -> tuple[list[RunRow], int]:
        """The runs a request's filter asks for (read on the journal's thread: the index changes there)."""
        limit = query_int(query.get("limit"), 200)
        return await self.db(self.index.select, state=query.get("state", ""), query=query.get("q", ""), limit=limit)

    async def decide(self, run_id: str, call_id: str, given: Mapping[str, Any], arguments: Any) -> HeldCall:
        """Record a decision from a form or the API (``given``: approved, shown, note, by)."""
        row = self.index.rows.get(run_id)
        return await self.db(
            decide,
            self.store,
            run_id,
            call_id,
            shown=str(given.get("shown", "")),
            approved=given.get("approved") is True,
            note=str(given.get("note") or ""),
            by=str(given.get("by") or "") or self.user,
            arguments=arguments,
            running=row is not None and row.state(time.time()) == "running",
        )

    def run(self, run_id: str) -> tuple[list[Entry], list[HeldCall], dict[str, Any]]:
        entries = self.store.entries(run_id)
        row = self.index.rows.get(run_id)
        running = row is not None and row.state(time.time()) == "running"
        calls = held_calls(entries, running=running)
        return entries, calls, self.decided(calls)


def query_int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default
