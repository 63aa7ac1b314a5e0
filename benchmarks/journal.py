"""What the run journal costs: added CPU per model step and per tool call, with vs without it.

Runs the same scripted agent with no hooks and with ``journal.wrap()`` (SQLite, WAL, synchronous=NORMAL),
interleaving the two so that noise from the shared machine hits both, and prints medians. Two shapes of
run separate the costs: one side-effecting call per step, and four per step. The journaled runs include
the run lease (taken and released once per run, every append checked against it in the same statement,
a heartbeat thread counted by process_time); the lease's own operations are also timed alone.

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
from toolslip.hooks import Hook
from toolslip.journal import Journal, SqliteStore
from toolslip.messages import Message, ModelResponse, Request, ToolCall


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


def cpu_of_run(steps: int, calls: int, hooks: list[Hook]) -> float:
    agent = Agent(model=Script(steps, calls), tools=Toolbox([record]), max_steps=steps, hooks=hooks)
    started = time.process_time()
    result = asyncio.run(agent.arun("go"))
    spent = time.process_time() - started
    assert result.ok and result.tool_calls == (steps - 1) * calls
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    steps = args.steps
    with tempfile.TemporaryDirectory() as tmp:
        journal = Journal(Path(tmp) / "runs.sqlite")
        added: dict[int, list[float]] = {1: [], 4: []}
        plain: dict[int, list[float]] = {1: [], 4: []}
        cpu_of_run(steps, 1, journal.wrap())  # warm up imports, caches and the database file
        for _ in range(args.runs):
            for calls in (1, 4):  # interleaved: each pair of measurements sees the same machine
                without = cpu_of_run(steps, calls, [])
                with_journal = cpu_of_run(steps, calls, journal.wrap())
                plain[calls].append(without)
                added[calls].append(with_journal - without)
        store = SqliteStore(Path(tmp) / "append.sqlite")
        appends, leased, takes, beats = [], [], [], []
        payload = {"result": {"kind": "tool_result", "call_id": "c", "content": "x" * 200}}
        for _ in range(5):
            started = time.process_time()
            for _ in range(1000):
                store.append("r", "tool_end", payload, step=1, key="k")
            appends.append((time.process_time() - started) / 1000)
            lease = store.leases.take("r")
            started = time.process_time()
            for _ in range(1000):
                store.append("r", "tool_end", payload, step=1, key="k", lease=lease)
            leased.append((time.process_time() - started) / 1000)
            started = time.process_time()
            for _ in range(200):
                store.leases.renew(lease, store.leases.db)
            beats.append((time.process_time() - started) / 200)
            lease.release()
            started = time.process_time()
            for i in range(200):
                store.leases.take(f"t{i}").release()
            takes.append((time.process_time() - started) / 200)
        store.close()

    tool_steps = steps - 1
    one, four = statistics.median(added[1]), statistics.median(added[4])
    per_call = (four - one) / (3 * tool_steps)  # 4-call steps have 3 more calls each
    per_step = (one - per_call * tool_steps) / steps
    events_one = 2 + steps + 2 * tool_steps  # start, finish, a model entry per step, start+end per call
    print(f"runs of {steps} model steps, medians of {args.runs} interleaved pairs (CPU time, process_time)")
    for calls in (1, 4):
        base = statistics.median(plain[calls])
        extra = statistics.median(added[calls])
        print(
            f"  {calls} call/step: without journal {base * 1e3:7.2f} ms   added by journal {extra * 1e3:7.2f} ms "
            f"({extra / base:.0%} of the run)"
        )
    print(f"added CPU per tool call (start + end entries): {per_call * 1e3:.3f} ms")
    print(f"added CPU per model step (model entry):        {per_step * 1e3:.3f} ms")
    print(f"added CPU per journaled event (1 call/step):   {one / events_one * 1e3:.3f} ms  (target < 0.3 ms)")
    print(f"SqliteStore.append alone, 200-char result:     {statistics.median(appends) * 1e3:.3f} ms")
    print(f"  the same append checked against the lease:   {statistics.median(leased) * 1e3:.3f} ms")
    print(f"lease taken and released (once per run):       {statistics.median(takes) * 1e3:.3f} ms")
    beat = statistics.median(beats)
    per_second = f"{beat / 10 * 1e6:.2f} us of CPU per second"
    print(f"lease heartbeat, one renewal (every 10 s):     {beat * 1e3:.3f} ms  ({per_second})")


if __name__ == "__main__":
    main()
