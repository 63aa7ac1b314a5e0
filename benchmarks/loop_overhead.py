"""Client CPU per tool step and per run: toolslip against hand-written loops and the official SDK loops.

All implementations run the same K-step task against the same local fake server (a separate process,
``fake_server.py``), interleaved: every round runs each implementation in a fresh process, in a random
order, and inside a process the K values are interleaved too. The figure that matters is client CPU time
(``time.process_time``, all threads of the process) because the machine is shared and wall time mostly
measures waiting for a core.

    CPU/step(K) = (median CPU of a K-step run - median CPU of a 0-step run) / K

Ratios are taken within a round (both rows measured minutes apart at most), then the median and the
spread over rounds are printed. See ``_common.py`` for what each row is and why it is a fair pair.

``--instructions`` counts instructions instead, under valgrind's callgrind (slow, but the same on a busy
machine as on an idle one): the per-step and per-run instruction counts of the rows named by ``--impls``.
The three callgrind children share one string-hash seed (``--hash-seed``): the per-step figure is a
difference between whole processes, imports included, and under a random seed each process's dict probes
cost a different amount (about half a million instructions a process apart, tens of thousands per step
once divided), enough to fake a regression. Compare trees at more than one seed.

Usage: ``python benchmarks/loop_overhead.py [--rounds 5] [--runs 20] [--ks 0,20,80] [--impls a,b]``
Targets (issue 20): ``toolslip_openai_inline`` (a ``def`` tool declared ``isolate="none"``) <= 1.2x
``hand_aiohttp_orjson_def`` per step at K=20 (and reported at K=80); ``toolslip_openai_def`` is the same
tool run in a worker thread, the default. The SDK loops are the reference for "a fraction of their CPU".
Issue 24: ``toolslip_gemini_inline`` and ``toolslip_converse_inline`` (a Bedrock API key) <= 1.2x
``toolslip_openai_inline`` per step; ``toolslip_converse_sigv4_inline`` shows what botocore's signing adds.
Measured 2026-12-02 (load average 2.4-2.8, a CI run installing beside it): ``--rounds 5 --runs 10 --ks 0,20
--impls toolslip_openai_inline,toolslip_gemini_inline,toolslip_converse_inline,toolslip_converse_sigv4_inline``:
Gemini / Chat 1.15 [0.61-1.24], Converse / Chat 1.01 [0.49-1.58], SigV4 / bearer key 1.78 [1.01-1.93] per
step at K=20 (526, 601, 532 and 854 us/step).
Issue 25: ``toolslip_openai_typed`` (the same run with ``output_type``, native structured output) <= 1.1x
``toolslip_openai_inline`` per step. Measured 2026-12-02 (load average 1.0 on 2 cores):
``--impls toolslip_openai_inline,toolslip_openai_typed --rounds 15 --runs 20 --ks 0,20``: CPU per step
ratio 0.93 [0.68-2.06] within rounds; ``--instructions 20``: 706,561 / 685,259 instructions per step =
1.03x, and 634k / 435k per 0-step run (the answer validated once per run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from statistics import median
from typing import Any

from _common import (
    IMPLS,
    SYNC_IMPLS,
    add_child_options,
    check,
    fake_server,
    machine_load,
    run_child,
    spread,
    sync_runner,
)

DEFAULT_IMPLS = [
    "toolslip_openai_inline",
    "toolslip_openai_typed",
    "toolslip_openai_def",
    "toolslip_openai_async",
    "toolslip_anthropic_inline",
    "toolslip_gemini_inline",
    "toolslip_converse_inline",
    "toolslip_converse_sigv4_inline",
    "toolslip_agent_sync",
    "toolslip_oneliner",
    "hand_aiohttp_orjson_def",
    "hand_aiohttp_orjson_async",
    "hand_aiohttp_json_def",
    "hand_httpx_orjson_def",
    "sdk_openai",
    "sdk_anthropic",
]
PAIRS = [  # (row, baseline, what it says)
    ("toolslip_openai_inline", "hand_aiohttp_orjson_def", "toolslip, def tool isolate='none' / hand loop (<= 1.2)"),
    ("toolslip_openai_def", "hand_aiohttp_orjson_def", "toolslip, def tool in a worker thread / hand loop"),
    ("toolslip_openai_typed", "toolslip_openai_inline", "toolslip with output_type (native) / plain (<= 1.1)"),
    ("toolslip_openai_async", "hand_aiohttp_orjson_async", "toolslip / hand loop, async def tool"),
    ("toolslip_anthropic_inline", "hand_aiohttp_orjson_def", "toolslip on the Anthropic wire / the same hand loop"),
    (
        "toolslip_gemini_inline",
        "toolslip_openai_inline",
        "toolslip on the Gemini wire / on the OpenAI Chat wire (<= 1.2)",
    ),
    ("toolslip_converse_inline", "toolslip_openai_inline", "toolslip on the Converse wire / on OpenAI Chat (<= 1.2)"),
    ("toolslip_converse_sigv4_inline", "toolslip_converse_inline", "Converse signed with SigV4 / with a bearer key"),
    ("toolslip_openai_inline", "hand_aiohttp_json_def", "toolslip / hand loop on aiohttp + stdlib json"),
    ("toolslip_openai_inline", "hand_httpx_orjson_def", "toolslip / hand loop on httpx + orjson"),
    ("sdk_openai", "toolslip_openai_inline", "OpenAI SDK loop (plain-dict history) / toolslip"),
    ("sdk_openai_objects", "toolslip_openai_inline", "OpenAI SDK loop (SDK objects in history) / toolslip"),
    ("sdk_anthropic", "toolslip_anthropic_inline", "Anthropic SDK loop (plain-dict history) / toolslip"),
    ("toolslip_oneliner", "toolslip_openai_def", "toolslip.run() one-liner / a reused Agent (arun)"),
    ("toolslip_agent_sync", "toolslip_openai_def", "a reused Agent's sync run() / its arun()"),
]


def measure(impl: str, base: str, ks: list[int], runs: int, warmup: int) -> dict[str, Any]:
    run = sync_runner(impl, base)
    cpu: dict[int, list[float]] = {k: [] for k in ks}
    wall: dict[int, list[float]] = {k: [] for k in ks}
    for rep in range(warmup + runs):
        for k in random.sample(ks, len(ks)):
            w0, c0 = time.perf_counter(), time.process_time()
            output = run(k)
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


def report(rounds: list[list[dict[str, Any]]], impls: list[str], ks: list[int]) -> None:
    steps = [k for k in ks if k]
    print(f"\nmedian over {len(rounds)} rounds [min-max]; CPU = client process time (all threads)")
    header = f"{'impl':<27}" + "".join(f"{f'CPU us/step K={k}':>24}" for k in steps)
    header += f"{'CPU ms/run K=0':>22}" + "".join(f"{f'K={k}':>9}" for k in steps) + f"{f'wall ms K={steps[-1]}':>14}"
    print(header)
    for impl in impls:
        rows = [r for round_ in rounds for r in round_ if r["impl"] == impl]
        cells = [spread([per_step(r["cpu_ms"], k) for r in rows]) for k in steps]
        fixed = spread([r["cpu_ms"]["0"] for r in rows], "{:.2f}")
        per_run = [median([r["cpu_ms"][str(k)] for r in rows]) for k in steps]
        wall = median([r["wall_ms"][str(steps[-1])] for r in rows])
        line = f"{impl:<27}" + "".join(f"{c:>24}" for c in cells) + f"{fixed:>22}"
        print(line + "".join(f"{v:>9.2f}" for v in per_run) + f"{wall:>14.1f}")

    def within(a: str, b: str, value: Any) -> list[float]:
        out = []
        for round_ in rounds:
            by = {r["impl"]: r for r in round_}
            if a in by and b in by:
                out.append(value(by[a], by[b]))
        return out

    print("\nratios of CPU per step, taken within each round (median [min-max]); own = difference in us/step")
    for a, b, label in PAIRS:
        for k in steps:
            ratio = within(a, b, lambda x, y: per_step(x["cpu_ms"], k) / per_step(y["cpu_ms"], k))  # noqa: B023
            own = within(a, b, lambda x, y: per_step(x["cpu_ms"], k) - per_step(y["cpu_ms"], k))  # noqa: B023
            if ratio:
                print(f"  {label:<66} K={k:<3} {spread(ratio, '{:.2f}'):>18}   own {spread(own):>16}")
    fixed = within("toolslip_oneliner", "toolslip_openai_def", lambda x, y: x["cpu_ms"]["0"] / y["cpu_ms"]["0"])
    if fixed:
        label = "toolslip.run() one-liner / reused Agent, CPU of a 0-step run"
        print(f"  {label:<66}       {spread(fixed, '{:.2f}'):>18}")


# --- instruction counts ---------------------------------------------------------------------------------


def count_child(impl: str, base: str, k: int, at_zero: int, at_k: int) -> None:
    """Under callgrind: set up, warm up, then ``at_zero`` runs of 0 steps and ``at_k`` runs of ``k`` steps."""
    run = sync_runner(impl, base)
    for _ in range(2):
        check(run(0), 0)
        check(run(k), k)
    for _ in range(at_zero):
        check(run(0), 0)
    for _ in range(at_k):
        check(run(k), k)


def instructions(impl: str, base: str, k: int, at_zero: int, at_k: int, seed: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__]
        command += ["--child", impl, "--base", base, "--count", f"{k},{at_zero},{at_k}"]
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        subprocess.run(command, check=True, capture_output=True, env=env)
        with open(out) as profile:
            found = re.search(r"^(?:summary|totals): (\d+)", profile.read(), re.M)
        assert found is not None, "callgrind wrote no total"
        return int(found[1])


def count_instructions(impls: list[str], k: int, seed: int) -> None:
    """Instructions per run at 0 and ``k`` steps, from three callgrind runs: (0, 1), (0, 3) and (3, 1) runs."""
    print(f"\ninstructions under callgrind (deterministic for one hash seed: {seed}), K={k}")
    print(f"{'impl':<27}{'per step':>14}{'per run K=0':>14}{f'per run K={k}':>16}")
    with fake_server() as base:
        for impl in impls:
            one, three, zeros = (instructions(impl, base, k, z, n, seed) for z, n in ((0, 1), (0, 3), (3, 1)))
            per_k, per_zero = (three - one) / 2, (zeros - one) / 3
            print(f"{impl:<27}{(per_k - per_zero) / k:>14,.0f}{per_zero:>14,.0f}{per_k:>16,.0f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20, help="measured runs per K in each child")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--ks", default="0,20,80", help="step counts; 0 must be among them")
    parser.add_argument("--impls", default=",".join(DEFAULT_IMPLS), help=f"from {', '.join([*IMPLS, *SYNC_IMPLS])}")
    parser.add_argument("--instructions", type=int, metavar="K", help="count instructions at K steps instead")
    parser.add_argument("--hash-seed", type=int, default=0, help="PYTHONHASHSEED of the callgrind children")
    parser.add_argument("--count", help=argparse.SUPPRESS)
    add_child_options(parser)
    args = parser.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    if args.child and args.count:
        count_child(args.child, args.base, *(int(n) for n in args.count.split(",")))
        return
    if args.child:
        print(json.dumps(measure(args.child, args.base, ks, args.runs, args.warmup)))
        return
    impls = args.impls.split(",")
    if args.instructions:
        count_instructions(impls, args.instructions, args.hash_seed)
        return
    if 0 not in ks:
        parser.error("--ks must include 0 (the per-step figure is a slope from 0 steps)")
    print(f"before: {machine_load()}")
    imported, bare = import_time()
    print(f"python -c 'import toolslip': {imported:.3f} s wall (bare interpreter {bare:.3f} s)")
    rounds: list[list[dict[str, Any]]] = []
    with fake_server() as base:
        for number in range(args.rounds):
            order = random.sample(impls, len(impls))
            options = {"runs": args.runs, "warmup": args.warmup, "ks": args.ks}
            rounds.append([run_child(__file__, impl, base, **options) for impl in order])
            print(f"round {number + 1}/{args.rounds} done", flush=True)
    print(f"after: {machine_load()}")
    report(rounds, impls, ks)


if __name__ == "__main__":
    main()
