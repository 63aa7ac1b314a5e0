"""How fast the console's runs page answers with 10,000 runs in the journal, on SQLite and PostgreSQL.

Writes N runs straight into each store's entries table (one transaction: a start, a model step that asks
for a call, the call's start and end, a final model step and a finish; every tenth run paused with a
held call, every twentieth failed), starts the console on loopback (``toolslip.console.serve``, the same
server ``toolslip console`` runs) and times, from an HTTP client on the same machine: the first read of
the whole journal (the index the pages filter), then the median and worst of ``--repeat`` requests for
the runs page, a search, a state filter, the JSON API's list and the inbox. The target (issue 40) is the
runs page under 300 ms. PostgreSQL is a server this benchmark starts (Debian's binaries, a Unix socket).

    python benchmarks/console.py [--runs 10000] [--repeat 20] [--store sqlite|postgres|both]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from toolslip.console import Console, serve
from toolslip.durable.stores import LeasedStore, open_store
from toolslip.testing.postgres import PostgresServer


def _entries(n: int, now: float) -> Iterator[tuple[str, float, str, int, str, bytes]]:
    """The rows of ``n`` runs: (run_id, at, kind, step, key, data)."""
    for i in range(n):
        run, at = f"run-{i:05}", now - (n - i) * 2.0
        call = {"kind": "tool_call", "id": "call_1", "name": "pay", "arguments": {"to": f"user{i}", "amount": i}}
        usage = {"input_tokens": 120 + i % 50, "output_tokens": 30}
        first = {"role": "assistant", "parts": [call]}
        user = {"role": "user", "parts": [{"kind": "text", "text": f"pay user{i} {i} EUR for invoice {i * 7}"}]}
        yield run, at, "start", 1, "", orjson.dumps({"messages": [user], "model": "openai:gpt-4o-mini", "meta": {}})
        response = {"message": first, "stop_reason": "tool_use", "usage": usage, "model": "gpt-4o-mini", "id": ""}
        yield run, at + 0.1, "model", 1, "", orjson.dumps({"response": response})
        if i % 10 == 0:  # paused on the payment
            pending = [{"tool": "pay", "arguments": call["arguments"], "call_id": "call_1", "run_id": run}]
            finish = {"stop_reason": "paused", "output": "", "usage": usage, "cost": 0.0001, "pending": pending}
            yield run, at + 0.2, "finish", 1, "", orjson.dumps(finish)
            continue
        yield run, at + 0.2, "tool_start", 1, "k", orjson.dumps({"call": {"id": "call_1", "name": "pay"}})
        result = {"kind": "tool_result", "call_id": "call_1", "content": f"paid {i}", "name": "pay"}
        yield run, at + 0.3, "tool_end", 1, "k", orjson.dumps({"result": result, "executed": True})
        if i % 20 == 1:
            yield run, at + 0.4, "abort", 2, "", orjson.dumps({"status": "failed", "error": "APIError: 503"})
            continue
        answer = {"role": "assistant", "parts": [{"kind": "text", "text": f"Paid user{i}."}]}
        response = {"message": answer, "stop_reason": "end_turn", "usage": usage, "model": "gpt-4o-mini", "id": ""}
        yield run, at + 0.5, "model", 2, "", orjson.dumps({"response": response})
        finish = {"stop_reason": "completed", "output": f"Paid user{i}.", "usage": usage, "cost": 0.0002}
        yield run, at + 0.6, "finish", 2, "", orjson.dumps(finish)


def fill(store: LeasedStore, n: int) -> float:
    """Write ``n`` runs in one transaction; seconds taken."""
    started, rows = time.perf_counter(), list(_entries(n, time.time()))
    pool = getattr(store, "pool", None)
    if pool is not None:
        store.leases.holders()  # creates the schema
        with pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO toolslip.entries (run_id, at, kind, step, key, data) VALUES (%s, %s, %s, %s, %s, %s)",
                rows,
            )
    else:
        db = store._db  # type: ignore[attr-defined]  # the benchmark writes in bulk, past the one-entry appends
        db.execute("BEGIN")
        db.executemany("INSERT INTO entries (run_id, at, kind, step, key, data) VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.execute("COMMIT")
    return time.perf_counter() - started


async def measure(location: str, n: int, repeat: int) -> dict[str, Any]:
    store = open_store(location)
    filled = fill(store, n)
    store.close()
    console = Console(store=open_store(location), token="bench")
    started = time.perf_counter()
    async with serve(console) as url, aiohttp.ClientSession(headers={"Authorization": "Bearer bench"}) as s:
        indexed = time.perf_counter() - started  # the server answers once the index holds the whole journal
        assert len(console.index.rows) == n, len(console.index.rows)
        out: dict[str, Any] = {"runs": n, "write (s)": filled, "first read, server up (s)": indexed}
        for name, path in (
            ("runs page", "/runs"),
            ("runs page, search", "/runs?q=invoice+4242"),
            ("runs page, paused only", "/runs?state=paused"),
            ("API list", "/api/runs?limit=200"),
            ("inbox (first 200 paused runs)", "/inbox"),
        ):
            times = []
            for _ in range(repeat):
                t = time.perf_counter()
                async with s.get(url + path) as r:
                    assert r.status == 200, (path, r.status)
                    await r.read()
                times.append((time.perf_counter() - t) * 1000)
            out[name] = (statistics.median(times), max(times))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--store", choices=["sqlite", "postgres", "both"], default="both")
    args = parser.parse_args()
    results = {}
    if args.store in ("sqlite", "both"):
        with tempfile.TemporaryDirectory() as folder:
            results["SQLite"] = asyncio.run(measure(str(Path(folder) / "runs.sqlite"), args.runs, args.repeat))
    if args.store in ("postgres", "both"):
        with PostgresServer(settings={"fsync": "on"}) as server:
            results["PostgreSQL"] = asyncio.run(measure(server.url(), args.runs, args.repeat))
    for store, figures in results.items():
        print(f"\n{store}: {figures.pop('runs'):,} runs")
        for name, value in figures.items():
            if isinstance(value, tuple):
                print(f"  {name:<32} median {value[0]:7.1f} ms   worst {value[1]:7.1f} ms")
            else:
                print(f"  {name:<32} {value:7.2f}")


if __name__ == "__main__":
    main()
