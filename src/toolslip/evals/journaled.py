"""Eval trials in the run journal: each trial a journaled run that says which eval, task and trial it is.

``toolslip eval --journal LOCATION`` runs every trial under a :class:`~toolslip.Journal` whose start entry
carries ``meta["eval"]`` (:func:`trial_tag`: the report id, suite, model, task, trial and attempt), and whose
last entry before ``finish`` is an ``eval`` entry with the check's verdict (reward, reason, detail). The
console reads both, so a run page links to its eval report and the report page (``/evals/REPORT``) lists
each task's trials, their verdicts and their runs, without the results file: a journal shared by many
machines holds the whole report. Trials run elsewhere (a Ray task, a fleet worker) are journaled the same
way by handing :func:`trial_journal`'s hooks to their agent, since :class:`EvalJournal` is two strings.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any, Protocol

from ..durable.journal import Journal

__all__ = ["EvalJournal", "new_report_id", "trial_journal", "trial_run_id", "trial_tag"]


class _Trial(Protocol):
    """What a trial's tag is made of (a :class:`~toolslip.evals.TrialRecord` has it; trial.py imports us)."""

    suite: str
    model: str
    task: str
    position: int
    trial: int
    attempt: int
    seed: int


@dataclass(frozen=True)
class EvalJournal:
    """Where an eval journals its trials, and the id that groups them into one report."""

    location: str
    """A SQLite file or a ``postgresql://`` URL, as ``toolslip console --journal`` takes it."""
    report: str
    """One per ``toolslip eval`` invocation (:func:`new_report_id`); a resumed results file gets a new one."""


def new_report_id() -> str:
    """Sortable by time and unique enough that two evals started in the same second never share runs."""
    return f"eval-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}-{secrets.token_hex(3)}"


def trial_run_id(report: str, record: _Trial) -> str:
    """The journal run of one attempt of one trial: distinct across reports, models and retries."""
    return f"{report}-{record.model}-{record.task}-{record.trial}-{record.attempt}"


def trial_tag(report: str, record: _Trial) -> dict[str, Any]:
    """What the run's start entry says about the trial (JSON values only)."""
    return {
        "report": report,
        "suite": record.suite,
        "model": record.model,
        "task": record.task,
        "position": record.position,
        "trial": record.trial,
        "attempt": record.attempt,
        "seed": record.seed,
    }


def trial_journal(where: EvalJournal, record: _Trial) -> Journal:
    """A journal on ``where.location`` whose runs are tagged as ``record``'s trial (close its store after)."""
    return Journal(where.location, meta={"eval": trial_tag(where.report, record)})
