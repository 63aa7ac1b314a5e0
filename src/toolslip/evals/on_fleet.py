"""Trials on the fleet: ``toolslip eval --ray ADDRESS`` plays each trial as a run of :mod:`toolslip.fleet`.

The fleet places each trial on a node of the Ray cluster, attempts it again elsewhere when its worker or
node dies, and ends one whose harness keeps failing (a suite file a worker cannot load) ``failed`` after
the policy's attempts, which the report shows as a crash. The journal holds each trial's lease, so one
worker plays it at a time (even a frozen one that wakes), its ``start`` entry with which eval, task and
trial it is (``meta``: ``eval``, ``suite``, ``task``, ``trial``, ``attempt``, ``seed``), and its ``finish``
entry with the trial's record (``extra.trial``), from which the driver reads it.

A trial's environment lives in its worker's memory, so a trial cut off by a death is played again from
its beginning on a fresh environment (its journal shows a ``resume`` entry) instead of resumed step by
step: finished calls answered from the journal would leave the new environment without their effects.
Its seed is the same, so its record is the one an uninterrupted trial gives. Workers load the suite
from its path, once per worker process; the model object travels pickled. Run ids are
``EVAL/MODEL/TASK/TRIAL.ATTEMPT``, new for each executor (a trial an executor is handed again, by another
``evaluate``, gets a ``+N`` suffix and is played again rather than read back from the journal).
"""

from __future__ import annotations

import collections
import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..core.errors import ConfigError
from ..core.messages import Message, message_to_dict
from ..durable.journal import Entry, Journal
from ..fleet import Fleet, Policy
from ..fleet.task import Attempt
from .journaled import new_report_id, trial_tag
from .runner import Executor, TrialSpec, run_spec
from .suite import Suite, load_suite
from .trial import TrialRecord

__all__ = ["Trials", "fleet_executor"]


@dataclass(frozen=True)
class Trials:
    """The fleet's work for one eval: the trials of the suite at ``suite_path`` (a path every node can read)."""

    suite_path: str
    eval_id: str
    """Names the eval in its runs' ids and ``start`` entries, so a trial's run leads back to its eval."""

    def prepare(self, journal: Journal) -> Attempt:
        suite = load_suite(self.suite_path)

        async def attempt(run_id: str, spec: TrialSpec, entries: Sequence[Entry]) -> TrialRecord:
            task = suite.task(spec.task)
            if any(e.kind == "start" for e in entries):  # a worker died in it: played again from the start
                journal.append(run_id, "resume", {"responses": 0, "from_start": True})
            else:
                prompt = [Message.user(task.prompt)] if isinstance(task.prompt, str) else task.prompt
                # the tag a journaled eval's trial runs carry, so the console lists these under the report too
                meta = {"eval": trial_tag(self.eval_id, _record(suite, spec))}
                data = {"messages": [message_to_dict(m) for m in prompt], "model": spec.model.name, "meta": meta}
                journal.append(run_id, "start", data)
            try:
                record = await run_spec(suite, spec)
            except Exception as exc:  # the harness, not the trial (run_trial keeps those in its record)
                journal.append(run_id, "abort", {"status": "failed", "error": f"{type(exc).__name__}: {exc}"})
                raise
            journal.append(run_id, "finish", _finish(record))
            return record

        return attempt


def _finish(record: TrialRecord) -> dict[str, Any]:
    """The trial's ``finish`` entry: what ``toolslip runs`` and ``show`` read, and the record under ``extra``."""
    usage = {"input_tokens": record.input_tokens, "output_tokens": record.output_tokens}
    usage |= {"cache_read_tokens": record.cache_read_tokens, "cache_write_tokens": record.cache_write_tokens}
    detail = record.detail.strip().splitlines()
    return {
        "stop_reason": "completed",
        "output": f"{record.reason}: {detail[-1]}" if detail else record.reason,
        "steps": record.steps,
        "usage": usage,
        "cost": record.cost,
        "pending": [],
        "refused": 0,
        "not_rerun": 0,
        "extra": {"trial": record.to_dict()},
    }


@contextmanager
def fleet_executor(
    suite: Suite,
    address: str | None,
    journal: str | None = None,
    *,
    concurrency: int = 8,
    policy: Policy | None = None,
    report: str | None = None,
) -> Iterator[Executor]:
    """An executor that plays each trial as a fleet run on the Ray cluster at ``address`` (``"local"`` or
    ``None``: the one this process joined, else one started here) against ``journal``: a ``postgresql://``
    URL, or a SQLite file every node can open (default: a temporary one, for a cluster on this machine).
    Leaves the cluster on exit (a cluster this process had already joined stays). ``report`` names the eval
    in the journal (``toolslip console`` lists it under /evals; default: a new id)."""
    if suite.path is None:
        raise ConfigError(f"suite {suite.name!r} was not loaded from a file, and the fleet's workers load it by path")
    eval_id = report or new_report_id()
    work = Trials(suite.path, eval_id)
    with contextlib.ExitStack() as stack:
        if journal is None:
            journal = os.path.join(
                stack.enter_context(tempfile.TemporaryDirectory(prefix="toolslip-eval-")), "runs.sqlite"
            )
        fleet = stack.enter_context(Fleet(journal, work, address=address, concurrency=concurrency, policy=policy))

        plays: collections.Counter[str] = collections.Counter()

        async def execute(spec: TrialSpec) -> TrialRecord:
            run_id = f"{eval_id}/{spec.model.name}/{spec.task}/{spec.trial}.{spec.attempt}"
            plays[run_id] += 1
            if plays[run_id] > 1:  # the same trial in another evaluate(): played again, not read from the journal
                run_id += f"+{plays[run_id] - 1}"
            outcome = await fleet.outcome(run_id, spec)
            if "trial" in outcome.extra:
                return TrialRecord.from_dict(outcome.extra["trial"])
            # the fleet gave up on it: a crash to report, not a failed answer
            return _record(suite, spec, detail=f"the fleet's run {run_id} ended {outcome.outcome}: {outcome.error}")

        yield execute


def _record(suite: Suite, spec: TrialSpec, detail: str = "") -> TrialRecord:
    """The record of ``spec``'s trial before it is played (a crash until it says otherwise)."""
    return TrialRecord(
        suite=suite.name,
        model=spec.model.name,
        task=spec.task,
        trial=spec.trial,
        attempt=spec.attempt,
        seed=spec.seed,
        mode=spec.mode,
        position=suite.position(spec.task),
        detail=detail,
    )
