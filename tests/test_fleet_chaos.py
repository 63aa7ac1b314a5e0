"""The fleet on Ray under every fault at once: the bigger run of test_fleet.py (slow; run it by hand or nightly).

200 runs (one in ten with a model that always fails) on a head and three worker nodes; ten nodes
SIGKILLed while they hold runs (the first inside a tool); one whole node frozen (SIGSTOP: its raylet and
its workers) past its runs' leases and past Ray's health check, then woken; the PostgreSQL server
restarted once; client connections terminated at random throughout. Every run must end as it should, no
transfer reach the ledger twice, and what was left undone be exactly what ``runs`` and ``show`` report.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Iterator

import psutil
import psycopg
import pytest

from conftest import fresh_postgres
from toolslip.durable.journal_pg import PostgresStore
from toolslip.testing.postgres import PostgresServer

ray = pytest.importorskip("ray")
from ray._private import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from test_fleet import SEED, TTL, batch, check_batch, holding_nodes, killer, ray_cluster, run_batch  # noqa: E402

RUNS, KILLS = 200, 10


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
    started = time.monotonic()
    outcomes, kills = run_batch(
        cluster, url, run_ids, lambda stop: killer(cluster, url, rng, stop, KILLS, faults), within=600
    )
    faults.store.close()
    where = (
        f"seed {SEED}, nodes killed {kills}, frozen {faults.frozen}, server restarted {faults.restarted}, "
        f"{faults.dropped} connections dropped, {time.monotonic() - started:.0f} s"
    )
    assert len(kills) >= KILLS and faults.frozen and faults.restarted, f"{where}: the batch ended too soon"
    print(check_batch(url, run_ids, outcomes, where, capsys))
