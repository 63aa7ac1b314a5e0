"""200 concurrent 5-step runs against a fake server that takes 50 ms per answer.

Each implementation runs in a fresh process: one warm-up wave (it opens the connections), then the
measured wave. Printed per implementation (median over rounds [min-max]):

* runs/s: 200 / wall time of the wave; p50 / p99: wall time of one run inside the wave;
* CPU ms/run: client CPU of the wave / 200; runs/s per core = 1000 / CPU ms per run, a capacity bound
  that does not depend on how busy the shared machine was (issue 2 target: >= 150);
* KB/run: (peak RSS during the wave - RSS just before it) / 200, sampled every 5 ms (target < 80 KB).
  ``KB/run cold`` counts from before the first wave, so it includes opening 200 connections.

Usage: ``python benchmarks/concurrency.py [--rounds 3] [--runs 200] [--steps 5] [--latency 0.05]``
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import threading
import time
from typing import Any

from _common import IMPLS, add_child_options, check, fake_server, run_child, spread

DEFAULT_IMPLS = "toolslip_openai,toolslip_anthropic,raw_aiohttp_json,sdk_openai,sdk_anthropic"


def rss_kb() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4  # resident pages of 4 KiB


class PeakRss:
    """Samples RSS every 5 ms in a thread until stopped; ``peak`` is the largest value seen."""

    def __init__(self) -> None:
        self.peak = rss_kb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.peak = max(self.peak, rss_kb())

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return max(self.peak, rss_kb())


async def wave(run: Any, runs: int, steps: int) -> dict[str, Any]:
    async def one() -> float:
        start = time.perf_counter()
        check(await run(steps), steps)
        return (time.perf_counter() - start) * 1000

    gc.collect()
    before = rss_kb()
    sampler = PeakRss()
    c0, w0 = time.process_time(), time.perf_counter()
    latencies = sorted(await asyncio.gather(*(one() for _ in range(runs))))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    peak = sampler.stop()
    return {
        "runs_per_s": runs / wall,
        "p50_ms": latencies[len(latencies) // 2],
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "cpu_ms_per_run": cpu * 1000 / runs,
        "kb_per_run": (peak - before) / runs,
        "rss_before_kb": before,
    }


async def child(impl: str, base: str, runs: int, steps: int) -> dict[str, Any]:
    run = await IMPLS[impl](base)
    await run(steps)  # imports and first connection outside the waves
    gc.collect()
    start_rss = rss_kb()
    warm = await wave(run, runs, steps)
    measured = await wave(run, runs, steps)
    measured["kb_per_run_cold"] = (max(warm["rss_before_kb"] + warm["kb_per_run"] * runs, start_rss) - start_rss) / runs
    return {"impl": impl, **measured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--impls", default=DEFAULT_IMPLS)
    add_child_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(args.child, args.base, args.runs, args.steps))))
        return
    impls = args.impls.split(",")
    rows: list[dict[str, Any]] = []
    with fake_server(latency=args.latency) as base:
        for number in range(args.rounds):
            for impl in random.sample(impls, len(impls)):
                rows.append(run_child(__file__, impl, base, runs=args.runs, steps=args.steps))
            print(f"round {number + 1}/{args.rounds} done", flush=True)
    ideal = (args.steps + 1) * args.latency * 1000
    print(
        f"\n{args.runs} concurrent runs of {args.steps} tool steps ({args.steps + 1} requests), server latency "
        f"{args.latency * 1000:.0f} ms (ideal run time {ideal:.0f} ms); median over {args.rounds} rounds [min-max]"
    )
    columns = ["runs_per_s", "p50_ms", "p99_ms", "cpu_ms_per_run", "kb_per_run", "kb_per_run_cold"]
    print(f"{'impl':<20}" + "".join(f" {c:>25}" for c in [*columns[:4], "runs/s per core", *columns[4:]]))
    for impl in impls:
        mine = [r for r in rows if r["impl"] == impl]
        cells = [spread([r[column] for r in mine], "{:,.1f}") for column in columns[:4]]
        cells.append(spread([1000 / r["cpu_ms_per_run"] for r in mine]))
        cells += [spread([r[column] for r in mine], "{:,.1f}") for column in columns[4:]]
        print(f"{impl:<20}" + "".join(f" {c:>25}" for c in cells))
    print("targets: runs/s per core >= 150, KB/run < 80 (toolslip rows)")


if __name__ == "__main__":
    main()
