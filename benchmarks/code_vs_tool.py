"""The examples' eval suite in code mode vs tool mode, one interleaved run: pass^1, pass^k, tokens per solved task.

Every trial of ``examples/suite_expenses.py`` (or ``--suite``) is played once per mode, the two modes one right
after the other (which goes first alternates from trial to trial), so a change of the machine's load weighs on
both modes alike. A trial's seed is the one ``toolslip eval`` gives it (the same in both modes), and the model
samples at ``--temperature`` with that seed: ``local`` and ``local:qwen2.5-coder-1.5b`` are the embedded
models; ``reference`` (the suite's own right answers, written as programs in code mode) checks the harness.

**Tokens per solved task** is the input and output tokens of every scored trial of a mode, summed, over the
trials of that mode that passed (the cost of a success, failures included).

    python benchmarks/code_vs_tool.py [--model local] [--model local:qwen2.5-coder-1.5b] [--k 3]
                                      [--temperature 0.7] [--out results.jsonl] [--tasks a,b]
    python benchmarks/code_vs_tool.py --summary results.jsonl     # the table of a run, finished or not

Each trial is one JSON line (a ``toolslip eval`` trial record with its ``mode``) on stdout and in ``--out``; the
table at the end has one row per model and mode.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from toolslip.core.model import Model
from toolslip.evals import Suite, Task, TrialRecord, load_suite, read_results, resolve_eval_model, summarize
from toolslip.evals.estimators import suite_pass_hat_k
from toolslip.evals.trial import Mode, TrialModel, run_trial, trial_seed

ROOT = Path(__file__).resolve().parents[1]
MODES: tuple[Mode, Mode] = ("tool", "code")


@dataclasses.dataclass(frozen=True)
class Sampled:
    """A provider model sampled at ``temperature`` with each trial's own seed (a trial's agent sets no sampling)."""

    spec: str
    temperature: float

    @property
    def name(self) -> str:
        return self.spec

    def for_trial(self, task: Task, seed: int) -> Model:
        model = resolve_eval_model(self.spec).for_trial(task, seed)
        if dataclasses.is_dataclass(model) and {"temperature", "seed"} <= {f.name for f in dataclasses.fields(model)}:
            return dataclasses.replace(model, temperature=self.temperature, seed=seed % 2**31)
        return model


def trial_model(spec: str, temperature: float) -> TrialModel:
    offline = spec == "reference" or spec.startswith("flaky:")
    return resolve_eval_model(spec) if offline else Sampled(spec, temperature)


async def play(suite: Suite, models: Sequence[TrialModel], k: int, sink: IO[str] | None) -> list[TrialRecord]:
    """Every model, trial and task, each in both modes one after the other; one JSON line per trial."""
    records: list[TrialRecord] = []
    turn = 0
    for model in models:
        for trial in range(k):
            for task in suite.tasks:
                seed = trial_seed(0, task.id, trial, 0)
                for mode in MODES if turn % 2 == 0 else MODES[::-1]:
                    record = await run_trial(suite, task, model, trial=trial, attempt=0, seed=seed, mode=mode)
                    records.append(record)
                    if sink:
                        sink.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
                        sink.flush()
                    brief = {key: getattr(record, key) for key in ("model", "mode", "task", "trial", "reason")}
                    brief |= {"tokens": record.input_tokens + record.output_tokens, "steps": record.steps}
                    brief |= {"seconds": round(record.seconds, 1), "load": round(os.getloadavg()[0], 1)}
                    print(json.dumps(brief, ensure_ascii=False), flush=True)
                turn += 1
    return records


def table(records: Sequence[TrialRecord], k: int) -> str:
    """One row per model and mode: trials, pass^1, pass^k (over tasks with k trials), tokens per solved task."""
    header = f"{'model':28} {'mode':5} {'trials':>6} {'passed':>6} {'pass^1':>7} {f'pass^{k}':>7} "
    header += f"{'tokens/solved':>13} {'tokens/trial':>12} {'model calls/trial':>17} {'s/trial':>7}"
    rows = [header]
    for model in dict.fromkeys(r.model for r in records):
        for mode in MODES:
            group = [r for r in records if r.model == model and r.mode == mode]
            if not group:
                continue
            summary = summarize(group)[0]
            scored = summary.scored
            passed = sum(r.success for r in scored)
            tokens = sum(r.input_tokens + r.output_tokens for r in scored)
            whole = [(t.n, t.c) for t in summary.tasks if t.n >= k]  # a run cut short: the tasks it finished
            hat_k = f"{suite_pass_hat_k(whole, k):.2f}" if whole else "-"
            hat_1 = suite_pass_hat_k([(t.n, t.c) for t in summary.tasks if t.n], 1) if scored else 0.0
            per_solved = f"{tokens / passed:.0f}" if passed else "-"
            n = max(len(scored), 1)
            rows.append(
                f"{model:28} {mode:5} {len(scored):>6} {passed:>6} {hat_1:>7.2f} {hat_k:>7} {per_solved:>13} "
                f"{tokens / n:>12.0f} {sum(r.steps for r in scored) / n:>17.1f} "
                f"{sum(r.seconds for r in scored) / n:>7.1f}"
            )
            if unscored := len(group) - len(scored):
                rows[-1] += f"  ({unscored} unscored)"
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", help="repeatable (default: local, local:qwen2.5-coder-1.5b)")
    parser.add_argument("--suite", default=str(ROOT / "examples" / "suite_expenses.py"))
    parser.add_argument("--k", type=int, default=3, help="trials per task and mode (default 3)")
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--tasks", help="comma-separated task ids (default: all)")
    parser.add_argument("--out", type=Path, help="append every trial record here (JSON Lines)")
    parser.add_argument("--summary", type=Path, help="print the table of a results file and stop")
    args = parser.parse_args()
    if args.summary:
        print(table(read_results(args.summary), args.k))
        return
    suite = load_suite(args.suite)
    if args.tasks:
        wanted = args.tasks.split(",")
        suite = dataclasses.replace(suite, tasks=[t for t in suite.tasks if t.id in wanted])
    specs = args.model or ["local", "local:qwen2.5-coder-1.5b"]
    models = [trial_model(spec, args.temperature) for spec in specs]
    print(f"# {', '.join(specs)} k={args.k} t={args.temperature} load={os.getloadavg()[0]:.1f}", file=sys.stderr)
    with open(args.out, "a", encoding="utf-8") if args.out else contextlib.nullcontext() as sink:
        records = asyncio.run(play(suite, models, args.k, sink))
    print(table(records, args.k))
    print(f"# load at the end {os.getloadavg()[0]:.1f}", file=sys.stderr)


if __name__ == "__main__":
    main()
