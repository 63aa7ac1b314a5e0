"""Where the run journal lives: the store interface, and its SQLite file.

One file in WAL mode holds an append-only ``entries`` table (triggers refuse UPDATE and DELETE) and the
``leases`` table of :mod:`toolslip.durable.lease`. It holds every argument and output of every run, so it is
created readable by its owner only (0600, in a 0700 folder when toolslip creates the folder).

Finished runs are removed by :meth:`SqliteStore.prune`, which never deletes a row of live data: inside
one transaction it copies the entries to keep into a fresh table that replaces the old one, then
``VACUUM`` rewrites the database into a fresh file so the space is given back.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from ..core.errors import ConfigError
from ..core.messages import message_from_dict
from .journal_faults import journal_faults, read_only_folder, rollback, translated
from .lease import SCHEMA as LEASE_SCHEMA
from .lease import TTL, Holder, Lease, Leases

__all__ = ["FINISHED", "Entry", "JournalStore", "PruneReport", "RunSummary", "SqliteStore", "default_journal_path"]

FINISHED = frozenset(
    {"completed", "max_steps", "max_tokens", "refusal", "forced"}
    | {"max_input_tokens", "max_output_tokens", "max_total_tokens", "max_tool_calls", "max_cost"}
)
"""Stop reasons of runs that are over; a paused, failed or interrupted run can still be resumed."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """One journal line: start, resume, model, tool_start, tool_end, finish or abort."""

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
    """``running`` (a live process holds its lease), ``interrupted`` (stopped with no finish: Ctrl-C or
    killed), ``failed`` (the model call failed), or the last finish's stop reason (``completed``,
    ``paused``, ``max_steps``...)."""
    steps: int
    model: str
    prompt: str
    message: str = ""
    """What goes with the status: the error of a failed run, the holder of a running one, refusals."""
    size: int = 0
    """Bytes of entry data the run holds in the journal."""
    cost: float | None = None
    """US dollars the run's last session cost (see :attr:`RunResult.cost`), when it finished and had a price."""


class JournalStore(Protocol):
    """Where entries go; an entry must survive a crash of the writing process once ``append`` returns.

    A store may keep the newest entries that record what already happened (``model``, ``tool_end``) off its
    disk until the run's next other entry, as the PostgreSQL store does (:mod:`toolslip.durable.journal_pg`).
    """

    def append(self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "") -> None: ...

    def entries(self, run_id: str) -> list[Entry]: ...

    def runs(self, limit: int = 50) -> list[RunSummary]: ...

    def close(self) -> None: ...


def default_journal_path() -> Path:
    """``$TOOLSLIP_HOME/runs.sqlite``, with ``~/.toolslip`` as the home by default."""
    return Path(os.environ.get("TOOLSLIP_HOME") or Path.home() / ".toolslip") / "runs.sqlite"


_ENTRIES = """
CREATE TABLE IF NOT EXISTS {table} (
    seq INTEGER PRIMARY KEY, run_id TEXT NOT NULL, at REAL NOT NULL, kind TEXT NOT NULL,
    step INTEGER NOT NULL, key TEXT NOT NULL, data BLOB NOT NULL);
"""
_GUARDS = """
CREATE INDEX IF NOT EXISTS entries_run ON entries (run_id, seq);
CREATE TRIGGER IF NOT EXISTS entries_no_update BEFORE UPDATE ON entries
    BEGIN SELECT RAISE(ABORT, 'the run journal is append-only'); END;
CREATE TRIGGER IF NOT EXISTS entries_no_delete BEFORE DELETE ON entries
    BEGIN SELECT RAISE(ABORT, 'the run journal is append-only'); END;
"""
_SCHEMA = _ENTRIES.format(table="entries") + _GUARDS + LEASE_SCHEMA


@dataclass(frozen=True, slots=True, kw_only=True)
class PruneReport:
    removed: tuple[str, ...]
    """Run ids removed, newest first."""
    bytes_before: int
    bytes_after: int


class SqliteStore:
    """One SQLite file in WAL mode; each append is its own committed transaction.

    ``synchronous=NORMAL`` survives a killed process (the kill tests prove it) but not a power cut; pass
    ``synchronous="FULL"`` to fsync every append. ``ttl`` is the lease's time to live (:mod:`toolslip.durable.lease`).
    """

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", ttl: float = TTL, read_only: bool = False
    ) -> None:
        self.path = Path(path)
        self._synchronous = synchronous
        self._ttl = ttl
        self.read_only = read_only
        """Only read (``toolslip runs``, ``show``): opened with SQLite's ``mode=ro``, so a journal in a
        read-only folder can still be read, and nothing is created."""
        if self.path.is_dir():  # sqlite would only say "unable to open database file"
            raise ConfigError(
                f"cannot open the run journal {str(path)!r}: it is a directory; give a file such as {path}/runs.sqlite"
            )
        self._opened: sqlite3.Connection | None = None
        self._leases: Leases | None = None

    @property
    def _db(self) -> sqlite3.Connection:
        """The connection, opened (and the file created) at the first read or write, not before.

        A journal file that appeared long before its run's first entry made "is the run recorded yet?"
        impossible to tell from the outside; now the file appears with the run's lease and first entry.
        """
        if self._opened is None:
            with journal_faults(self.path):
                if self.read_only:
                    self._opened = self._connect_read_only()
                else:
                    _create_private(self.path)
                    self._opened = self._connect()
                    self._opened.executescript(_SCHEMA)
        return self._opened

    @property
    def leases(self) -> Leases:
        if self._leases is None:
            self._leases = Leases(self._db, self._connect, self._ttl, path=self.path)
        return self._leases

    def _connect_read_only(self) -> sqlite3.Connection:
        """``mode=ro`` reads a WAL journal whose folder cannot be written (its -wal and -shm left by a killed
        run); without them, SQLite needs ``immutable=1`` (no other process may be writing, which a read-only
        folder guarantees)."""
        if not self.path.is_file():
            raise FileNotFoundError(errno.ENOENT, "no such file", str(self.path))
        uri = self.path.resolve().as_uri()
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
            db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        except sqlite3.OperationalError:
            if not read_only_folder(self.path):
                raise
            db = sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None)
        db.execute("PRAGMA busy_timeout=30000")
        _read_missing_tables_as_empty(db)
        return db

    def _connect(self) -> sqlite3.Connection:
        if read_only_folder(self.path):  # SQLite's own words come later and say less ("unable to open...")
            raise OSError(errno.EROFS, "read-only folder", str(self.path.parent))
        db = sqlite3.connect(self.path, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self._synchronous}")
        db.execute("PRAGMA busy_timeout=30000")  # a prune or another process's lease may hold the lock a while
        db.execute("PRAGMA journal_size_limit=4194304")  # give the WAL's space back after a big entry
        return db

    @translated
    def append(
        self,
        run_id: str,
        kind: str,
        data: Mapping[str, Any],
        *,
        step: int = 0,
        key: str = "",
        lease: Lease | None = None,
    ) -> None:
        """Write one entry; with ``lease``, only if that lease still holds the run, in the same statement.

        Checking and writing at once leaves no moment in which another process could have taken the run
        over between the two: a lost lease raises :class:`~toolslip.core.errors.RunBusy` and nothing is written.
        """
        row = (run_id, time.time(), kind, step, key, orjson.dumps(data))
        if lease is None:
            self._db.execute("INSERT INTO entries (run_id, at, kind, step, key, data) VALUES (?, ?, ?, ?, ?, ?)", row)
            return
        written = self._db.execute(
            """INSERT INTO entries (run_id, at, kind, step, key, data) SELECT ?, ?, ?, ?, ?, ?
               WHERE EXISTS (SELECT 1 FROM leases WHERE run_id = ? AND owner = ?)""",
            (*row, run_id, lease.owner),
        ).rowcount
        if not written:
            lease.lose()

    @translated
    def entries(self, run_id: str) -> list[Entry]:
        rows = self._db.execute(
            "SELECT seq, run_id, at, kind, step, key, data FROM entries WHERE run_id = ? ORDER BY seq", (run_id,)
        )
        return [
            Entry(seq=seq, run_id=run, at=at, kind=kind, step=step, key=key, data=orjson.loads(data))
            for seq, run, at, kind, step, key, data in rows
        ]

    @translated
    def runs(self, limit: int = 50) -> list[RunSummary]:
        """The newest ``limit`` runs, with their status."""
        rows = self._db.execute(
            """SELECT run_id, MIN(at), MAX(at), MAX(step), SUM(LENGTH(data)), MAX(seq), MIN(seq)
               FROM entries GROUP BY run_id ORDER BY MIN(seq) DESC LIMIT ?""",
            (limit,),
        ).fetchall()
        holders, now = self.leases.holders(), time.time()
        summaries = []
        for run_id, started, updated, steps, size, last_seq, first_seq in rows:
            last = self._db.execute("SELECT kind, data FROM entries WHERE seq = ?", (last_seq,)).fetchone()
            first = self._db.execute("SELECT kind, data FROM entries WHERE seq = ?", (first_seq,)).fetchone()
            times = (started, updated, steps, size)
            summaries.append(summary_of(run_id, times, first, last, holders.get(run_id), now))
        return summaries

    @translated
    def file_size(self) -> int:
        """Bytes on disk: the database and its write-ahead log."""
        files = (self.path, self.path.with_name(self.path.name + "-wal"))
        return sum(f.stat().st_size for f in files if f.exists())

    @translated
    def prune(self, *, before: float | None = None, keep: int | None = None) -> PruneReport:
        """Remove finished runs last touched before ``before`` and/or beyond the ``keep`` newest finished ones.

        Paused, failed, interrupted and running runs are never removed: they can still be resumed.
        """
        size = self.file_size()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            doomed = _prunable(db, self.leases, before, keep)
            if doomed:
                db.execute("CREATE TEMP TABLE doomed (run_id TEXT PRIMARY KEY)")
                db.executemany("INSERT INTO doomed VALUES (?)", [(r,) for r in doomed])
                db.execute(_ENTRIES.format(table="entries_kept"))
                db.execute(
                    "INSERT INTO entries_kept SELECT * FROM entries WHERE run_id NOT IN (SELECT run_id FROM doomed)"
                )
                db.execute("DROP TABLE entries")  # its triggers and index go with it; no row is deleted
                db.execute("ALTER TABLE entries_kept RENAME TO entries")
                db.execute("DELETE FROM leases WHERE run_id IN (SELECT run_id FROM doomed)")  # expired ones
                db.execute("DROP TABLE temp.doomed")
                for statement in filter(str.strip, _GUARDS.split(";\n")):
                    db.execute(statement)
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            raise
        if doomed:
            db.execute("VACUUM")  # rewrite the database into a fresh file, so the space is given back
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return PruneReport(removed=tuple(doomed), bytes_before=size, bytes_after=self.file_size())

    def close(self) -> None:
        if self._leases is not None:
            self._leases.close()
        if self._opened is not None:
            self._opened.close()


def summary_of(
    run_id: str,
    times: tuple[float, float, int, int],
    first: tuple[str, bytes],
    last: tuple[str, bytes],
    holder: Holder | None,
    now: float,
) -> RunSummary:
    """A run's summary from its (started, updated, steps, size), its first and last (kind, data) and its lease."""
    started, updated, steps, size = times
    begun = orjson.loads(first[1]) if first[0] == "start" else {}
    ended = orjson.loads(last[1])
    status, message = _status(last[0], ended)
    if holder is not None and holder.alive(now):
        status, message = "running", holder.describe(now)
    user = [m for m in begun.get("messages", ()) if m.get("role") == "user"]
    return RunSummary(
        run_id=run_id,
        started_at=started,
        updated_at=updated,
        status=status,
        steps=steps,
        model=str(begun.get("model", "")),
        prompt=message_from_dict(user[-1]).text if user else "",
        message=message,
        size=size,
        cost=ended.get("cost") if last[0] == "finish" else None,
    )


def _status(kind: str, data: Mapping[str, Any]) -> tuple[str, str]:
    """A run's status and its message, from its last entry (a live lease is looked at by the caller)."""
    if kind == "finish":
        pending = len(data.get("pending", ()))
        counts = (
            (pending, "call" + "s" * (pending != 1) + " waiting for a decision"),
            (data.get("refused"), "refused"),
            (data.get("not_rerun"), "not re-run"),
        )
        return str(data.get("stop_reason", "?")), ", ".join(f"{n} {what}" for n, what in counts if n)
    if kind == "abort":
        return str(data.get("status", "failed")), str(data.get("error", ""))
    return "interrupted", "the process ended without finishing the run"


def _prunable(db: sqlite3.Connection, leases: Leases, before: float | None, keep: int | None) -> list[str]:
    rows = db.execute(
        """SELECT e.run_id, MAX(e.at), l.kind, l.data FROM entries e
           JOIN entries l ON l.seq = (SELECT MAX(seq) FROM entries WHERE run_id = e.run_id)
           GROUP BY e.run_id ORDER BY MIN(e.seq) DESC"""
    ).fetchall()
    running = {run_id for run_id, holder in leases.holders().items() if holder.alive()}
    finished: Sequence[tuple[str, float]] = [
        (run_id, updated)
        for run_id, updated, kind, data in rows
        if kind == "finish" and orjson.loads(data).get("stop_reason") in FINISHED and run_id not in running
    ]
    doomed = [run_id for run_id, updated in finished if before is None or updated < before]
    if keep is not None:
        newest = {run_id for run_id, _ in finished[:keep]}
        doomed = [run_id for run_id in doomed if run_id not in newest]
    return doomed


_TABLES = {
    "entries": _ENTRIES.format(table="temp.entries"),
    "leases": LEASE_SCHEMA.replace(" leases (", " temp.leases ("),
}


def _read_missing_tables_as_empty(db: sqlite3.Connection) -> None:
    """A journal whose creation was cut short (the disk filled before its schema was written) has no runs:
    a reader sees it empty, through tables that live in this connection only, rather than "no such table"."""
    present = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table, schema in _TABLES.items():
        if table not in present:
            db.execute(schema)


def _create_private(path: Path) -> None:
    """Create the journal readable by its owner only: it holds every argument and output of every run."""
    if not path.parent.exists():
        path.parent.mkdir(mode=0o700, parents=True)
    if not path.exists():
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    # SQLite gives its -wal and -shm files the database file's permissions.
