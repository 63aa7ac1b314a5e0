"""Client CPU per tool step and per run: toolslip against hand-written loops and the official SDK loops.

All implementations run the same K-step task against the same local fake server (a separate process,
``fake_server.py``), interleaved: every round runs each implementation in a fresh process, in a random
order. The figure that matters is client CPU time (``time.process_time``) because the machine is shared
and wall time mostly measures waiting for a core.

    CPU/step(K) = (median CPU of a K-step run - median CPU of a 0-step run) / K

Usage: ``python benchmarks/loop_overhead.py [--rounds 3] [--runs 10] [--impls a,b]``
Targets (issue 2): toolslip's CPU/step at K=20 <= 1.2x the plain aiohttp loop and >= 4x less than the
OpenAI SDK loop; ``import toolslip`` < 0.2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from statistics import median
from typing import Any

from _common import IMPLS, add_child_options, check, fake_server, run_child, spread

KS = (0, 5, 20)


async def measure(impl: str, base: str, runs: int, warmup: int) -> dict[str, Any]:
    run = await IMPLS[impl](base)
    cpu: dict[int, list[float]] = {k: [] for k in KS}
    wall: dict[int, list[float]] = {k: [] for k in KS}
    for rep in range(warmup + runs):
        for k in random.sample(KS, len(KS)):
            w0, c0 = time.perf_counter(), time.process_time()
            output = await run(k)
            c1, w1 = time.process_time(), time.perf_counter()
            check(output, k)
            if rep >= warmup:
                cpu[k].append((c1 - c0) * 1000)
                wall[k].append((w1 - w0) * 1000)
    return {
        "impl": impl,
        "cpu_ms": {k: median(v) for k, v in cpu.items()},
        "wall_ms": {k: median(v) for k, v in wall.items()},
    }


def import_time(repeats: int = 7) -> tuple[float, float]:
    """Median seconds for ``python -c "import toolslip"`` and for a bare interpreter, interleaved."""
    timings: dict[str, list[float]] = {"pass": [], "import toolslip": []}
    for _ in range(repeats):
        for code in random.sample(list(timings), 2):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            timings[code].append(time.perf_counter() - start)
    return median(timings["import toolslip"]), median(timings["pass"])


def per_step(cpu: dict[str, float], k: int) -> float:
    return (cpu[str(k)] - cpu["0"]) / k * 1000  # µs


def report(rounds: list[list[dict[str, Any]]], impls: list[str]) -> None:
    print(f"\nmedian over {len(rounds)} rounds [min-max]; CPU = client process time")
    header = f"{'impl':<27}{'CPU us/step K=5':>26}{'CPU us/step K=20':>26}"
    header += f"{'CPU ms/run K=0':>16}{'K=5':>9}{'K=20':>9}{'wall ms K=20':>14}"
    print(header)
    for impl in impls:
        rows = [r for round_ in rounds for r in round_ if r["impl"] == impl]
        s5 = [per_step(r["cpu_ms"], 5) for r in rows]
        s20 = [per_step(r["cpu_ms"], 20) for r in rows]
        runs = [median([r["cpu_ms"][str(k)] for r in rows]) for k in KS]
        wall = median([r["wall_ms"]["20"] for r in rows])
        print(f"{impl:<27}{spread(s5):>26}{spread(s20):>26}{runs[0]:>16.2f}{runs[1]:>9.2f}{runs[2]:>9.2f}{wall:>14.1f}")

    def ratios(a: str, b: str, k: int) -> list[float]:
        out = []
        for round_ in rounds:
            by = {r["impl"]: r for r in round_}
            if a in by and b in by:
                out.append(per_step(by[a]["cpu_ms"], k) / per_step(by[b]["cpu_ms"], k))
        return out

    print("\nratios of CPU per step, taken within each round (median [min-max]):")
    pairs = [
        ("toolslip_openai", "raw_aiohttp_json", "toolslip / plain aiohttp+json loop   (target <= 1.2 at K=20)"),
        ("toolslip_openai", "raw_aiohttp_orjson", "toolslip / plain aiohttp+orjson loop"),
        ("toolslip_openai", "raw_httpx", "toolslip / plain httpx+json loop"),
        ("toolslip_openai_sync_tool", "raw_aiohttp_json", "toolslip, sync tool in a thread / plain aiohttp+json"),
        ("sdk_openai", "toolslip_openai", "OpenAI SDK loop / toolslip           (target >= 4 at K=20)"),
        ("sdk_anthropic", "toolslip_anthropic", "Anthropic SDK loop / toolslip (anthropic transport)"),
        ("toolslip_anthropic", "raw_aiohttp_json", "toolslip anthropic / plain aiohttp+json (openai wire)"),
    ]
    for a, b, label in pairs:
        for k in (5, 20):
            values = ratios(a, b, k)
            if values:
                print(f"  {label:<62} K={k:<3} {spread(values, '{:.2f}')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10, help="measured runs per K in each child")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--impls", default=",".join(IMPLS))
    add_child_options(parser)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.base, args.runs, args.warmup))))
        return
    impls = args.impls.split(",")
    imported, bare = import_time()
    print(
        f"python -c 'import toolslip': {imported:.3f} s wall (bare interpreter {bare:.3f} s; "
        f"toolslip itself {imported - bare:.3f} s; target < 0.2 s)"
    )
    rounds: list[list[dict[str, Any]]] = []
    with fake_server() as base:
        for number in range(args.rounds):
            order = random.sample(impls, len(impls))
            rounds.append([run_child(__file__, impl, base, runs=args.runs, warmup=args.warmup) for impl in order])
            print(f"round {number + 1}/{args.rounds} done ({', '.join(order)})", flush=True)
    report(rounds, impls)


if __name__ == "__main__":
    main()
