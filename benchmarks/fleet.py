"""The fleet on Ray against the process fleet it replaced: runs/s and overhead per run, the same workload.

Each batch is RUNS runs of three side-effecting calls (a scripted model, a tool that returns at once) over
one PostgreSQL journal (a server this benchmark starts: Debian's binaries, a Unix socket). The two fleets
take turns, ROUNDS batches each, so that noise from the shared machine hits both:

* ``ray``: ``toolslip.fleet.Fleet`` on a local Ray of WORKERS CPUs (started once, before the first batch;
  its start is printed apart), concurrency WORKERS;
* ``process``: the supervisor and queue table of ``src/toolslip/fleet.py`` as of commit 6a3e082 (read from
  git history, so it stays measurable after its removal): WORKERS worker processes started per batch,
  polling the queue table, exiting when it is empty.

Overhead per run is the fleet's time per run and worker slot (wall x WORKERS / RUNS) minus the same run
executed in this process with the same journal and no fleet (its median, measured in each round too).

The process fleet's batch includes starting its worker processes (its design: a supervisor starts them)
and their last look at the empty queue (they sleep ``ttl / 4`` between looks); ``--ttl 1.5`` (the old
test's) makes that wait small.

    python benchmarks/fleet.py [--runs 40] [--rounds 3] [--workers 2] [--ttl 30]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from toolslip import Agent, Dedup, Toolbox, tool
from toolslip.durable.journal import Journal
from toolslip.durable.journal_pg import PostgresStore
from toolslip.fleet import Fleet, Policy
from toolslip.testing import FunctionModel, Turn, call
from toolslip.testing.postgres import PostgresServer

ROOT = Path(__file__).resolve().parent.parent
THEN = "6a3e082"  # the last commit with the process fleet


@tool(effects="side_effect")
def transfer(reference: str) -> str:
    """Move money (here: nothing, so that the fleet's own cost shows)."""
    return f"sent {reference}"


def script(request: Any) -> Turn:
    run = request.messages[0].text.split()[-1]
    turns: list[Turn] = [call("transfer", reference=f"{run}-{leg}") for leg in "abc"]
    return [*turns, "all paid"][sum(m.role == "assistant" for m in request.messages)]


def make_agent(journal: Journal) -> Agent:
    return Agent(model=FunctionModel(script), tools=Toolbox([transfer]), max_steps=6, hooks=journal.wrap(Dedup()))


def process_fleet() -> ModuleType:
    """``toolslip.fleet`` as it was at THEN, imported under another name beside today's package."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{THEN}:src/toolslip/fleet.py"], capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "fleet_then.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("toolslip._fleet_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def old_worker(url: str, host: str, ttl: str) -> None:
    """One worker of the process fleet (this file run as ``--old-worker URL HOST TTL``)."""
    process_fleet().work(url, make_agent, host=host, ttl=float(ttl), rerun_interrupted=lambda r: False, log=print)


def run_process_fleet(then: ModuleType, url: str, run_ids: list[str], workers: int, ttl: float) -> float:
    store = PostgresStore(url)
    queue = then.Queue(store)
    started = time.perf_counter()
    for run_id in run_ids:
        queue.submit(run_id, f"pay {run_id}")
    fleet = then.Fleet(
        lambda host: [sys.executable, __file__, "--old-worker", url, host, str(ttl)], workers, stdout=subprocess.DEVNULL
    )
    try:
        assert fleet.wait(600), "the process fleet did not finish"
    finally:
        fleet.stop()
    wall = time.perf_counter() - started
    assert set(queue.outcomes().values()) == {"completed"}
    store.close()
    return wall


def run_ray_fleet(fleet: Fleet, run_ids: list[str]) -> float:
    started = time.perf_counter()
    outcomes = [o.outcome for o in fleet.run((run_id, f"pay {run_id}") for run_id in run_ids)]
    wall = time.perf_counter() - started
    assert set(outcomes) == {"completed"}, outcomes
    return wall


def in_process(url: str, run_ids: list[str]) -> float:
    """Median seconds of one run with the same journal, no fleet."""
    journal = Journal(url)
    agent = make_agent(journal)
    times = []
    for run_id in run_ids:
        started = time.perf_counter()
        assert asyncio.run(agent.arun(f"pay {run_id}", run_id=run_id)).stop_reason == "completed"
        times.append(time.perf_counter() - started)
    journal.store.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--ttl",
        type=float,
        default=30.0,
        help="lease ttl of both fleets (the process fleet's "
        "workers look at an empty queue every ttl/4 s before they exit)",
    )
    parser.add_argument("--old-worker", nargs=3, metavar=("URL", "HOST", "TTL"))
    args = parser.parse_args()
    if args.old_worker:
        old_worker(*args.old_worker)
        return
    then = process_fleet()
    with PostgresServer() as server:
        url = server.url()
        started = time.perf_counter()
        ray_fleet = Fleet(url, make_agent, concurrency=args.workers, policy=Policy(ttl=args.ttl))
        import ray

        ray.shutdown()  # Fleet started a Ray without a CPU count: start it again with WORKERS CPUs
        ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
        ray_start = time.perf_counter() - started
        walls: dict[str, list[float]] = {"ray": [], "process": []}
        alone: list[float] = []
        for round_ in range(args.rounds):
            ids = [f"r{round_}-{i:04}" for i in range(args.runs)]
            walls["ray"].append(run_ray_fleet(ray_fleet, [f"ray-{i}" for i in ids]))
            walls["process"].append(run_process_fleet(then, url, [f"proc-{i}" for i in ids], args.workers, args.ttl))
            alone.append(in_process(url, [f"alone-{i}" for i in ids[:10]]))
        ray_fleet.close()
        ray.shutdown()
    base = statistics.median(alone)
    print(
        f"{args.runs} runs x 3 side-effecting calls, {args.workers} workers, ttl {args.ttl:g} s, {args.rounds} rounds"
    )
    print(f"one run in this process, same journal, no fleet: {base * 1000:.1f} ms (median)")
    print(f"Ray started (once, not in the figures below): {ray_start:.1f} s")
    for name, times in walls.items():
        wall = statistics.median(times)
        overhead = wall * args.workers / args.runs - base
        print(
            f"{name:8} {args.runs / wall:6.1f} runs/s   batch {wall:5.2f} s (median of {[round(t, 2) for t in times]})"
            f"   overhead per run and worker {overhead * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    main()
