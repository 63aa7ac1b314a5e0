"""200 concurrent 5-step runs against a fake server that takes 50 ms per answer.

Each implementation runs in a fresh process: one run first (imports, the first connection), then two
waves of concurrent runs. The first wave is *cold*: it opens the other connections and fills whatever the
implementation caches; the second is *warm*. Printed per implementation (median over rounds [min-max]):

* runs/s: runs / wall time of the warm wave; p50 / p99: wall time of one run inside it;
* CPU ms/run: client CPU of the warm wave / runs; runs/s per core = 1000 / CPU ms per run, a capacity
  bound that does not depend on how busy the shared machine was;
* KB/run cold and warm: (peak RSS during the wave - RSS just before it) / runs, sampled every 5 ms;
* KB kept: RSS after both waves and a garbage collection, minus RSS before the cold wave: what outlives
  the runs (pooled connections, caches). For toolslip the rows also say how many wire encodings its memos
  still hold then (they hold messages weakly, so a finished run's should all be gone).

Usage: ``python benchmarks/concurrency.py [--rounds 5] [--runs 200] [--steps 5] [--latency 0.05]``
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

from _common import IMPLS, add_child_options, check, fake_server, machine_load, run_child, spread

DEFAULT_IMPLS = (
    "toolslip_openai_inline,toolslip_openai_def,toolslip_anthropic_inline,hand_aiohttp_orjson_def,"
    "sdk_openai,sdk_anthropic"
)


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
    }


def memo_entries() -> int | None:
    """Wire encodings toolslip's memos hold (None when toolslip is not loaded in this process)."""
    import sys

    if "toolslip.formats._chat_messages" not in sys.modules:
        return None
    from toolslip.formats import anthropic, openai_chat
    from toolslip.formats._anthropic_blocks import _encoded as anthropic_memo
    from toolslip.formats._chat_messages import _encoded as chat_memo

    tools = openai_chat._tools.entries() + anthropic._tools.entries()
    return chat_memo.entries() + anthropic_memo.entries() + tools


async def child(impl: str, base: str, runs: int, steps: int) -> dict[str, Any]:
    run = await IMPLS[impl](base)
    await run(steps)  # imports and the first connection, outside the waves
    gc.collect()
    start = rss_kb()
    cold = await wave(run, runs, steps)
    warm = await wave(run, runs, steps)
    gc.collect()
    kept = rss_kb() - start
    return {"impl": impl, **warm, "kb_per_run_cold": cold["kb_per_run"], "kb_kept": kept, "memo": memo_entries()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
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
    print(f"before: {machine_load()}")
    rows: list[dict[str, Any]] = []
    with fake_server(latency=args.latency) as base:
        for number in range(args.rounds):
            for impl in random.sample(impls, len(impls)):
                rows.append(run_child(__file__, impl, base, runs=args.runs, steps=args.steps))
            print(f"round {number + 1}/{args.rounds} done", flush=True)
    print(f"after: {machine_load()}")
    ideal = (args.steps + 1) * args.latency * 1000
    print(
        f"\n{args.runs} concurrent runs of {args.steps} tool steps ({args.steps + 1} requests), server latency "
        f"{args.latency * 1000:.0f} ms (ideal run time {ideal:.0f} ms); median over {args.rounds} rounds [min-max]"
    )
    columns = ["runs_per_s", "p50_ms", "p99_ms", "cpu_ms_per_run"]
    memory = ["kb_per_run_cold", "kb_per_run", "kb_kept"]
    titles = [*columns, "runs/s per core", "KB/run cold", "KB/run warm", "KB kept", "memo entries"]
    print(f"{'impl':<26}" + "".join(f" {t:>22}" for t in titles))
    for impl in impls:
        mine = [r for r in rows if r["impl"] == impl]
        cells = [spread([r[column] for r in mine], "{:,.1f}") for column in columns]
        cells.append(spread([1000 / r["cpu_ms_per_run"] for r in mine]))
        cells += [spread([r[column] for r in mine], "{:,.1f}") for column in memory]
        memos = [r["memo"] for r in mine if r["memo"] is not None]
        cells.append(spread(memos) if memos else "-")
        print(f"{impl:<26}" + "".join(f" {c:>22}" for c in cells))


if __name__ == "__main__":
    main()
