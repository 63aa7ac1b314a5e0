"""Trials per second of ``toolslip eval`` with a zero-latency scripted model: local asyncio vs the fleet on Ray.

    python benchmarks/eval_throughput.py [--rounds 3] [--trials 40]

Each trial is a full agent run (fresh tools, 2-4 model turns, real tool calls, the check) of the example
suite, played by the ``reference`` model, so the figure is the harness's own overhead. On Ray each trial
is a run of the fleet (``toolslip eval --ray``) against a temporary SQLite journal: its lease, a start and a
finish entry per trial are part of the cost. Local and Ray rounds are interleaved (the machine is shared and
noisy) and medians are printed. Ray needs ``pip install 'toolslip[ray]'``; it runs on a local cluster of
``--ray-cpus`` workers.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path

from toolslip.evals import ReferenceModel, evaluate, load_suite
from toolslip.evals.runner import Executor

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")


def rate(k: int, concurrency: int, executor: Executor | None = None) -> float:
    suite = load_suite(EXAMPLE)
    started = time.perf_counter()
    records = asyncio.run(evaluate(suite, [ReferenceModel()], k=k, concurrency=concurrency, executor=executor))
    seconds = time.perf_counter() - started
    assert all(r.success for r in records), "the reference model must pass every trial"
    return len(records) / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=40, help="trials per task per round (5 tasks)")
    parser.add_argument("--ray-cpus", type=int, default=2)
    args = parser.parse_args()

    import ray

    from toolslip.evals.on_fleet import fleet_executor

    started = time.perf_counter()
    ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False)
    print(f"ray.init (local cluster, {args.ray_cpus} CPUs): {time.perf_counter() - started:.2f} s")
    results: dict[str, list[float]] = {"local c=1": [], "local c=8": [], "ray c=16": []}
    with fleet_executor(load_suite(EXAMPLE), None, concurrency=16) as on_ray:  # a temporary SQLite journal
        rate(2, 16, on_ray)  # warm-up: workers start and import toolslip once
        rate(2, 8)
        for _ in range(args.rounds):
            results["local c=1"].append(rate(args.trials, 1))
            results["local c=8"].append(rate(args.trials, 8))
            results["ray c=16"].append(rate(args.trials, 16, on_ray))
    ray.shutdown()
    trials = 5 * args.trials
    for name, values in results.items():
        shown = ", ".join(f"{v:.0f}" for v in values)
        print(f"{name:10} {trials} trials/round: median {statistics.median(values):7.1f} trials/s  ({shown})")
    local = statistics.median(results["local c=8"])
    print(f"ratio local c=8 / ray: {local / statistics.median(results['ray c=16']):.1f}x")


if __name__ == "__main__":
    main()
