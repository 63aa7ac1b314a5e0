"""Reliability measured: run a suite k times per task and report pass^k, failure reasons and transcripts.

See docs/evals.md. Ray and matplotlib are optional (``toolslip[ray]``, ``toolslip[report]``) and are
imported only by the functions that need them.
"""

from __future__ import annotations

from .estimators import is_success, pass_at_k, pass_hat_k, suite_pass_at_k, suite_pass_hat_k
from .models import FlakyModel, ReferenceModel, resolve_eval_model
from .runner import Progress, TrialSpec, evaluate, read_results
from .suite import Check, Outcome, Suite, Task, at_most_steps, called, load_suite, never_called
from .summary import ModelSummary, summarize, summary_table
from .trial import TrialModel, TrialRecord, run_trial, trial_seed

__all__ = [
    "Check",
    "FlakyModel",
    "ModelSummary",
    "Outcome",
    "Progress",
    "ReferenceModel",
    "Suite",
    "Task",
    "TrialModel",
    "TrialRecord",
    "TrialSpec",
    "at_most_steps",
    "called",
    "evaluate",
    "is_success",
    "load_suite",
    "never_called",
    "pass_at_k",
    "pass_hat_k",
    "read_results",
    "resolve_eval_model",
    "run_trial",
    "suite_pass_at_k",
    "suite_pass_hat_k",
    "summarize",
    "summary_table",
    "trial_seed",
]
