"""Running a suite: every task k times per model, concurrently within a limit, streamed to JSON Lines.

The runner plans trials, hands each to an executor (local asyncio here, the fleet on Ray in ``on_fleet``), writes
every record to the results file the moment it arrives, and retries trials that hit a provider error or
crashed. Resuming reads the file back: trials already scored are kept, missing ones are run, and a larger
``k`` extends the run. Trial i of a task always gets the same seed, so extending never reshuffles it.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any

from ..core.errors import ConfigError
from ..core.model import Model
from .about import run_info
from .journaled import EvalJournal
from .suite import Suite
from .trial import Mode, TrialModel, TrialRecord, run_trial, trial_seed

__all__ = ["Executor", "Progress", "TrialSpec", "evaluate", "local_executor", "read_results", "run_spec"]


@dataclass(frozen=True)
class TrialSpec:
    """What to run: which model plays which trial of which task."""

    model: Model | TrialModel
    task: str
    trial: int
    attempt: int
    seed: int
    journal: EvalJournal | None = None
    """Where the trial is journaled as a run, if anywhere (two strings, so it travels to Ray workers)."""
    mode: Mode = "tool"


Executor = Callable[[TrialSpec], Awaitable[TrialRecord]]


async def run_spec(suite: Suite, spec: TrialSpec) -> TrialRecord:
    """Run the trial ``spec`` names; every executor ends here, in whichever process it runs."""
    task = suite.task(spec.task)
    return await run_trial(
        suite,
        task,
        spec.model,
        trial=spec.trial,
        attempt=spec.attempt,
        seed=spec.seed,
        journal=spec.journal,
        mode=spec.mode,
    )


def local_executor(suite: Suite) -> Executor:
    """Run trials in this process's event loop."""
    return lambda spec: run_spec(suite, spec)


def read_results(path: str | Path) -> list[TrialRecord]:
    """The trial records of a results file, in file order; a bad line is an error naming the line."""
    records = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise TypeError(f"expected a JSON object, got {type(data).__name__}")
                if data.get("type") == "trial":
                    records.append(TrialRecord.from_dict(data))
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"{path}:{number}: not a toolslip results line ({exc})") from None
    return records


class Progress:
    """A one-line live bar on a terminal: trials done, running pass^1 and ETA. Silent when not a TTY."""

    def __init__(self, total: int, stream: IO[str] | None = None) -> None:
        self.total, self.done, self.passed, self.scored = total, 0, 0, 0
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty()
        self.started = time.monotonic()

    def update(self, record: TrialRecord) -> None:
        self.done += 1
        self.scored += record.scored
        self.passed += record.success
        if self.live:
            self.stream.write("\r" + self.line())
            self.stream.flush()

    def line(self) -> str:
        width = 24
        filled = width * self.done // max(self.total, 1)
        rate = f"{self.passed / self.scored:.3f}" if self.scored else "  -  "
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        bar = "#" * filled + "." * (width - filled)
        return f"[{bar}] {self.done}/{self.total} trials  pass^1 {rate}  ETA {int(eta) // 60}:{int(eta) % 60:02d}"

    def close(self) -> None:
        if self.live and self.done:
            self.stream.write("\n")
            self.stream.flush()


def _plan(
    suite: Suite,
    models: Sequence[Model | TrialModel],
    k: int,
    seed: int,
    existing: Sequence[TrialRecord],
    journal: EvalJournal | None,
    mode: Mode,
) -> list[TrialSpec]:
    done = {(r.model, r.task, r.trial) for r in existing if r.scored}
    attempts = Counter((r.model, r.task, r.trial) for r in existing)
    plan = []
    for model in models:
        for task in suite.tasks:
            for trial in range(k):
                key = (model.name, task.id, trial)
                if key not in done:
                    attempt = attempts[key]
                    plan.append(
                        TrialSpec(
                            model, task.id, trial, attempt, trial_seed(seed, task.id, trial, attempt), journal, mode
                        )
                    )
    return plan


def _open_results(out: str | Path | None, resume: bool, suite: Suite) -> tuple[list[TrialRecord], IO[str] | None]:
    """The records already in ``out`` and the file opened for appending (before any trial runs)."""
    if out is None:
        return [], None
    existing: list[TrialRecord] = []
    if Path(out).exists():
        if not resume:
            raise ConfigError(f"{out} already exists; pass --resume to continue or extend it, or choose another --out")
        existing = read_results(out)
        if other := {r.suite for r in existing} - {suite.name}:
            raise ConfigError(f"{out} holds results of suite {sorted(other)[0]!r}, not {suite.name!r}")
    return existing, open(out, "a", encoding="utf-8")


async def evaluate(
    suite: Suite,
    models: Sequence[Model | TrialModel],
    *,
    k: int,
    concurrency: int = 8,
    seed: int = 0,
    retries: int = 2,
    out: str | Path | None = None,
    resume: bool = False,
    executor: Executor | None = None,
    progress: Progress | None = None,
    about: Mapping[str, Any] | None = None,
    journal: EvalJournal | None = None,
    mode: Mode = "tool",
) -> list[TrialRecord]:
    """Run ``k`` trials of every task for every model; returns all records (earlier ones included).

    A trial that ends in a provider error or a crash is retried up to ``retries`` times with a new
    attempt number (and seed); if it still fails, its record stays in the file, unscored. ``out`` gets a
    ``run`` line first: ``about`` (see :func:`~toolslip.evals.about.run_info`), or one made here. With
    ``journal`` every attempt is a journaled run (:mod:`~toolslip.evals.journaled`). ``mode="code"``: every
    trial's agent runs in code mode (the model answers with programs).
    """
    if k < 1 or concurrency < 1 or retries < 0:
        raise ConfigError(
            f"k and concurrency must be at least 1 and retries at least 0 (got {k}, {concurrency}, {retries})"
        )
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise ConfigError(f"two models share a name ({', '.join(names)}); give each a distinct name")
    existing, sink = _open_results(out, resume, suite)
    if other_mode := {r.mode for r in existing} - {mode}:
        if sink is not None:
            sink.close()
        raise ConfigError(f"{out} holds trials in {sorted(other_mode)[0]} mode; resume it in that mode")
    if sink is not None:
        about = about if about is not None else run_info(suite, models, k=k, seed=seed, retries=retries)
        sink.write(json.dumps({"type": "run", **about}, ensure_ascii=False) + "\n")
        sink.flush()
    queue = deque(_plan(suite, models, k, seed, existing, journal, mode))
    first_attempt = {(s.model.name, s.task, s.trial): s.attempt for s in queue}
    execute = executor or local_executor(suite)
    results = list(existing)
    bar = progress or Progress(len(queue))

    async def worker() -> None:
        while queue:
            spec = queue.popleft()
            record = await execute(spec)
            results.append(record)
            if sink is not None:
                sink.write(json.dumps(record.to_dict(), ensure_ascii=False) + "\n")
                sink.flush()
            if not record.scored and spec.attempt - first_attempt[(spec.model.name, spec.task, spec.trial)] < retries:
                attempt = spec.attempt + 1
                queue.append(replace(spec, attempt=attempt, seed=trial_seed(seed, spec.task, spec.trial, attempt)))
                bar.total += 1
            bar.update(record)

    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, max(len(queue), 1)))))
    finally:
        bar.close()
        if sink is not None:
            sink.close()
    return results
