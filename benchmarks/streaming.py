"""Client CPU per step: the streaming path next to the non-streaming one, against the same local server.

The server is ``toolslip serve --model scripted:expenses`` in a separate process, so only the client's
work is measured (``time.process_time`` of this process): building the request, HTTP, and either one JSON
parse or the SSE decoder plus the stream accumulator and the loop's delta events. Each run is the seed's
expenses conversation (5 model calls, 4 tool calls). Rounds interleave the six paths; medians are quoted.

    python benchmarks/streaming.py [--runs 20] [--rounds 7]
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from toolslip import Agent
from toolslip.cli.files import load_tools_file
from toolslip.events import Event
from toolslip.model import Model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel, OpenAIResponsesModel

ROOT = Path(__file__).parents[1]
QUESTION = "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY, and per person for 4?"


def start_server() -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted:expenses", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    for line in server.stdout:
        found = re.search(r" at (http://\S+)", line)
        if found:
            return server, found.group(1)
    raise SystemExit("toolslip serve did not start")


async def cpu_per_step(model: Model, stream: bool, runs: int) -> tuple[float, int]:
    """Mean client CPU microseconds per model call over ``runs`` runs, and the events seen per run."""
    tools = load_tools_file(str(ROOT / "examples" / "expenses.py"))
    agent = Agent(model=model, tools=tools, stream=stream)
    events: list[Event] = []
    listen: Callable[[Event], None] = events.append
    await agent.arun(QUESTION, on_event=listen)  # warm: connection made, modules imported
    events.clear()
    steps = 0
    started = time.process_time()
    for _ in range(runs):
        result = await agent.arun(QUESTION, on_event=listen)
        steps += result.steps
    spent = time.process_time() - started
    return spent / steps * 1e6, len(events) // runs


async def main(runs: int, rounds: int) -> None:
    server, base = start_server()
    try:
        models: dict[str, Callable[[], Model]] = {
            "openai-chat": lambda: OpenAIChatModel("gpt-4o-mini", base_url=f"{base}/v1", max_retries=0),
            "openai-resp": lambda: OpenAIResponsesModel("gpt-4o-mini", base_url=f"{base}/v1", max_retries=0),
            "anthropic": lambda: AnthropicModel("claude", base_url=base, max_retries=0),
        }
        samples: dict[tuple[str, bool], list[float]] = {(n, s): [] for n in models for s in (False, True)}
        events: dict[tuple[str, bool], int] = {}
        for _ in range(rounds):
            for key in samples:
                model = models[key[0]]()
                try:
                    cpu, seen = await cpu_per_step(model, key[1], runs)
                finally:
                    await model.aclose()  # type: ignore[attr-defined]
                samples[key].append(cpu)
                events[key] = seen
        print(f"client CPU per model call, median of {rounds} rounds x {runs} runs of 5 steps (server: {base})")
        header = f"{'format':<12} {'plain µs':>9} {'stream µs':>10} {'ratio':>6}"
        print(f"{header} {'loop events/run plain':>22} {'stream':>7}")
        for name in models:
            plain = statistics.median(samples[(name, False)])
            streamed = statistics.median(samples[(name, True)])
            print(
                f"{name:<12} {plain:>9.0f} {streamed:>10.0f} {streamed / plain:>6.2f} "
                f"{events[(name, False)]:>22} {events[(name, True)]:>7}"
            )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.rounds))
