"""The run lease: a run is executed by at most one process at a time, across processes and machines.

Two ``toolslip resume`` of one run used to both execute it (ledger ``1 2 3 4 4 5 5 6 6``). Now a process
must hold the run's lease, a row in the journal's own store (its SQLite file, or its PostgreSQL database:
:mod:`toolslip.durable.journal_pg`), to write anything for the run:

* it is taken in a ``BEGIN IMMEDIATE`` transaction, so two processes cannot both find it free;
* its holder renews it from a background thread every ``ttl / 3`` seconds (no cost per step), and checks
  it is still the holder before each tool call starts;
* it is stolen only when it has expired: on the same machine (same boot, same pid namespace) as soon as
  the holder process is gone, elsewhere when it has not been renewed for ``ttl`` seconds. A holder that
  finds its lease stolen (it was stopped longer than ``ttl``) stops before running anything more.

The holder is named in the refusal (pid, host, when it last renewed), so a person knows what to stop.
Clocks of machines sharing a SQLite journal must agree to within a few seconds of ``ttl``; on PostgreSQL
the database server's clock alone judges expiry. :class:`LeaseKeeper` is what both stores share: the
leases this process holds and the heartbeat thread that renews them.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import RunBusy
from .journal_faults import rollback, translated

__all__ = ["TTL", "Holder", "Lease", "LeaseKeeper", "Leases", "busy_message"]

TTL = 30.0
"""Seconds without renewal after which another machine may take a run over."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS leases (
    run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    node TEXT NOT NULL, started TEXT NOT NULL, taken_at REAL NOT NULL, renewed_at REAL NOT NULL,
    ttl REAL NOT NULL);
"""
_COLUMNS = "run_id, owner, pid, host, node, started, taken_at, renewed_at, ttl"
_FIELDS = _COLUMNS.split(", ")


@dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """Who holds a run's lease, as its row says."""

    run_id: str
    owner: str
    pid: int
    host: str
    node: str
    """Boot and pid namespace of the holder: where its pid means something."""
    started: str
    """The holder process's start time, so a reused pid is not mistaken for it."""
    taken_at: float
    renewed_at: float
    ttl: float

    def alive(self, now: float | None = None) -> bool:
        """Whether the lease still binds: its process runs (same machine) or it was renewed in time."""
        if self.node and self.node == _NODE:
            return bool(self.started) and _started(self.pid) == self.started
        return (now or time.time()) - self.renewed_at < self.ttl

    def describe(self, now: float | None = None) -> str:
        ago = max(0, round((now or time.time()) - self.renewed_at))
        return f"pid {self.pid} on {self.host}, lease renewed {ago} s ago"


def _node() -> str:
    """This machine's boot and pid namespace; empty where they cannot be read (then only ``ttl`` counts)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The start time of process ``pid`` (clock ticks since boot), or "" if it is gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return ""
    return "" if fields[0] in ("Z", "X") else fields[19]


_NODE = _node()
_HOST = socket.gethostname()


class Lease:
    """A lease this process holds on one run; renewed in the background until released."""

    def __init__(self, leases: LeaseKeeper, run_id: str, owner: str) -> None:
        self.leases, self.run_id, self.owner = leases, run_id, owner
        self.renewed = time.monotonic()
        """When the last renewal was *sent*: the store's own record of it is no older, so the lease is surely
        held for ``ttl`` from here."""
        self.lost: Holder | bool = False
        """``False`` while held; else the process that took it over (or ``True`` if it is unknown)."""

    def check(self) -> None:
        """Raise :class:`RunBusy` unless this process still holds the lease (renewing it if due)."""
        if not self.lost and time.monotonic() - self.renewed > self.leases.ttl / 2:
            self.leases.renew(self)
        if self.lost:
            self.lose()

    def lose(self) -> None:
        """The lease is not ours any more (a write found another owner): raise :class:`RunBusy` naming it."""
        if not self.lost:
            self.lost = self.leases.holder(self.run_id) or True
        holder = f" by {self.lost.describe()}" if isinstance(self.lost, Holder) else ""
        raise RunBusy(
            f"run {self.run_id} was taken over{holder} while this process was stopped; "
            "this process stops here so that nothing runs twice"
        )

    def release(self) -> None:
        self.leases.release(self)


class LeaseKeeper(ABC):
    """The leases one store holds for this process, and the heartbeat thread that renews them.

    A store implements taking, renewing, reading and deleting lease rows; the bookkeeping and the thread
    are shared, so that SQLite and PostgreSQL leases behave alike.
    """

    errors: tuple[type[Exception], ...] = ()
    """The store's own errors: a heartbeat that meets one leaves the lease to expire or to Lease.check."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self._held: dict[str, Lease] = {}
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    @abstractmethod
    def take(self, run_id: str) -> Lease:
        """The lease on ``run_id``, or :class:`RunBusy` naming the process that holds it."""

    @abstractmethod
    def renew(self, lease: Lease, *, background: bool = False) -> None:
        """Renew ``lease``, or mark it lost; ``background`` when called from the heartbeat thread."""

    @abstractmethod
    def holders(self) -> dict[str, Holder]:
        """Every lease row, live or not, by run id."""

    @abstractmethod
    def holder(self, run_id: str) -> Holder | None: ...

    @abstractmethod
    def _delete(self, lease: Lease) -> None:
        """Delete ``lease``'s row if it still names its owner; errors are the caller's to ignore."""

    def _background_done(self) -> None:  # noqa: B027  (a hook: only a store that opens something for the thread needs it)
        """The heartbeat thread ends: close what it opened."""

    def _taken(self, run_id: str) -> Lease | None:
        """The lease this process already holds on ``run_id``, if it holds one."""
        held = self._held.get(run_id)
        return held if held is not None and not held.lost else None

    def _hold(self, lease: Lease) -> Lease:
        with self._wake:
            self._held[lease.run_id] = lease
            self._wake.notify()  # a lingering heartbeat thread starts counting for this lease
            if self._thread is None:
                self._thread = threading.Thread(target=self._beat, name="toolslip-lease", daemon=True)
                self._thread.start()
        return lease

    def release(self, lease: Lease) -> None:
        # The heartbeat thread is not woken: a run often ends just before the process does, and a daemon
        # thread that wakes while the interpreter shuts down is how shutdown goes wrong.
        with self._wake:
            if self._held.get(lease.run_id) is lease:
                del self._held[lease.run_id]
        with contextlib.suppress(*self.errors):  # a closed or broken journal: the lease expires on its own
            self._delete(lease)

    def close(self) -> None:
        """Release every lease; the heartbeat thread ends at its next beat."""
        self._closed = True
        for lease in list(self._held.values()):
            self.release(lease)

    def _beat(self) -> None:
        """The heartbeat: one thread per store while it holds leases."""
        try:
            while True:
                with self._wake:
                    if not self._held:  # linger a while: the next run of this journal reuses the thread
                        self._wake.wait(self.ttl / 3)
                    if not self._held or self._closed:
                        self._thread = None
                        return
                    self._wake.wait(self.ttl / 3)
                    held = list(self._held.values())
                for lease in held:
                    if not lease.lost and time.monotonic() - lease.renewed >= self.ttl / 3:
                        with contextlib.suppress(*self.errors):  # the store is busy or away: Lease.check notices
                            self.renew(lease, background=True)
        finally:
            self._background_done()


class Leases(LeaseKeeper):
    """Takes, renews and releases run leases in one SQLite file."""

    errors = (sqlite3.Error,)

    def __init__(
        self,
        db: sqlite3.Connection,
        connect: Callable[[], sqlite3.Connection],
        ttl: float = TTL,
        *,
        path: Path = Path("runs.sqlite"),
    ) -> None:
        super().__init__(ttl)
        self.db, self._connect = db, connect
        self.path = path
        """The journal file, named by the sentence of a storage fault."""
        self._beat_db: sqlite3.Connection | None = None
        """The heartbeat thread's own connection, opened on its first renewal."""

    @translated
    def take(self, run_id: str) -> Lease:
        if (held := self._taken(run_id)) is not None:
            return held
        owner = uuid.uuid4().hex
        db, now = self.db, time.time()
        db.execute("BEGIN IMMEDIATE")  # nobody else can read-then-write the row in between
        try:
            holder = self._holder(db, run_id)
            if holder is not None and holder.alive(now):
                raise RunBusy(busy_message(run_id, holder, now))
            db.execute(
                f"INSERT OR REPLACE INTO leases ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, owner, os.getpid(), _HOST, _NODE, _started(os.getpid()), now, now, self.ttl),
            )
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            raise
        return self._hold(Lease(self, run_id, owner))

    def renew(self, lease: Lease, *, background: bool = False) -> None:
        if background:
            db = self._beat_db = self._beat_db or self._connect()
        else:
            db = self.db
        sent = time.monotonic()
        renewed = db.execute(
            "UPDATE leases SET renewed_at = ? WHERE run_id = ? AND owner = ?", (time.time(), lease.run_id, lease.owner)
        ).rowcount
        if renewed:
            lease.renewed = sent
        else:
            lease.lost = self._holder(db, lease.run_id) or True

    def _delete(self, lease: Lease) -> None:
        self.db.execute("DELETE FROM leases WHERE run_id = ? AND owner = ?", (lease.run_id, lease.owner))

    def holders(self) -> dict[str, Holder]:
        rows = self.db.execute(f"SELECT {_COLUMNS} FROM leases").fetchall()
        return {row[0]: _holder_of(row) for row in rows}

    def holder(self, run_id: str) -> Holder | None:
        return self._holder(self.db, run_id)

    @staticmethod
    def _holder(db: sqlite3.Connection, run_id: str) -> Holder | None:
        row = db.execute(f"SELECT {_COLUMNS} FROM leases WHERE run_id = ?", (run_id,)).fetchone()
        return _holder_of(row) if row else None

    def _background_done(self) -> None:
        if self._beat_db is not None:
            self._beat_db.close()
            self._beat_db = None


def busy_message(run_id: str, holder: Holder, now: float | None = None) -> str:
    """The refusal when another live process holds ``run_id``: who it is, and what to do."""
    return (
        f"run {run_id} is being executed by another process ({holder.describe(now)}); "
        "wait for it to finish or stop that process, then resume it"
    )


def _holder_of(row: Sequence[Any]) -> Holder:
    """A ``SELECT {_COLUMNS}`` row as the holder it describes."""
    return Holder(**dict(zip(_FIELDS, row, strict=True)))
