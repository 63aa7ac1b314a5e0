"""The run journal on PostgreSQL: one journal that many processes on many machines share.

``Journal("postgresql://user@host/db")`` (or ``--journal``, or ``$TOOLSLIP_JOURNAL``) keeps the same
append-only log and the same lease as the SQLite file (:mod:`toolslip.durable.journal_store`,
:mod:`toolslip.durable.lease`), in the schema ``toolslip`` of that database:

* ``toolslip.entries``: one row per entry; a trigger refuses UPDATE, DELETE and TRUNCATE (a prune deletes
  the rows of the one run it holds, and nothing else);
* ``toolslip.leases``: one row per run being executed. An entry is written only if the lease still names
  its writer, in the same statement, which also locks that lease row (``FOR SHARE``): a takeover waits for
  a write in flight, and a write after a takeover finds the new owner and writes nothing.

Lease expiry is judged by the server's clock (``now()``), never by the workers': a lease is taken over
when the server saw no renewal for ``ttl`` seconds, or at once when its holder was a process on this
same machine that is gone. Exactly one claimant wins: the row is read ``FOR UPDATE`` and replaced only if
it still names the owner that was judged gone.

The database may go away under a run. A write that fails because the connection dropped or the server
restarted is sent again on a fresh connection for up to ``retry_for`` seconds; each entry carries a token
so that a write whose commit was not acknowledged is never stored twice. A write that still fails (the
server stays down, a statement timeout, a full disk) raises :class:`~toolslip.core.errors.JournalError`
with one sentence; the run stops there and ``toolslip resume`` goes on from what was written.

Only what must be on disk before something else happens waits for the disk. Each commit of ``start``,
``resume``, ``tool_start`` of a side-effecting call (the write-ahead record), ``finish`` and ``abort`` waits for
the server's WAL flush (``synchronous_commit`` on, a run's last entry and anything a user is told about
included); ``model`` and ``tool_end`` entries, which record what has already happened, are committed with
``synchronous_commit`` off for their own transaction and return before the disk has them. This is sound
because PostgreSQL's WAL is one sequence: a flush writes everything before the commit it waits for, so
the next durable entry of a run (its next ``tool_start``, at the latest its ``finish``) makes every entry
before it durable too, before the next tool runs or the run is reported over. A crash of the server (or
of its machine) can therefore lose only the run's newest entries after its last durable one: a prefix of
the run survives, which is exactly what a crash of the writer at that point would have left. A lost
``tool_end`` makes its call "cut off" (a ``tool_start`` with no end), which ``resume`` puts to the rerun
policy as it always did, and a lost ``model`` entry is a model call asked again. The ``tool_start`` of a
read-only or idempotent call waits for nothing either: ``resume`` runs such a cut-off call again without
asking, so whether its start survived changes nothing. Nothing else depends on these entries: leases
are their own durable rows, ``Dedup`` remembers within a run (replayed from the same entries), a paused
run's ``finish`` (its pending calls) is durable, and the fleet records an outcome only after the durable
``finish`` it reads.

Two things could break the prefix. A writer that outlives the crash (its connection dropped, the statement
retried) would go on past entries the server lost; so it keeps each entry it committed without waiting
until a durable one follows (at most ``_MOST_UNSURE``), and on any retry, and in the statement of every
durable entry, checks that they are still there (by their tokens: the newest is enough, as a crash loses
the newest commits), writing the lost ones again, in order, before going on. And a process that reads a
run to go on with it (a resume, a fleet worker taking over) must not read entries that a crash may still
take away: it always takes the run's lease first, and taking it is a durable commit, which puts everything
written before it on disk.

The store, its lease and the prefix check stay in one module (about 550 lines) because they are one
statement: every append checks the lease and the newest unsure entry in the SQL that writes it.

Connections come from a small pool (psycopg_pool), so the heartbeat thread and the run share them.
``prune`` removes one finished run at a time, each in a short transaction that holds that run's lease, so
live writers of other runs never wait on it; the space goes back to PostgreSQL (``VACUUM``) for new
entries rather than to the file system.
"""

from __future__ import annotations

import logging
import os
import time
import urllib.parse
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from ..core.effects import is_side_effecting, parse_effects
from ..core.errors import ConfigError, JournalError, RunBusy
from .journal_pg_connect import first_line as _reason
from .journal_pg_connect import probe
from .journal_store import FINISHED, Entry, PruneReport, RunSummary, summary_of
from .lease import _HOST, _NODE, TTL, Holder, Lease, LeaseKeeper, _started, busy_message

__all__ = ["PostgresStore", "redacted"]

T = TypeVar("T")

# The pool logs each failed reconnection; a failure that matters reaches the user as one JournalError.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

_SCHEMA = """
CREATE SCHEMA IF NOT EXISTS toolslip;
CREATE TABLE IF NOT EXISTS toolslip.entries (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, run_id text NOT NULL, at double precision NOT NULL,
    kind text NOT NULL, step integer NOT NULL, key text NOT NULL, data bytea NOT NULL, token uuid UNIQUE);
CREATE INDEX IF NOT EXISTS entries_run ON toolslip.entries (run_id, seq);
CREATE TABLE IF NOT EXISTS toolslip.leases (
    run_id text PRIMARY KEY, owner text NOT NULL, pid integer NOT NULL, host text NOT NULL, node text NOT NULL,
    started text NOT NULL, taken_at timestamptz NOT NULL, renewed_at timestamptz NOT NULL,
    ttl double precision NOT NULL);
CREATE OR REPLACE FUNCTION toolslip.append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.run_id = current_setting('toolslip.pruning', true) THEN
            RETURN OLD;
        END IF;
    END IF;
    RAISE EXCEPTION 'the run journal is append-only';
END $$;
CREATE OR REPLACE TRIGGER entries_append_only BEFORE UPDATE OR DELETE ON toolslip.entries
    FOR EACH ROW EXECUTE FUNCTION toolslip.append_only();
CREATE OR REPLACE TRIGGER entries_no_truncate BEFORE TRUNCATE ON toolslip.entries
    FOR EACH STATEMENT EXECUTE FUNCTION toolslip.append_only();
"""


def _insert(*, leased: bool, durable: bool) -> str:
    """The statement that writes one entry (see the module docstring for ``durable``).

    ``leased``: only while the lease names ``owner``, a row that the statement locks ``FOR SHARE``. An entry
    that is not ``durable`` turns ``synchronous_commit`` off for its own one-statement transaction. A
    ``durable`` one is written only if the last of this process's entries not yet known to be on disk (token
    ``last``) is still there, and so all those before it: a server crash loses the newest commits only.
    """
    sources = (["held"] if leased else []) + ([] if durable else ["later"])
    ctes = ([_HELD] if leased else []) + ([] if durable else [_LATER])
    guard = _STILL_THERE if durable else ""
    return (
        ("WITH " + ", ".join(ctes) + "\n" if ctes else "")
        + "INSERT INTO toolslip.entries (run_id, at, kind, step, key, data, token)\n"
        + "SELECT %(run)s, extract(epoch FROM clock_timestamp()), %(kind)s, %(step)s, %(key)s, %(data)s, %(token)s"
        + (" FROM " + ", ".join(sources) if sources else "")
        + guard
        + "\nON CONFLICT (token) DO NOTHING"
    )


_BOTH = (False, True)
_HELD = "held AS (SELECT 1 FROM toolslip.leases WHERE run_id = %(run)s AND owner = %(owner)s FOR SHARE)"
_LATER = "later AS (SELECT set_config('synchronous_commit', 'off', true))"
_STILL_THERE = """
WHERE %(last)s::uuid IS NULL OR EXISTS (SELECT 1 FROM toolslip.entries WHERE token = %(last)s::uuid)"""
_INSERT = {(leased, durable): _insert(leased=leased, durable=durable) for leased in _BOTH for durable in _BOTH}

_AFTER_THE_FACT = frozenset({"model", "tool_end"})
"""Entries that record what already happened, committed without waiting for the disk (the module docstring)."""


def _after_the_fact(kind: str, data: Mapping[str, Any]) -> bool:
    """Whether an entry may be committed without waiting for the disk (the module docstring says why)."""
    if kind == "tool_start":  # the write-ahead record of a call that resume runs again anyway need not wait
        effects = data.get("effects")
        return effects is not None and not is_side_effecting(parse_effects(effects))
    return kind in _AFTER_THE_FACT


_MOST_UNSURE = 64
"""Entries of a run kept in memory until a durable one follows; the next is made durable when there are more."""

# Ages by the server's clock; Holder gets them as times on ours (now - age), so alive() judges by the server.
_HOLDER = """
SELECT run_id, owner, pid, host, node, started, extract(epoch FROM now() - taken_at)::float8,
       extract(epoch FROM now() - renewed_at)::float8, ttl FROM toolslip.leases
"""
_RUNS = """
WITH r AS (
    SELECT run_id, MIN(at) AS started, MAX(at) AS updated, MAX(step) AS steps, SUM(octet_length(data)) AS size,
           MIN(seq) AS first, MAX(seq) AS last
    FROM toolslip.entries GROUP BY run_id ORDER BY MIN(seq) DESC LIMIT %s)
SELECT r.run_id, r.started, r.updated, r.steps, r.size, l.kind, l.data, f.kind, f.data
FROM r JOIN toolslip.entries l ON l.seq = r.last JOIN toolslip.entries f ON f.seq = r.first ORDER BY r.first DESC
"""
_LAST = """
SELECT DISTINCT ON (run_id) run_id, at, kind, data FROM toolslip.entries ORDER BY run_id, seq DESC
"""

# Connection failures and server restarts: the statement can be sent again on another connection.
_TRANSIENT = (
    pg_errors.AdminShutdown,
    pg_errors.CrashShutdown,
    pg_errors.CannotConnectNow,
    pg_errors.ConnectionException,
    PoolTimeout,
)


def redacted(url: str) -> str:
    """``url`` without its password, for messages and listings (a malformed URL: up to its ``@``)."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018  (raises ValueError for a port that is no number)
    except ValueError:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://{rest.rpartition('@')[2]}" if "@" in rest else url
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class PostgresStore:
    """The run journal in a PostgreSQL database; safe to share between processes and machines.

    ``ttl``: the lease's time to live. ``host``: this process's name in leases (by default the machine's);
    a process given a name of its own is judged by ``ttl`` alone, like another machine. ``retry_for``:
    seconds a write waits for a dropped connection or a restarting server. ``statement_timeout``: seconds
    one statement may take before it fails (``None``: the server's setting).
    """

    def __init__(
        self,
        url: str,
        *,
        ttl: float = TTL,
        host: str | None = None,
        retry_for: float = 10.0,
        statement_timeout: float | None = None,
        pool_size: int = 4,
    ) -> None:
        self.url = url
        self.path = redacted(url)
        """Where the journal is, as messages show it (no password)."""
        self.retry_for = retry_for
        options: dict[str, Any] = {"autocommit": True}
        if statement_timeout is not None:
            options["options"] = f"-c statement_timeout={int(statement_timeout * 1000)}"
        wait = max(1.0, min(5.0, retry_for))  # for a free connection, or a new one while the server is away
        probe(url, self.path)  # a wrong URL or an unreachable server: its cause in one sentence, at once
        self.pool = ConnectionPool(
            url, min_size=1, max_size=pool_size, kwargs=options, open=False, name="toolslip-journal", timeout=wait
        )
        try:
            self.pool.open(wait=True, timeout=max(retry_for, 1.0))
            self._create_schema()
        except (psycopg.Error, PoolTimeout) as exc:
            self.pool.close()
            raise ConfigError(f"cannot open the run journal {self.path}: {_reason(exc)}") from None
        self.leases = PgLeases(self, ttl, host)
        self._unsure: dict[str, _Unsure] = {}

    # --- statements, with retries over dropped connections ----------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        with self.pool.connection() as conn:
            yield conn

    def retrying(self, what: str, run_id: str, action: Callable[[psycopg.Connection[Any], int], T]) -> T:
        """``action(conn, attempt)`` on a pooled connection, again on a fresh one while the server is away.

        ``attempt`` counts from 0; a failure that retrying cannot mend is one :class:`JournalError` sentence
        naming ``what`` was being done (for ``run_id``, if one).
        """
        deadline = time.monotonic() + self.retry_for
        attempt, pause = 0, 0.05
        while True:
            try:
                with self._connection() as conn:
                    return action(conn, attempt)
            except _TRANSIENT as exc:
                if time.monotonic() + pause > deadline:
                    raise JournalError(_failure(self.path, what, run_id, exc, self.retry_for)) from None
            except psycopg.OperationalError as exc:  # a statement timeout, a full disk...: retrying will not help
                if exc.sqlstate is not None or time.monotonic() + pause > deadline:
                    raise JournalError(_failure(self.path, what, run_id, exc, self.retry_for)) from None
            attempt += 1
            time.sleep(pause)
            pause = min(pause * 2, 1.0)

    def _create_schema(self) -> None:
        with self._connection() as conn:
            ready = conn.execute("SELECT to_regclass('toolslip.entries'), to_regclass('toolslip.leases')").fetchone()
            if ready is not None and all(ready):
                return  # creating triggers again would lock the table against writers
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('toolslip journal schema'))")  # one creator
                conn.execute(_SCHEMA)

    # --- the JournalStore interface ---------------------------------------------------------------------

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

        ``model`` and ``tool_end`` entries, and ``tool_start`` of a call that is not side-effecting, return
        once committed, before they are on disk; any other entry returns once it, and every entry written
        before it, is on disk (the module docstring says why).
        """
        row = {"run": run_id, "kind": kind, "step": step, "key": key, "data": orjson.dumps(data)}
        row |= {"token": uuid.uuid4(), "owner": lease.owner if lease is not None else None}
        unsure = self._unsure.setdefault(run_id, _Unsure())
        durable = not _after_the_fact(kind, data) or len(unsure.rows) >= _MOST_UNSURE
        statement = _INSERT[lease is not None, durable]

        def write(conn: psycopg.Connection[Any], attempt: int) -> bool:
            # A retry follows a dropped connection, perhaps a server crash: what it lost goes back first,
            # in order. A durable entry checks anyway, in its own statement (a crash can go unnoticed).
            if attempt and self._restore(conn, run_id, unsure) is None:
                return False
            if durable:
                row["last"] = unsure.rows[-1]["token"] if unsure.rows else None
            while True:
                if conn.execute(statement, row).rowcount:
                    return True
                # Nothing written: on a retry, the first attempt may have been committed unacknowledged.
                if attempt and conn.execute(_TOKEN_SEEN, row).fetchone() is not None:
                    return True
                if not durable or not self._restore(conn, run_id, unsure):
                    return False  # the lease names another owner

        if not self.retrying(f"writing its {kind} entry", run_id, write):
            if lease is not None:
                lease.lose()
            return
        if durable:
            self._unsure.pop(run_id, None)  # this commit waited for the disk, so did every earlier one
        else:
            unsure.rows.append(row)

    def _restore(self, conn: psycopg.Connection[Any], run_id: str, unsure: _Unsure) -> int | None:
        """Write again, in order, the entries of ``unsure`` that a server crash lost: how many (``None``: the
        lease names another owner, so nothing could be written)."""
        kept = {token for (token,) in conn.execute(_TOKENS_SEEN, ([r["token"] for r in unsure.rows],))}
        lost = [r for r in unsure.rows if r["token"] not in kept]
        for again in lost:
            if not conn.execute(_INSERT[again["owner"] is not None, False], again).rowcount:
                return None
        return len(lost)

    def entries(self, run_id: str) -> list[Entry]:
        def read(conn: psycopg.Connection[Any], attempt: int) -> list[Entry]:
            rows = conn.execute(
                "SELECT seq, run_id, at, kind, step, key, data FROM toolslip.entries WHERE run_id = %s ORDER BY seq",
                (run_id,),
            )
            return [
                Entry(seq=seq, run_id=run, at=at, kind=kind, step=step, key=key, data=orjson.loads(data))
                for seq, run, at, kind, step, key, data in rows
            ]

        return self.retrying("reading it", run_id, read)

    def runs(self, limit: int = 50) -> list[RunSummary]:
        """The newest ``limit`` runs, with their status: plain reads, which never wait for writers."""
        with self._connection() as conn:
            rows = conn.execute(_RUNS, (limit,)).fetchall()
        holders, now = self.leases.holders(), time.time()
        return [
            summary_of(
                run_id,
                (started, updated, steps, int(size)),
                (first_kind, first),
                (kind, last),
                holders.get(run_id),
                now,
            )
            for run_id, started, updated, steps, size, kind, last, first_kind, first in rows
        ]

    def file_size(self) -> int:
        """Bytes the journal's tables and indexes take in the database."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT pg_total_relation_size('toolslip.entries') + pg_total_relation_size('toolslip.leases')"
            ).fetchone()
        return int(row[0]) if row else 0

    def prune(self, *, before: float | None = None, keep: int | None = None) -> PruneReport:
        """Remove finished runs last touched before ``before`` and/or beyond the ``keep`` newest finished ones.

        Each run goes in its own short transaction that first takes its lease, so a run that another process
        is executing (or starts executing meanwhile) is kept, and writers of other runs never wait.
        """
        size = self.file_size()
        with self._connection() as conn:
            rows = conn.execute(_LAST).fetchall()
        finished = sorted(
            ((updated, run_id) for run_id, updated, kind, data in rows if _finished(kind, data)), reverse=True
        )
        doomed = [run_id for updated, run_id in finished if before is None or updated < before]
        if keep is not None:
            newest = {run_id for _, run_id in finished[:keep]}
            doomed = [run_id for run_id in doomed if run_id not in newest]
        removed = [run_id for run_id in doomed if self._remove(run_id)]
        if removed:
            with self._connection() as conn:
                conn.execute("VACUUM toolslip.entries")  # the space is reused by new entries
        return PruneReport(removed=tuple(removed), bytes_before=size, bytes_after=self.file_size())

    def _remove(self, run_id: str) -> bool:
        with self._connection() as conn, conn.transaction():
            try:
                self.leases.claim(conn, run_id, uuid.uuid4().hex)
            except RunBusy:
                return False  # being executed: it can still change
            last = conn.execute(
                "SELECT kind, data FROM toolslip.entries WHERE run_id = %s ORDER BY seq DESC LIMIT 1", (run_id,)
            ).fetchone()
            if last is None or not _finished(*last):
                return False  # resumed since it was listed; the claim is rolled back with the transaction
            conn.execute("SELECT set_config('toolslip.pruning', %s, true)", (run_id,))
            conn.execute("DELETE FROM toolslip.entries WHERE run_id = %s", (run_id,))
            conn.execute("DELETE FROM toolslip.leases WHERE run_id = %s", (run_id,))
        return True

    def close(self) -> None:
        self.leases.close()
        self.pool.close()


_TOKEN_SEEN = "SELECT 1 FROM toolslip.entries WHERE token = %(token)s"
_TOKENS_SEEN = "SELECT token FROM toolslip.entries WHERE token = ANY(%s::uuid[])"


@dataclass(kw_only=True)
class _Unsure:
    """What of one run this process wrote that may not be on the server's disk yet."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    """Entries committed without waiting for the disk since the run's last durable one, in order."""


def _finished(kind: str, data: bytes) -> bool:
    return kind == "finish" and orjson.loads(data).get("stop_reason") in FINISHED


class PgLeases(LeaseKeeper):
    """Run leases in ``toolslip.leases``, their expiry judged by the server's clock."""

    errors = (psycopg.Error, PoolTimeout, JournalError)

    def __init__(self, store: PostgresStore, ttl: float, host: str | None) -> None:
        super().__init__(ttl)
        self.store = store
        self.host = host or _HOST
        self.node = f"named:{host}" if host else _NODE
        """Where this process's pid means something; a named host is never this machine to another process."""

    def take(self, run_id: str) -> Lease:
        if (held := self._taken(run_id)) is not None:
            return held
        owner = uuid.uuid4().hex

        def claim(conn: psycopg.Connection[Any], attempt: int) -> None:
            with conn.transaction():
                self.claim(conn, run_id, owner)

        self.store.retrying("taking its lease", run_id, claim)
        return self._hold(Lease(self, run_id, owner))

    def claim(self, conn: psycopg.Connection[Any], run_id: str, owner: str) -> None:
        """Inside ``conn``'s transaction: make ``owner`` the holder of ``run_id``, or raise RunBusy."""
        row = conn.execute(_HOLDER + " WHERE run_id = %s FOR UPDATE", (run_id,)).fetchone()
        now = time.time()
        holder = _holder_of(row, now) if row is not None else None
        if holder is not None and holder.owner == owner:
            return  # a retry: the first attempt was committed but its answer lost
        if holder is not None and holder.alive(now):
            raise RunBusy(busy_message(run_id, holder, now))
        # Replace the row only if it still names the owner judged gone (a row inserted meanwhile by another
        # claimant names someone else): exactly one claimant wins.
        taken = conn.execute(
            """INSERT INTO toolslip.leases (run_id, owner, pid, host, node, started, taken_at, renewed_at, ttl)
               VALUES (%s, %s, %s, %s, %s, %s, now(), now(), %s)
               ON CONFLICT (run_id) DO UPDATE SET owner = EXCLUDED.owner, pid = EXCLUDED.pid, host = EXCLUDED.host,
                   node = EXCLUDED.node, started = EXCLUDED.started, taken_at = now(), renewed_at = now(),
                   ttl = EXCLUDED.ttl
               WHERE toolslip.leases.owner = %s""",
            (
                run_id,
                owner,
                os.getpid(),
                self.host,
                self.node,
                _started(os.getpid()),
                self.ttl,
                holder and holder.owner,
            ),
        ).rowcount
        if not taken:
            winner = self._holder(conn, run_id)
            raise RunBusy(busy_message(run_id, winner) if winner else f"run {run_id} was just taken by another process")

    def renew(self, lease: Lease, *, background: bool = False) -> None:
        sent = time.monotonic()

        def update(conn: psycopg.Connection[Any], attempt: int) -> int:
            return conn.execute(
                "UPDATE toolslip.leases SET renewed_at = now() WHERE run_id = %s AND owner = %s",
                (lease.run_id, lease.owner),
            ).rowcount

        if self.store.retrying("renewing its lease", lease.run_id, update):
            lease.renewed = sent
        else:
            lease.lost = self.holder(lease.run_id) or True

    def _delete(self, lease: Lease) -> None:
        self.store._unsure.pop(lease.run_id, None)  # the run's last entry was durable, or the run stopped
        with self.store._connection() as conn:
            conn.execute("DELETE FROM toolslip.leases WHERE run_id = %s AND owner = %s", (lease.run_id, lease.owner))

    def holders(self) -> dict[str, Holder]:
        with self.store._connection() as conn:
            rows = conn.execute(_HOLDER).fetchall()
        now = time.time()
        return {row[0]: _holder_of(row, now) for row in rows}

    def holder(self, run_id: str) -> Holder | None:
        with self.store._connection() as conn:
            return self._holder(conn, run_id)

    @staticmethod
    def _holder(conn: psycopg.Connection[Any], run_id: str) -> Holder | None:
        row = conn.execute(_HOLDER + " WHERE run_id = %s", (run_id,)).fetchone()
        return _holder_of(row, time.time()) if row is not None else None


def _holder_of(row: tuple[Any, ...], now: float) -> Holder:
    run_id, owner, pid, host, node, started, taken_age, renewed_age, ttl = row
    return Holder(
        run_id=run_id,
        owner=owner,
        pid=pid,
        host=host,
        node=node,
        started=started,
        taken_at=now - taken_age,
        renewed_at=now - renewed_age,
        ttl=ttl,
    )


def _failure(where: str, what: str, run_id: str, exc: BaseException, waited: float) -> str:
    """One sentence: what failed for which run, why, and that resume goes on from what was written."""
    if isinstance(exc, pg_errors.QueryCanceled):
        why = "the database did not answer within its statement timeout"
    elif isinstance(exc, pg_errors.DiskFull | pg_errors.ProgramLimitExceeded) or "could not extend" in str(exc):
        why = f"the database server is out of disk space ({_reason(exc)})"
    elif isinstance(exc, _TRANSIENT) or exc.__class__ is psycopg.OperationalError:
        why = f"the database server could not be reached for {waited:g} s ({_reason(exc)})"
    else:
        why = _reason(exc)
    if not run_id:
        return f"the run journal {where} failed while {what}: {why}"
    if what == "writing its start entry":  # nothing of the run is journaled: there is nothing to resume
        return (
            f"the run journal {where} failed while {what} for run {run_id}: {why}; the run did not start: run it again"
        )
    return (
        f"the run journal {where} failed while {what} for run {run_id}: {why}; "
        f"the run stops here, and `toolslip resume {run_id}` continues it from what was written"
    )
