"""Exactly once across machines: a fleet of workers sharing one PostgreSQL journal survives losing any of them.

200 runs of three transfers each, a ledger table in the same real PostgreSQL server as the witness, four
worker processes with host names of their own (so only the server's clock decides when a dead worker's
lease has expired), at least 20 workers SIGKILLed at random moments and replaced, and the server itself
restarted once in the middle. Every run must finish, no transfer may reach the ledger twice, and a
transfer missing from it must be one that a kill cut off and the policy (``rerun_interrupted``: no)
left undone, as the journal says.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from conftest import fresh_postgres
from toolslip.durable.journal_pg import PostgresStore
from toolslip.fleet import Fleet, Queue
from toolslip.testing.postgres import PostgresServer

WORKER = Path(__file__).with_name("_fleet_worker.py")
SEED = int(os.environ.get("TOOLSLIP_KILL_SEED", "0")) or random.randrange(1 << 30)
RUNS, WORKERS, KILLS, TTL = 200, 4, 20, 1.5


def cut_off_and_left(store: PostgresStore, run_ids: list[str]) -> set[str]:
    """References of transfers the journal says were cut off and not run again."""
    left = set()
    for run_id in run_ids:
        entries = store.entries(run_id)
        arguments = {
            (e.step, part["id"]): part["arguments"]["reference"]
            for e in entries
            if e.kind == "model"
            for part in e.data["response"]["message"]["parts"]
            if part["kind"] == "tool_call"
        }
        left |= {
            arguments[e.step, e.data["result"]["call_id"]]
            for e in entries
            if e.kind == "tool_end" and e.data.get("not_rerun")
        }
    return left


def holding_a_run(store: PostgresStore) -> set[str]:
    """Hosts that hold a run's lease right now."""
    return {holder.host for holder in store.leases.holders().values() if holder.alive()}


def taken_over(store: PostgresStore, run_ids: list[str]) -> int:
    """How many times a worker went on with a run that another had begun (a kill before a run's first entry
    leaves nothing to resume: the next worker starts it afresh)."""
    return sum(e.kind == "resume" for run_id in run_ids for e in store.entries(run_id))


@pytest.mark.slow
def test_a_fleet_finishes_every_run_once_through_kills_and_a_server_restart(postgres: PostgresServer) -> None:
    rng = random.Random(SEED)
    url = fresh_postgres(postgres)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ledger (reference text NOT NULL, host text NOT NULL, token uuid NOT NULL)")
    store = PostgresStore(url)
    queue = Queue(store)
    run_ids = [f"run-{i:03}" for i in range(RUNS)]
    for run_id in run_ids:
        queue.submit(run_id, f"pay {run_id}")

    fleet = Fleet(
        lambda host: [sys.executable, str(WORKER), url, host, str(TTL)],
        WORKERS,
        stdout=subprocess.DEVNULL,
    )
    kills, restarted = 0, False
    deadline = time.monotonic() + 150
    try:
        while queue.unfinished():
            assert time.monotonic() < deadline, f"seed {SEED}: {queue.unfinished()} runs unfinished"
            time.sleep(rng.uniform(0.1, 0.4))
            working = holding_a_run(store) & {h for h, p in fleet.workers.items() if p.poll() is None}
            if kills < KILLS and working:  # a worker in the middle of a run
                fleet.workers[rng.choice(sorted(working))].send_signal(signal.SIGKILL)
                kills += 1
            if kills == KILLS // 2 and not restarted:
                postgres.restart()  # every session ends; workers and the bank reconnect
                restarted = True
            fleet.replace_dead()
        assert fleet.wait(30), "workers did not end once the queue was done"
    finally:
        fleet.stop()

    where = f"seed {SEED}"
    outcomes = queue.outcomes()
    assert kills >= KILLS and restarted, f"{where}: only {kills} kills before the queue was done"
    assert collections.Counter(outcomes.values()) == {"completed": RUNS}, f"{where}: {outcomes}"
    with psycopg.connect(url, autocommit=True) as conn:
        paid = [reference for (reference,) in conn.execute("SELECT reference FROM ledger")]
    twice = [reference for reference, n in collections.Counter(paid).items() if n > 1]
    assert not twice, f"{where}: transfers that reached the bank twice: {twice}"
    left = cut_off_and_left(store, run_ids)
    missing = {f"{run_id}-{leg}" for run_id in run_ids for leg in "abc"} - set(paid)
    assert missing <= left, f"{where}: missing and not reported as cut off: {sorted(missing - left)}"
    resumed = taken_over(store, run_ids)
    store.close()
    assert resumed >= KILLS // 2, f"{where}: runs were taken over from a killed worker only {resumed} times"
    print(
        f"{where}: {RUNS} runs completed by {fleet.started} workers, {kills} killed, runs taken over {resumed} times, "
        "the server restarted once; "
        f"{len(paid)} transfers each in the ledger once; cut off and not run again: {sorted(left)} "
        f"(of them missing from the ledger: {sorted(missing)})"
    )
