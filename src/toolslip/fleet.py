"""A fleet: N worker processes, on any number of machines, working one queue of runs over one PostgreSQL journal.

Each run is executed by whichever worker holds its lease (:mod:`toolslip.durable.lease`); a worker that
dies stops renewing it, and once the database server has seen no renewal for ``ttl`` seconds another
worker takes the run over and resumes it from its journal, with the same ``rerun_interrupted`` policy as
``toolslip resume``: a side-effecting call cut off by the death (it may have happened) runs again only if
that policy says so, and is otherwise answered "not run again" and counted on the run.

* :class:`Queue`: the runs to do, a table ``toolslip.queue`` beside the journal (run id, prompt, outcome).
* :func:`work`: one worker's loop; it returns when every queued run has an outcome.
* :class:`Fleet`: starts N worker processes and replaces each one that dies, under a new host name.

A worker is a small program of the user's, since only it knows the model and the tools::

    # worker.py URL HOST
    import sys
    from toolslip import Agent, Dedup
    from toolslip.fleet import work

    def agent(journal):
        return Agent(model=..., tools=..., hooks=journal.wrap(Dedup()))

    work(sys.argv[1], agent, host=sys.argv[2], rerun_interrupted=lambda request: False)

and ``Fleet(lambda host: [sys.executable, "worker.py", url, host], workers=4)`` keeps four of them alive.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from .agent.loop import Agent
from .core.errors import JournalError, RunBusy
from .durable.decisions import Approver
from .durable.journal import Journal
from .durable.journal_pg import PostgresStore
from .durable.journal_store import FINISHED
from .durable.lease import TTL

__all__ = ["Fleet", "Queue", "work"]

_QUEUE = """
CREATE TABLE IF NOT EXISTS toolslip.queue (
    run_id text PRIMARY KEY, prompt text NOT NULL, added timestamptz NOT NULL DEFAULT clock_timestamp(),
    outcome text, done timestamptz)
"""
# Runs with no outcome whose lease, if any, the server saw renewed less than its ttl ago: nobody works them.
_FREE = """
SELECT q.run_id, q.prompt FROM toolslip.queue q
WHERE q.outcome IS NULL AND NOT EXISTS (
    SELECT 1 FROM toolslip.leases l WHERE l.run_id = q.run_id AND now() - l.renewed_at < l.ttl * interval '1 second')
ORDER BY q.added LIMIT %s
"""


class Queue:
    """The runs a fleet works, in the journal's database; each gets an outcome (its stop reason) when done.

    Every statement waits out a server restart like the journal's own writes (``PostgresStore.retrying``).
    """

    def __init__(self, store: PostgresStore) -> None:
        self.store = store

        def create(conn: psycopg.Connection[Any], attempt: int) -> None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtext('toolslip queue'))")
                conn.execute(_QUEUE)

        store.retrying("creating the fleet's queue", "", create)

    def _run(self, what: str, statement: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        def execute(conn: psycopg.Connection[Any], attempt: int) -> list[tuple[Any, ...]]:
            cursor = conn.execute(statement, params)
            return cursor.fetchall() if cursor.description else []

        return self.store.retrying(what, "", execute)

    def submit(self, run_id: str, prompt: str) -> None:
        """Queue a run (a run id already queued is left as it is)."""
        insert = "INSERT INTO toolslip.queue (run_id, prompt) VALUES (%s, %s) ON CONFLICT DO NOTHING"
        self._run("queueing a run", insert, (run_id, prompt))

    def free(self, limit: int = 8) -> list[tuple[str, str]]:
        """Up to ``limit`` runs (id, prompt) with no outcome that no live worker holds."""
        return [(run_id, prompt) for run_id, prompt in self._run("reading the queue", _FREE, (limit,))]

    def unfinished(self) -> int:
        rows = self._run("reading the queue", "SELECT count(*) FROM toolslip.queue WHERE outcome IS NULL")
        return int(rows[0][0])

    def outcomes(self) -> dict[str, str | None]:
        return dict(self._run("reading the queue", "SELECT run_id, outcome FROM toolslip.queue"))

    def finish(self, run_id: str, outcome: str) -> None:
        update = "UPDATE toolslip.queue SET outcome = %s, done = now() WHERE run_id = %s"
        self._run("recording a run's outcome", update, (outcome, run_id))


def work(
    url: str,
    make_agent: Callable[[Journal], Agent],
    *,
    host: str | None = None,
    ttl: float = TTL,
    rerun_interrupted: Approver | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> int:
    """Work the queue in the journal at ``url`` until every run has an outcome; returns how many this worker ended.

    ``make_agent(journal)`` builds the agent, with ``journal.wrap(...)`` as its hooks. ``host`` names this
    worker in leases (default: the machine's name). ``rerun_interrupted`` decides whether a side-effecting
    call cut off by a dead worker runs again (``None``: the run pauses for a person, as ``toolslip resume``
    does without a terminal).
    """
    store = PostgresStore(url, ttl=ttl, host=host)
    queue = Queue(store)
    journal = Journal(store, approver=rerun_interrupted)
    agent = make_agent(journal)
    ended = 0
    try:
        while True:
            try:
                free = queue.free()
                if not free and not queue.unfinished():
                    return ended
            except JournalError as exc:  # the server stayed away longer than retry_for: keep waiting
                log(f"worker {store.leases.host}: {exc}; trying again")
                free = []
            if not free:
                time.sleep(ttl / 4)
                continue
            random.shuffle(free)  # workers that look at once mostly pick different runs
            for run_id, prompt in free:
                try:
                    journal.lease(run_id)
                except (RunBusy, JournalError):
                    continue
                try:
                    outcome = _work_one(journal, agent, queue, run_id, prompt)
                    ended += 1
                    log(f"worker {store.leases.host}: run {run_id} {outcome}")
                except (RunBusy, JournalError) as exc:  # picked up again, by anyone
                    log(f"worker {store.leases.host}: run {run_id} stopped: {exc}")
                finally:
                    journal.release(run_id)
                break  # look at the queue afresh: others have moved on meanwhile
    finally:
        store.close()


def _work_one(journal: Journal, agent: Agent, queue: Queue, run_id: str, prompt: str) -> str:
    """Start, resume or just record the outcome of ``run_id``, whose lease this worker holds."""
    entries = journal.store.entries(run_id)
    last = entries[-1] if entries else None
    if last is not None and last.kind == "finish" and last.data.get("stop_reason") in (*FINISHED, "paused"):
        outcome = str(last.data["stop_reason"])  # ended by a worker that died before recording the outcome
    elif not any(e.kind == "start" for e in entries):
        outcome = asyncio.run(agent.arun(prompt, run_id=run_id)).stop_reason
    else:
        outcome = asyncio.run(journal.resume(agent, run_id)).stop_reason
    queue.finish(run_id, outcome)
    return outcome


class Fleet:
    """N worker processes kept alive: one that dies is replaced by a new one under a new host name.

    ``command(host)`` is the argv of a worker named ``host``. Call :meth:`replace_dead` now and then (a
    supervisor's loop); :meth:`stop` ends them all.
    """

    def __init__(self, command: Callable[[str], Sequence[str]], workers: int, **popen: Any) -> None:
        self.command, self.popen = command, popen
        self.workers: dict[str, subprocess.Popen[bytes]] = {}
        self.started = 0
        self.exits: list[tuple[str, int]] = []
        """(host, exit code) of every worker that ended, in the order they were seen."""
        for _ in range(workers):
            self._start()

    def _start(self) -> None:
        self.started += 1
        host = f"worker-{self.started}"
        self.workers[host] = subprocess.Popen(list(self.command(host)), **self.popen)

    def replace_dead(self) -> list[str]:
        """Start a new worker for each one that ended; returns the hosts that ended."""
        dead = [host for host, process in self.workers.items() if process.poll() is not None]
        for host in dead:
            self.exits.append((host, self.workers.pop(host).returncode))
            self._start()
        return dead

    def wait(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for every worker to end by itself (the queue is done); replace none."""
        deadline = time.monotonic() + timeout
        for process in self.workers.values():
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                return False
        return True

    def stop(self) -> None:
        for process in self.workers.values():
            if process.poll() is None:
                process.kill()
            process.wait()
