"""The embedded model's costs and reliability: assembly, load, tokens/s, the weather episode, success rate.

Prints, measured in one run on this machine:

* first-use assembly: concatenating and hashing the weight parts into a fresh cache directory;
* load time of the GGUF file (llama.cpp, mmap);
* prompt and generation tokens/s with one and with two threads, interleaved, medians;
* the weather episode's wall time (greedy decoding, the repeated-call guard on), median;
* the success rate of the weather task over sampled runs (temperature > 0, a different seed each):
  success = get_weather was executed and the final answer holds the temperature (28);
* the examples' eval suite (examples/suite_expenses.py: three weather questions, a two-currency trip total,
  an expense report): greedy pass^1 per task, then ``--k`` trials sampled at ``--temperature`` (a seed
  per trial) for pass^1 and pass^k per task, and seconds per answer. No loop hook is added: the repeat
  guard is the model's own (issue 26), as for ``toolslip.run("local", ...)`` and ``serve``.

    python benchmarks/local_model.py [--model local] [--runs 10] [--temperature 0.7] [--repeats 3] [--k 3]
    python benchmarks/local_model.py --suite-only      # just the eval suite
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from toolslip.evals import Task
from toolslip.evals.estimators import pass_hat_k
from toolslip.evals.runner import Progress, evaluate
from toolslip.evals.summary import summarize
from toolslip.loop import Agent
from toolslip.messages import Message, Settings
from toolslip.providers.local import LocalModel, local_model
from toolslip.providers.local_weights import CATALOGUE, ensure_weights
from toolslip.repeats import RepeatGuard
from toolslip.tools import Toolbox

QUESTION = "What's the weather in Beijing?"
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "weather.py"
PROSE = "Explain in a few sentences what a hash function is and why it is useful."


def weather_tools() -> Toolbox:
    spec = importlib.util.spec_from_file_location("weather_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Toolbox([module.get_weather])


def assembly_seconds(name: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        ensure_weights(CATALOGUE[name], directory=Path(tmp), progress=io.StringIO())
        return time.perf_counter() - started


def speeds(model: LocalModel, tokens: int) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s) for one prose request evaluated from an empty cache."""
    loaded = model.load()
    prompt = loaded.template.render([Message.user(PROSE)], [])
    loaded.llama.reset()  # no reuse of an earlier prompt's evaluation
    started = time.perf_counter()
    first = loaded.llama.create_completion(prompt, max_tokens=1, temperature=0.0)
    prompt_seconds = time.perf_counter() - started
    loaded.llama.reset()
    started = time.perf_counter()
    out = loaded.llama.create_completion(prompt, max_tokens=tokens, temperature=0.0)
    total = time.perf_counter() - started
    assert isinstance(first, dict) and isinstance(out, dict)
    generated = out["usage"]["completion_tokens"]
    return first["usage"]["prompt_tokens"] / prompt_seconds, (generated - 1) / max(total - prompt_seconds, 1e-9)


async def episode(model: LocalModel, tools: Toolbox, settings: Settings) -> tuple[bool, float, int]:
    """(success, seconds, model calls) of one weather run."""
    agent = Agent(model=model, tools=tools, hooks=[RepeatGuard()], max_steps=6, settings=settings)
    started = time.perf_counter()
    result = await agent.arun(QUESTION)
    seconds = time.perf_counter() - started
    executed = any('"temp": 28' in r.text for m in result.messages for r in m.tool_results)
    return executed and "28" in result.output, seconds, result.steps


@dataclass(frozen=True)
class SampledLocal:
    """The local model as an eval's trial model: each trial samples with its own seed, the weights shared."""

    model: LocalModel
    temperature: float

    @property
    def name(self) -> str:
        return f"{self.model.name}@{self.temperature}"

    def for_trial(self, task: Task, seed: int) -> LocalModel:
        return replace(self.model, temperature=self.temperature, seed=seed % 2**31)


async def suite_figures(model: LocalModel, k: int, temperature: float) -> None:
    """pass^1 and pass^k per task of the examples' suite, greedy and sampled, and seconds per answer."""
    sys.path.insert(0, str(EXAMPLE.parent))  # the suite imports its neighbours, as `toolslip eval` allows
    from suite_expenses import suite

    for label, trial_model, trials in (
        ("greedy", model, 1),
        (f"temperature {temperature}", SampledLocal(model, temperature), k),
    ):
        records = await evaluate(suite, [trial_model], k=trials, concurrency=1, progress=Progress(0, io.StringIO()))
        (summary,) = summarize(records)
        print(f"eval suite {suite.name!r}, {label}, {trials} trial(s) per task:")
        for stats in summary.tasks:
            seconds = statistics.median(t.seconds for t in stats.trials) if stats.trials else float("nan")
            hats = "  ".join(f"pass^{j} {pass_hat_k(stats.n, stats.c, j):.2f}" for j in sorted({1, trials}))
            reasons = ",".join(sorted({t.reason for t in stats.trials if not t.success})) or "-"
            print(f"  {stats.task:20} {stats.c}/{stats.n}  {hats}  {seconds:5.1f} s/answer  failures: {reasons}")
        print(f"  suite pass^1 {summary.pass_hat(1):.3f}, pass^{trials} {summary.pass_hat(trials):.3f}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local", help="local, local:qwen2.5-coder-1.5b or local:PATH.gguf")
    parser.add_argument("--runs", type=int, default=10, help="sampled weather runs for the success rate")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--repeats", type=int, default=3, help="repetitions of the timing measurements")
    parser.add_argument("--k", type=int, default=3, help="sampled trials per task of the eval suite")
    parser.add_argument("--suite-only", action="store_true", help="run only the eval suite")
    args = parser.parse_args()
    if args.suite_only:
        await suite_figures(local_model(args.model), args.k, args.temperature)
        return

    name = args.model.partition(":")[2] or "qwen2.5-coder-0.5b"
    if name in CATALOGUE:
        size = CATALOGUE[name].size / 1e6
        print(f"first-use assembly of {name} ({size:.0f} MB, hashed): {assembly_seconds(name):.1f} s")

    one, two = local_model(args.model, n_threads=1), local_model(args.model, n_threads=2)
    started = time.perf_counter()
    one.load()
    print(f"load time (n_threads=1): {time.perf_counter() - started:.2f} s")
    two.load()

    rates: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for _ in range(args.repeats):  # interleaved so the shared machine's noise hits both alike
        for model in (one, two):
            rates[model.n_threads].append(speeds(model, 64))
    for threads, pairs in rates.items():
        prompt = statistics.median(p for p, _ in pairs)
        gen = statistics.median(g for _, g in pairs)
        print(f"n_threads={threads}: prompt {prompt:.0f} tok/s, generation {gen:.1f} tok/s (median of {len(pairs)})")
    for label, pick in (("prompt", 0), ("generation", 1)):
        ratio = statistics.median(r[pick] for r in rates[1]) / statistics.median(r[pick] for r in rates[2])
        print(f"{label} speed ratio, 1 thread / 2 threads: {ratio:.2f}")

    tools = weather_tools()
    greedy = [await episode(one, tools, Settings()) for _ in range(args.repeats)]
    ok = sum(s for s, _, _ in greedy)
    wall = statistics.median(t for _, t, _ in greedy)
    steps = statistics.median(n for _, _, n in greedy)
    print(f"weather episode, greedy: {wall:.1f} s median wall time, {steps:.0f} model calls, {ok}/{len(greedy)} ok")

    sampled = []
    for seed in range(1, args.runs + 1):
        settings = Settings(temperature=args.temperature, extra={"seed": seed})
        success, seconds, calls = await episode(one, tools, settings)
        sampled.append(success)
        print(f"  seed {seed}: {'ok ' if success else 'FAIL'} {seconds:5.1f} s, {calls} model calls")
    print(f"weather success rate, temperature {args.temperature}: {sum(sampled)}/{len(sampled)}")
    await suite_figures(one, args.k, args.temperature)


if __name__ == "__main__":
    asyncio.run(main())
