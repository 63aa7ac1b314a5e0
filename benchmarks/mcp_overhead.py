"""What an MCP tool call costs compared with calling the same tool locally.

The tool is the expenses example's ``calc("1 + 1")``, run three ways through the loop's own
``execute_call`` (validation, running, result building): locally in this process, through
``toolslip mcp-serve`` over stdio, and over streamable HTTP on 127.0.0.1. Calls are interleaved
(local, stdio, http, local, ...) so the shared, noisy cores slow all of them alike; medians are quoted.
HTTP is measured twice: on the 2026-07-28 protocol the SDK negotiates by default, and forced to the
2025-11-25 handshake era (``protocol="legacy"``). Also printed: the one-off cost of starting a server and
listing its tools.

    python benchmarks/mcp_overhead.py [ROUNDS]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

import toolslip.mcp as tm
from toolslip.cli.files import load_tools_file
from toolslip.loop import execute_call
from toolslip.testing import call
from toolslip.tools import Toolbox

EXPENSES = str(Path(__file__).resolve().parent.parent / "examples" / "expenses.py")
SERVE = [sys.executable, "-m", "toolslip.cli", "mcp-serve", EXPENSES]


async def timed_call(box: Toolbox) -> float:
    slip = call("calc", expr="1 + 1")
    started = time.perf_counter()
    result = await execute_call(slip, box.get("calc"), box)
    elapsed = time.perf_counter() - started
    assert result.content == "2" and not result.is_error, result
    return elapsed


async def start_http_server() -> tuple[asyncio.subprocess.Process, str]:
    server = await asyncio.create_subprocess_exec(*SERVE, "--http", "--port", "0", stdout=asyncio.subprocess.PIPE)
    assert server.stdout is not None
    line = (await server.stdout.readline()).decode()
    return server, line.split(" at ")[1].strip()


async def startup_seconds(samples: int = 3) -> list[float]:
    times = []
    for _ in range(samples):
        started = time.perf_counter()
        async with tm.stdio(*SERVE) as source:
            assert source.names == ["calc", "fx"]
            times.append(time.perf_counter() - started)
    return times


async def main(rounds: int) -> None:
    local = load_tools_file(EXPENSES)
    server, url = await start_http_server()
    samples: dict[str, list[float]] = {"local": [], "mcp stdio": [], "mcp http": [], "http 2025": []}
    try:
        async with (
            tm.stdio(*SERVE) as over_stdio,
            tm.http(url) as over_http,
            tm.http(url, protocol="legacy") as over_http_2025,
        ):
            boxes = {"local": local, "mcp stdio": over_stdio, "mcp http": over_http, "http 2025": over_http_2025}
            for _ in range(20):  # warm up: imports, thread pool, HTTP connection
                for box in boxes.values():
                    await timed_call(box)
            for _ in range(rounds):
                for name, box in boxes.items():
                    samples[name].append(await timed_call(box))
        startup = await startup_seconds()
    finally:
        server.terminate()
        await server.wait()

    base = statistics.median(samples["local"])
    print(f"calc('1 + 1') through execute_call, {rounds} interleaved rounds (µs)")
    print(f"{'path':<10} {'median':>9} {'p10':>9} {'p90':>9} {'overhead':>9} {'ratio':>7}")
    for name, values in samples.items():
        q = statistics.quantiles(values, n=10)
        median = statistics.median(values)
        print(
            f"{name:<10} {median * 1e6:>9.0f} {q[0] * 1e6:>9.0f} {q[-1] * 1e6:>9.0f} "
            f"{(median - base) * 1e6:>9.0f} {median / base:>6.1f}x"
        )
    print(
        f"start mcp-serve over stdio + list tools: median {statistics.median(startup) * 1e3:.0f} ms "
        f"of {len(startup)} ({', '.join(f'{t * 1e3:.0f}' for t in startup)} ms)"
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
