"""What the run journal costs: added CPU and wall time per model step and per tool call, on SQLite and PostgreSQL.

Runs the same scripted agent with no hooks, with ``journal.wrap()`` on SQLite (WAL, synchronous=NORMAL)
and on PostgreSQL (a server this benchmark starts: Debian's binaries, a Unix socket, fsync on, each entry
its own committed transaction; ``tool_start``, ``start`` and ``finish`` wait for the disk, ``model`` and
``tool_end`` entries do not), interleaving the three so that noise from the shared machine hits all of
them, and prints medians. CPU time is this process's (process_time); wall time includes the database
server's work and the commit's wait for the disk. Two shapes of run separate the costs: one
side-effecting call per step, and four per step. The journaled runs include the run lease (taken and
released once per run, every append checked against it in the same statement, a heartbeat thread); the
store's own operations are also timed alone.

    python benchmarks/journal.py [--runs 15] [--steps 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from toolslip import Agent, Toolbox, tool
from toolslip.durable.journal_pg import PostgresStore
from toolslip.durable.stores import LeasedStore
from toolslip.hooks import Hook
from toolslip.journal import Journal, SqliteStore
from toolslip.messages import Message, ModelResponse, Request, ToolCall
from toolslip.testing.postgres import PostgresServer


@tool(effects="side_effect")
async def record(n: int, note: str) -> str:
    """Record a note."""
    return f"recorded {n}: {note}"


class Script:
    """A model that costs next to nothing: prebuilt responses, ``calls`` side-effecting calls a step."""

    name = "bench"

    def __init__(self, steps: int, calls: int) -> None:
        note = "a short note of about sixty characters, like a real argument"
        self.responses = [
            ModelResponse(
                message=Message.assistant(
                    calls=[
                        ToolCall(id=f"c{s}_{i}", name="record", arguments={"n": s * 10 + i, "note": note})
                        for i in range(calls)
                    ]
                ),
                stop_reason="tool_use",
            )
            for s in range(steps - 1)
        ] + [ModelResponse(message=Message.assistant("done"), stop_reason="end_turn")]

    async def complete(self, request: Request) -> ModelResponse:
        return self.responses[sum(m.role == "assistant" for m in request.messages)]


def cost_of_run(steps: int, calls: int, hooks: list[Hook]) -> tuple[float, float]:
    """(CPU seconds of this process, wall seconds) of one run."""
    agent = Agent(model=Script(steps, calls), tools=Toolbox([record]), max_steps=steps, hooks=hooks)
    cpu, wall = time.process_time(), time.perf_counter()
    result = asyncio.run(agent.arun("go"))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert result.ok and result.tool_calls == (steps - 1) * calls
    return cpu, wall


def store_operations(store: LeasedStore) -> dict[str, float]:
    """Median seconds of wall time of the store's own operations, alone."""
    appends, later, leased, takes, beats = [], [], [], [], []
    payload = {"result": {"kind": "tool_result", "call_id": "c", "content": "x" * 200}}
    for _ in range(5):
        for kind, times in (("tool_start", appends), ("tool_end", later)):
            started = time.perf_counter()
            for _ in range(300):
                store.append("r", kind, payload, step=1, key="k")
            times.append((time.perf_counter() - started) / 300)
        lease = store.leases.take("r")
        started = time.perf_counter()
        for _ in range(300):
            store.append("r", "tool_end", payload, step=1, key="k", lease=lease)
        leased.append((time.perf_counter() - started) / 300)
        started = time.perf_counter()
        for _ in range(100):
            store.leases.renew(lease)
        beats.append((time.perf_counter() - started) / 100)
        lease.release()
        started = time.perf_counter()
        for i in range(100):
            store.leases.take(f"t{i}").release()
        takes.append((time.perf_counter() - started) / 100)
    median = statistics.median
    return {
        "append": median(appends),
        "later": median(later),
        "leased": median(leased),
        "take": median(takes),
        "beat": median(beats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    steps = args.steps
    with tempfile.TemporaryDirectory() as tmp, PostgresServer(settings={"fsync": "on"}) as server:
        journals = {"sqlite": Journal(Path(tmp) / "runs.sqlite"), "postgres": Journal(server.url())}
        # (store, calls per step) -> added (cpu, wall) per run; "none" -> the run without a journal
        added: dict[tuple[str, int], list[tuple[float, float]]] = {(s, c): [] for s in journals for c in (1, 4)}
        plain: dict[int, list[tuple[float, float]]] = {1: [], 4: []}
        for journal in journals.values():
            cost_of_run(steps, 1, journal.wrap())  # warm up imports, caches, connections and the database
        for _ in range(args.runs):
            for calls in (1, 4):  # interleaved: each measurement of a round sees the same machine
                without = cost_of_run(steps, calls, [])
                plain[calls].append(without)
                for name, journal in journals.items():
                    cpu, wall = cost_of_run(steps, calls, journal.wrap())
                    added[name, calls].append((cpu - without[0], wall - without[1]))
        operations = {
            "sqlite": store_operations(SqliteStore(Path(tmp) / "append.sqlite")),
            "postgres": store_operations(PostgresStore(server.url())),
        }
        for journal in journals.values():
            journal.store.close()

    tool_steps = steps - 1
    events_one = 2 + steps + 2 * tool_steps  # start, finish, a model entry per step, start+end per call
    print(f"runs of {steps} model steps, medians of {args.runs} interleaved rounds")
    print("PostgreSQL 15 on a Unix socket (fsync on, synchronous_commit on, off for model and tool_end entries);")
    print("SQLite WAL, synchronous=NORMAL")
    for calls in (1, 4):
        cpu = statistics.median(c for c, _ in plain[calls])
        wall = statistics.median(w for _, w in plain[calls])
        print(f"  {calls} call/step without journal: {cpu * 1e3:7.2f} ms CPU, {wall * 1e3:7.2f} ms wall")
    print(f"{'':44}{'sqlite':>12}{'postgres':>12}")
    rows: dict[str, dict[str, float]] = {}
    for name in journals:
        for kind, index in (("CPU", 0), ("wall", 1)):
            one = statistics.median(a[index] for a in added[name, 1])
            four = statistics.median(a[index] for a in added[name, 4])
            per_call = (four - one) / (3 * tool_steps)  # 4-call steps have 3 more calls each
            rows.setdefault(f"added {kind} per tool call (start + end entries)", {})[name] = per_call
            rows.setdefault(f"added {kind} per model step (model entry)", {})[name] = (
                one - per_call * tool_steps
            ) / steps
            rows.setdefault(f"added {kind} per journaled event (1 call/step)", {})[name] = one / events_one
    for label, key in (
        ("append alone, durable (tool_start), wall", "append"),
        ("append alone, after the fact (tool_end)", "later"),
        ("  the same, checked against the lease", "leased"),
        ("lease taken and released (once per run)", "take"),
        ("lease renewal (heartbeat, every ttl/3)", "beat"),
    ):
        rows[label] = {name: operations[name][key] for name in journals}
    for label, values in rows.items():
        print(f"{label:44}" + "".join(f"{values[name] * 1e3:9.3f} ms" for name in journals))


if __name__ == "__main__":
    main()
