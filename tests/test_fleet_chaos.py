"""The fleet on Ray under every fault at once: the bigger run of test_fleet.py (slow; run it by hand or nightly).

200 runs (one in ten with a model that always fails) on a head and three worker nodes; ten nodes
SIGKILLed while they hold runs (the first inside a tool); one whole node frozen (SIGSTOP: its raylet and
its workers) past its runs' leases and past Ray's health check, then woken; the PostgreSQL server
restarted once; client connections terminated at random throughout; the driver, a process of its own,
SIGKILLed mid-batch and started again. Every run must end as it should, no transfer reach the ledger twice,
and what was left undone be exactly what ``runs`` and ``show`` report.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from conftest import fresh_postgres
from toolslip.durable.journal_pg import PostgresStore
from toolslip.fleet import Outcome
from toolslip.testing.postgres import PostgresServer

ray = pytest.importorskip("ray")
from ray._private import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from test_fleet import (  # noqa: E402
    POLICY,
    SEED,
    TTL,
    batch,
    check_batch,
    holding_nodes,
    killer,
    ray_cluster,
    run_batch,
)

RUNS, KILLS, DRIVER_KILLED_AFTER = 200, 10, 60


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    yield from ray_cluster()


class Faults:
    """The faults besides node kills, called by the killer after each look (in the main thread)."""

    def __init__(self, cluster: Cluster, url: str, postgres: PostgresServer, rng: random.Random) -> None:
        self.cluster, self.url, self.postgres, self.rng = cluster, url, postgres, rng
        self.store = PostgresStore(url)
        self.frozen: list[str] = []
        self.restarted = False
        self.dropped = 0

    def __call__(self, kills: list[str]) -> None:
        if len(kills) >= 3 and not self.frozen:
            self.freeze()
        if len(kills) >= 5 and not self.restarted:
            self.postgres.restart()  # every session ends; workers, the driver and the bank reconnect
            self.restarted = True
        if self.rng.random() < 0.3:
            self.drop_connections()

    def freeze(self) -> None:
        nodes = {n.node_id[:12]: n for n in self.cluster.worker_nodes}
        holding = sorted(holding_nodes(self.store) & set(nodes))
        if not holding:
            return
        node = nodes[self.rng.choice(holding)]
        raylet = psutil.Process(node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
        frozen = [raylet, *raylet.children(recursive=True)]
        for process in frozen:
            process.send_signal(signal.SIGSTOP)
        time.sleep(3 * TTL + 5)  # past its leases, and past Ray's health check: its runs go on elsewhere
        for process in frozen:
            try:
                process.send_signal(signal.SIGCONT)
            except psutil.NoSuchProcess:
                pass
        self.frozen.append(node.node_id[:12])
        self.cluster.remove_node(node, allow_graceful=False)  # Ray has declared it dead; its processes go
        self.cluster.add_node(num_cpus=1)

    def drop_connections(self) -> None:
        try:
            with psycopg.connect(self.url, autocommit=True) as conn:
                self.dropped += conn.execute(
                    """SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid FROM pg_stat_activity
                       WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY random() LIMIT 2) p"""
                ).fetchone()[0]
        except psycopg.OperationalError:  # the server is restarting
            pass


class KilledDriver:
    """The batch driven by ``_fleet_driver.py`` processes: the first SIGKILLed once it has reported
    ``after`` outcomes, the second started at once with the same runs; the second's outcomes are the batch's."""

    def __init__(self, address: str, after: int) -> None:
        self.address, self.after = address, after
        self.first: list[str] = []
        self.from_journal = 0

    def __call__(self, url: str, run_ids: list[str], record: Callable[[Outcome], None]) -> None:
        argv = [sys.executable, str(Path(__file__).with_name("_fleet_driver.py")), url, self.address]
        argv += [json.dumps(dataclasses.asdict(POLICY)), *run_ids]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as first:
            assert first.stdout is not None
            for line in first.stdout:
                if not line.startswith("{"):  # Ray's own lines
                    continue
                self.first.append(json.loads(line)["run_id"])
                if len(self.first) == self.after:
                    break
            first.kill()  # SIGKILL: Ray ends the driver's job, and the workers running its runs with it
        assert len(self.first) == self.after, f"the first driver ended after {len(self.first)} outcomes"
        with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) as second:
            assert second.stdout is not None
            for line in second.stdout:
                if not line.startswith("{"):
                    continue
                outcome = Outcome(**json.loads(line))
                self.from_journal += outcome.from_journal
                record(outcome)
        assert second.returncode == 0, f"the second driver exited with {second.returncode}"


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("TOOLSLIP_FLEET_CHAOS"),
    reason="the 2-minute chaos run is not part of the suite's budget: TOOLSLIP_FLEET_CHAOS=1 runs it",
)
def test_a_ray_fleet_finishes_every_run_once_through_every_fault(
    cluster: Cluster, postgres: PostgresServer, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED)
    url = fresh_postgres(postgres)
    run_ids = batch(RUNS)
    faults = Faults(cluster, url, postgres, rng)
    driver = KilledDriver(cluster.address, DRIVER_KILLED_AFTER)
    started = time.monotonic()
    outcomes, kills = run_batch(
        cluster, url, run_ids, lambda stop: killer(cluster, url, rng, stop, KILLS, faults), within=600, driver=driver
    )
    faults.store.close()
    where = (
        f"seed {SEED}, nodes killed {kills}, frozen {faults.frozen}, server restarted {faults.restarted}, "
        f"{faults.dropped} connections dropped, driver killed after {len(driver.first)} outcomes and started "
        f"again ({driver.from_journal} runs reported from the journal), {time.monotonic() - started:.0f} s"
    )
    assert len(kills) >= KILLS and faults.frozen and faults.restarted, f"{where}: the batch ended too soon"
    assert driver.from_journal >= len(driver.first), f"{where}: runs the first driver saw over were run again"
    print(check_batch(url, run_ids, outcomes, where, capsys))
