"""One trial: a fresh environment, one agent run, the task's check, and a record of how it went.

Every trial ends in a :class:`TrialRecord`, whatever happened. A model service failure becomes
``provider_error`` and a failure of the suite or the harness becomes ``crash``: both are kept out of the
score and shown separately, so an outage never looks like a wrong answer and a bug never looks like a
pass.
"""

from __future__ import annotations

import hashlib
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

from ..agent.hooks import Hook, RunContext
from ..agent.loop import Agent
from ..code import INNER_CALLS, INNER_RESULTS
from ..core.errors import ProviderError
from ..core.messages import message_to_dict
from ..core.model import Model
from ..core.result import RunResult
from ..durable.journal import Journal
from .estimators import is_success
from .journaled import EvalJournal, trial_journal, trial_run_id
from .suite import Outcome, Suite, Task

__all__ = ["SCORED", "Mode", "Reason", "TrialModel", "TrialRecord", "run_trial", "trial_seed"]

Mode: TypeAlias = Literal["tool", "code"]

Reason: TypeAlias = Literal[
    "pass",
    "step_limit",  # the run hit max_steps
    "tool_errors",  # the check failed and some tool calls had failed
    "wrong_state",  # the check failed on a clean run: wrong final state or answer
    "stopped",  # the model refused or ran out of output tokens
    "provider_error",  # the model service failed: not scored
    "crash",  # the suite or harness raised: not scored
]

SCORED: frozenset[str] = frozenset({"pass", "step_limit", "tool_errors", "wrong_state", "stopped"})


@runtime_checkable
class TrialModel(Protocol):
    """A model that needs to know which task and seed it plays (the offline test models do)."""

    @property
    def name(self) -> str: ...

    def for_trial(self, task: Task, seed: int) -> Model: ...


def trial_seed(base: int, task_id: str, trial: int, attempt: int) -> int:
    """A seed that depends only on what the trial is, never on where or when it runs."""
    digest = hashlib.sha256(f"{base}\x00{task_id}\x00{trial}\x00{attempt}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(kw_only=True)
class TrialRecord:
    """One line of a results file."""

    suite: str
    model: str
    task: str
    trial: int
    """0-based index among the task's trials; trial i has the same seed in every run."""
    attempt: int = 0
    """Retries of the same trial after a provider error or crash."""
    seed: int = 0
    mode: Mode = "tool"
    """How the trial's agent offered the tools: direct calls, or one program (``Agent(mode="code")``)."""
    position: int = -1
    """The task's place in its suite, which orders a report's rows (-1 in files written before it was kept)."""
    reward: float = 0.0
    reason: Reason = "crash"
    detail: str = ""
    """Why it failed: the check's message, the provider's error, or the crash traceback."""
    stop_reason: str = ""
    steps: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens read from the provider's prompt cache (billed at its cache rate, not in ``input_tokens``)."""
    cache_write_tokens: int = 0
    cost: float | None = None
    """US dollars at the model's list price (genai-prices); ``None`` when no price is known."""
    seconds: float = 0.0
    messages: list[dict[str, Any]] = field(default_factory=list)

    @property
    def scored(self) -> bool:
        return self.reason in SCORED

    @property
    def success(self) -> bool:
        return self.reason == "pass"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "trial", **asdict(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrialRecord:
        fields = {k: v for k, v in data.items() if k != "type"}
        return cls(**fields)


async def run_trial(
    suite: Suite,
    task: Task,
    model: Model | TrialModel,
    *,
    trial: int,
    attempt: int,
    seed: int,
    journal: EvalJournal | None = None,
    mode: Mode = "tool",
) -> TrialRecord:
    """Run one trial of ``task``; never raises for anything the trial itself does.

    With ``journal`` the trial is a journaled run tagged with its report, task and trial
    (:mod:`~toolslip.evals.journaled`), its verdict written into the run before it finishes.
    """
    record = TrialRecord(
        suite=suite.name,
        model=model.name,
        task=task.id,
        trial=trial,
        attempt=attempt,
        seed=seed,
        mode=mode,
        position=suite.position(task.id),
    )
    started = time.perf_counter()
    try:
        await _play(suite, task, model, record, journal)
    except ProviderError as exc:
        record.reason, record.detail = "provider_error", f"{type(exc).__name__}: {exc} (status {exc.status})"
    except Exception:  # the suite's env, its check or the model adapter broke: report it, don't score it
        record.reason, record.detail = "crash", traceback.format_exc(limit=6)
    record.seconds = time.perf_counter() - started
    return record


async def _play(
    suite: Suite, task: Task, model: Model | TrialModel, record: TrialRecord, journal: EvalJournal | None
) -> None:
    tools, env = task.build()
    scoring = _Scoring(task, env, record)
    hooks: list[Hook] = [scoring]
    run_id = f"{task.id}-{record.trial}-{record.attempt}"
    if journal is not None:
        scoring.journal = trial_journal(journal, record)
        hooks, run_id = scoring.journal.wrap(scoring), trial_run_id(journal.report, record)
    agent = Agent(
        model=model.for_trial(task, record.seed) if isinstance(model, TrialModel) else model,
        tools=tools,
        system=task.system if task.system is not None else suite.system,
        max_steps=task.max_steps or suite.max_steps,
        output_type=task.output_type,
        hooks=hooks,
        mode=record.mode,
    )
    try:
        await agent.arun(task.prompt, run_id=run_id)
    finally:
        if scoring.journal is not None:
            scoring.journal.store.close()


class _Scoring(Hook):
    """Scores the run as it finishes: the check runs in ``on_finish``, so a journaled trial's verdict is
    written into its run before the journal's ``finish`` entry (whose place as the last entry says the run
    is over)."""

    def __init__(self, task: Task, env: Any, record: TrialRecord) -> None:
        self.task, self.env, self.record = task, env, record
        self.journal: Journal | None = None

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        record = self.record
        outcome = Outcome(
            result=result,
            env=self.env,
            inner_calls=ctx.state.get(INNER_CALLS, ()),
            inner_results=ctx.state.get(INNER_RESULTS, ()),
        )
        record.messages = [message_to_dict(m) for m in result.messages]
        record.stop_reason, record.steps, record.tool_calls = str(result.stop_reason), result.steps, len(outcome.calls)
        record.tool_errors = sum(r.is_error for r in outcome.results)
        record.input_tokens, record.output_tokens = result.usage.input_tokens, result.usage.output_tokens
        record.cache_read_tokens, record.cache_write_tokens = (
            result.usage.cache_read_tokens,
            result.usage.cache_write_tokens,
        )
        record.cost = result.cost
        try:
            verdict = self.task.check(outcome)
        except AssertionError as exc:
            verdict, record.detail = 0.0, str(exc) or _where(exc)
        record.reward = 1.0 if verdict is None else float(verdict)
        if not is_success(record.reward) and not record.detail:
            record.detail = f"the check returned {verdict!r}"
        record.reason = _reason(record, str(result.stop_reason))
        if self.journal is not None:
            self.journal.note(ctx, "eval", {"reward": record.reward, "reason": record.reason, "detail": record.detail})


def _reason(record: TrialRecord, stop: str) -> Reason:
    if is_success(record.reward):
        return "pass"
    if stop == "max_steps":
        return "step_limit"
    if stop != "completed":
        return "stopped"
    return "tool_errors" if record.tool_errors else "wrong_state"


def _where(exc: AssertionError) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1]
    return f"assertion failed at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}: {frame.line}"
