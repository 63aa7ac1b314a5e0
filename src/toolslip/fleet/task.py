"""One run, executed inside a Ray worker against the shared PostgreSQL journal.

Ray decides where and how often a run is attempted; this body decides only what an attempt does, from
the journal alone, so that any attempt on any node, by this driver or by one started after it died, does
the same thing:

* the run's lease first (taken by the database's clock): a retry that follows a dead worker waits until
  the dead worker's lease has expired (about ``ttl`` after its last renewal: it asks every ``ttl / 8`` s,
  at most 0.25 s, rather than waiting for a worker to look), then goes on;
* a run the journal shows over is reported, not run again; a run with no ``start`` is started; any other
  run is resumed, with the job's ``rerun_interrupted`` policy for side effects that a death cut off (what
  "started" and "resumed" mean is the job's :class:`Work`: an agent given a prompt, or an eval's trial);
* the run's own failures (a model that errors, a tool file that does not load) are counted in the journal
  (its ``abort`` entries): below ``attempts`` the attempt raises :class:`Retry` and Ray runs it again, after
  a back-off that grows with that count (Ray's task retries have no delay of their own); at ``attempts``
  the run's outcome is ``failed``. The count lives in the journal, so a restarted driver does not reset it.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from ..agent.loop import Agent
from ..core.errors import JournalError, RunBusy, ToolslipError
from ..durable.decisions import Approver
from ..durable.journal import Entry, Journal
from ..durable.journal_store import FINISHED, SqliteStore
from ..durable.lease import TTL
from ..durable.stores import LeasedStore, is_postgres_url

__all__ = ["AgentRuns", "Attempt", "Job", "Policy", "Retry", "Work", "execute_run", "failures", "outcome_of"]

Attempt: TypeAlias = Callable[[str, Any, Sequence[Entry]], Coroutine[Any, Any, object]]
"""``attempt(run_id, payload, entries)``: carry the run out under its lease, given what the journal holds of it."""


@runtime_checkable
class Work(Protocol):
    """What the fleet's runs are: built once per worker process against its journal (a picklable value)."""

    def prepare(self, journal: Journal) -> Attempt: ...


@dataclass(frozen=True)
class AgentRuns:
    """The fleet's usual work: an agent given a prompt, started, or resumed from the journal where it stopped."""

    make_agent: Callable[[Journal], Agent]

    def prepare(self, journal: Journal) -> Attempt:
        agent = self.make_agent(journal)

        async def attempt(run_id: str, prompt: Any, entries: Sequence[Entry]) -> object:
            if any(e.kind == "start" for e in entries):
                return await journal.resume(agent, run_id)
            return await agent.arun(prompt, run_id=run_id)  # never started, or its start was never written

        return attempt


class Retry(ToolslipError):
    """This attempt of a run did not end it; Ray attempts it again (its ``retry_exceptions``)."""


@dataclass(frozen=True, kw_only=True)
class Policy:
    """How runs are attempted: the one retry policy of a fleet, carried out by Ray."""

    attempts: int = 3
    """Attempts that end in the run's own failure before its outcome is ``failed``."""
    backoff: float = 1.0
    """Seconds before the second attempt after a failure; doubled for each further one."""
    max_backoff: float = 30.0
    lost_workers: int = 6
    """Further attempts Ray makes for workers or nodes that died under a run (they are not the run's fault)."""
    ttl: float = TTL
    """The runs' lease time to live: how long a dead worker's run waits before another worker goes on."""
    lease_wait: float | None = None
    """Seconds an attempt waits for a lease held by someone else (default ``2 * ttl + 5``), then retries."""
    hosts_by_ray_node: bool = False
    """Name lease holders by their Ray node instead of the machine: expiry is then judged by ``ttl`` alone,
    as between machines (a cluster on one machine, as in the tests, behaves like one on many)."""

    def delay(self, failed: int) -> float:
        return min(self.max_backoff, self.backoff * 2 ** max(0, failed - 1)) if failed else 0.0

    @property
    def max_retries(self) -> int:
        """Ray's ``max_retries``: every failed attempt but the last, and the lost workers."""
        return max(0, self.attempts - 1) + self.lost_workers


@dataclass(frozen=True, kw_only=True)
class Job:
    """What every attempt of a batch needs: travels to the workers once (``ray.put``) per batch."""

    url: str
    """The journal: a ``postgresql://`` URL, or a SQLite file every node of the cluster can open."""
    work: Work
    """What a run is (:class:`AgentRuns`: ``make_agent(journal)`` builds the agent with ``hooks=journal.wrap(...)``);
    pickled for the workers."""
    rerun_interrupted: Approver | None = None
    """Whether a side-effecting call cut off by a death runs again (``None``: the run pauses for a person)."""
    policy: Policy = field(default_factory=Policy)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    """Names the job in a worker's cache, so its journal and agent are built once per worker process."""


_built: dict[str, tuple[Journal, Attempt]] = {}
"""Per worker process: the journal (its connection pool, its lease heartbeat) and the work of each job."""


def _journal_and_attempt(job: Job) -> tuple[Journal, Attempt]:
    built = _built.get(job.token)
    if built is None:
        host = _ray_node_host() if job.policy.hosts_by_ray_node else None  # in a worker: Ray is up
        journal = Journal(open_journal(job.url, ttl=job.policy.ttl, host=host), approver=job.rerun_interrupted)
        built = _built[job.token] = (journal, job.work.prepare(journal))
    return built


def open_journal(url: str, *, ttl: float = TTL, host: str | None = None) -> LeasedStore:
    """The store at ``url``; a SQLite file serves a cluster on one machine only (its leases are judged by the
    holders' pids), PostgreSQL one of many (and by the database's clock, lease holders named ``host``)."""
    if not is_postgres_url(url):
        return SqliteStore(url, ttl=ttl)
    from ..durable.journal_pg import PostgresStore  # psycopg only for a PostgreSQL journal

    return PostgresStore(url, ttl=ttl, host=host)


def _ray_node_host() -> str:
    try:
        import ray

        return f"ray-node-{ray.get_runtime_context().get_node_id()[:12]}"
    except (ImportError, AttributeError, RuntimeError):  # not inside Ray: the machine, as a named host
        return f"{socket.gethostname()}-{os.getpid()}"


def failures(entries: Sequence[Entry]) -> int:
    """How many attempts of a run ended in its own failure (an ``abort`` the journal marks ``failed``)."""
    return sum(e.kind == "abort" and e.data.get("status") == "failed" for e in entries)


def outcome_of(run_id: str, entries: Sequence[Entry], attempts: int | None = None) -> dict[str, Any] | None:
    """The outcome the journal records for a run that is over (finished or paused), else ``None``.

    ``attempts``: a run with that many failures is over too, ``failed`` with its last error. What the work
    wrote under the finish entry's ``extra`` (an eval's trial record) comes with it.
    """
    last = entries[-1] if entries else None
    failed = failures(entries)
    if last is not None and last.kind == "finish" and last.data.get("stop_reason") in (*FINISHED, "paused"):
        data = last.data
        outcome = _outcome(run_id, str(data["stop_reason"]), failed, output=data.get("output"), entries=entries)
        return outcome | {"extra": dict(data["extra"])} if data.get("extra") else outcome
    if attempts is not None and failed >= attempts:
        error = next((str(e.data.get("error", "")) for e in reversed(entries) if e.kind == "abort"), "")
        return _outcome(run_id, "failed", failed, error=error, entries=entries)
    return None


def _outcome(
    run_id: str, outcome: str, failed: int, *, entries: Sequence[Entry], output: Any = None, error: str = ""
) -> dict[str, Any]:
    ends = [e.data for e in entries if e.kind == "tool_end"]
    return {
        "run_id": run_id,
        "outcome": outcome,
        "output": output,
        "error": error,
        "failed_attempts": failed,
        "resumes": sum(e.kind == "resume" for e in entries),
        "not_rerun": sum(bool(d.get("not_rerun")) for d in ends),
        "refused": sum(bool(d.get("refused")) for d in ends),
    }


def execute_run(job: Job, run_id: str, payload: Any) -> dict[str, Any]:
    """One attempt of ``run_id`` (the Ray task's body): its outcome, or :class:`Retry` for Ray to try again.

    ``payload`` is what the job's work runs: a prompt for an agent, a trial for an eval."""
    journal, attempt = _journal_and_attempt(job)
    store, policy = journal.store, job.policy
    done = outcome_of(run_id, store.entries(run_id), policy.attempts)  # read unleased: only to skip or wait
    if done is not None:
        return done
    time.sleep(policy.delay(failures(store.entries(run_id))))
    _lease(journal, run_id, policy)
    try:
        entries = store.entries(run_id)  # under the lease: what is read cannot change under us
        done = outcome_of(run_id, entries, policy.attempts)
        if done is not None:
            return done
        try:
            asyncio.run(attempt(run_id, payload, entries))
        except (RunBusy, JournalError) as exc:  # another holder, or the database away: someone goes on later
            raise Retry(f"run {run_id} stopped: {exc}") from None
        except Exception as exc:  # the run's own failure: the journal holds its abort entry, and so the count
            entries = store.entries(run_id)
            done = outcome_of(run_id, entries, policy.attempts)
            if done is not None:
                return done
            raise Retry(f"run {run_id} failed ({failures(entries)} of {policy.attempts} attempts): {exc}") from None
        entries = store.entries(run_id)
        return outcome_of(run_id, entries) or _outcome(
            run_id, "interrupted", failures(entries), entries=entries, error="the run ended without a finish entry"
        )
    finally:
        journal.release(run_id)


def _lease(journal: Journal, run_id: str, policy: Policy) -> None:
    """Take ``run_id``'s lease, waiting while a holder that may be dead still has it (its expiry is judged by
    the database's clock); :class:`Retry` when a live holder keeps it past ``lease_wait``."""
    wait = policy.lease_wait if policy.lease_wait is not None else 2 * policy.ttl + 5
    deadline = time.monotonic() + wait
    pause = min(0.25, policy.ttl / 8)
    while True:
        try:
            journal.lease(run_id)
            return
        except RunBusy as exc:
            if time.monotonic() + pause > deadline:
                raise Retry(str(exc)) from None
        except JournalError as exc:
            raise Retry(str(exc)) from None
        time.sleep(pause)


def summary(outcomes: Mapping[str, int]) -> str:
    """``12 completed, 1 failed`` from counts by outcome."""
    return ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()) if n) or "nothing yet"
