"""From trial records to the numbers people read: pass^k per model, failure reasons, steps and tokens.

Only scored trials count. Provider errors and crashes are tallied separately (as tau2 does), and a
task's score uses its latest scored record per trial index, so a retried trial is counted once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..core._display import pad, plural, width
from .estimators import suite_pass_at_k, suite_pass_hat_k
from .trial import TrialRecord

__all__ = ["FAILURE_LABELS", "ModelSummary", "TaskStats", "summarize", "summary_table"]

FAILURE_LABELS = {
    "step_limit": "step limit",
    "tool_errors": "tool errors",
    "wrong_state": "wrong final state",
    "stopped": "refused / cut off",
    "provider_error": "provider errors (not scored)",
    "crash": "crashed (not scored)",
}


@dataclass(kw_only=True)
class TaskStats:
    task: str
    trials: list[TrialRecord] = field(default_factory=list)
    """The scored trials, by trial index."""

    @property
    def n(self) -> int:
        return len(self.trials)

    @property
    def c(self) -> int:
        return sum(t.success for t in self.trials)


@dataclass(kw_only=True)
class ModelSummary:
    model: str
    suite: str
    tasks: list[TaskStats]
    unscored: list[TrialRecord]
    """Provider errors and crashes, retried or not."""

    @property
    def scored(self) -> list[TrialRecord]:
        return [t for s in self.tasks for t in s.trials]

    @property
    def k_max(self) -> int:
        """The largest k every task with trials can be scored at."""
        counts = [s.n for s in self.tasks if s.n]
        return min(counts) if counts else 0

    def _counts(self) -> list[tuple[int, int]]:
        return [(s.n, s.c) for s in self.tasks if s.n]

    def pass_hat(self, k: int) -> float:
        return suite_pass_hat_k(self._counts(), k)

    def pass_at(self, k: int) -> float:
        return suite_pass_at_k(self._counts(), k)

    def reasons(self) -> Counter[str]:
        return Counter(t.reason for t in [*self.scored, *self.unscored] if t.reason != "pass")

    def mean(self, attribute: str) -> float:
        values = [float(getattr(t, attribute)) for t in self.scored]
        return sum(values) / len(values) if values else 0.0

    def cost(self, price: tuple[float, float] | None = None) -> float | None:
        """US dollars, all trials included: at ``price`` = (input, output) dollars per million tokens, else
        the list prices recorded with each trial (``None`` when a trial's model has no known price)."""
        every = [*self.scored, *self.unscored]
        if price is not None:
            return sum(t.input_tokens * price[0] + t.output_tokens * price[1] for t in every) / 1e6
        recorded = [t.cost for t in every]
        return None if None in recorded else sum(c for c in recorded if c is not None)


def summarize(records: Iterable[TrialRecord], label: str | None = None) -> list[ModelSummary]:
    """One summary per model, in the order models first appear, its tasks in the suite's order; ``label``
    renames a single model."""
    by_model: dict[str, dict[str, dict[int, TrialRecord]]] = {}
    unscored: dict[str, list[TrialRecord]] = {}
    suites: dict[str, str] = {}
    places: dict[str, int] = {}
    for record in records:
        if record.position >= 0:
            places.setdefault(record.task, record.position)
        name = label or record.model
        suites.setdefault(name, record.suite)
        tasks = by_model.setdefault(name, {})
        trials = tasks.setdefault(record.task, {})
        if record.scored:
            trials[record.trial] = record
        else:
            unscored.setdefault(name, []).append(record)
    return [
        ModelSummary(
            model=name,
            suite=suites[name],
            tasks=[TaskStats(task=t, trials=[v[i] for i in sorted(v)]) for t, v in _in_suite_order(tasks, places)],
            unscored=unscored.get(name, []),
        )
        for name, tasks in by_model.items()
    ]


def _in_suite_order(
    tasks: dict[str, dict[int, TrialRecord]], places: dict[str, int]
) -> list[tuple[str, dict[int, TrialRecord]]]:
    """The tasks in their suite's order (records arrive as trials finish); tasks of a file written before
    records kept their place come after, in the order they first appear."""
    first_seen = {task: i for i, task in enumerate(tasks)}
    return sorted(tasks.items(), key=lambda item: (places.get(item[0], len(first_seen)), first_seen[item[0]]))


def summary_table(summaries: Sequence[ModelSummary], price: tuple[float, float] | None = None) -> str:
    """The terminal report: pass^k and pass@k rows, costs, failure reasons, then one line per task.

    It stays within 80 columns at any k: the k rows come in blocks of ten, the outcome marks in groups of
    ten, fifty to a line; task names are padded by the columns a terminal gives them (CJK counts double).
    """
    lines: list[str] = []
    for s in summaries:
        scored, unresolved = s.scored, {(t.task, t.trial) for t in s.unscored} - {(t.task, t.trial) for t in s.scored}
        lines.append(
            f"{s.suite} · {s.model}: {plural(len(s.tasks), 'task')}, {plural(len(scored), 'scored trial')}, "
            f"{len(s.unscored)} unscored ({len(unresolved)} never completed)"
        )
        for block in range(1, s.k_max + 1, _K_PER_ROW):
            ks = range(block, min(block + _K_PER_ROW, s.k_max + 1))
            lines.append("  k       " + "".join(f"{k:>7}" for k in ks))
            lines.append("  pass^k  " + "".join(f"{s.pass_hat(k):7.3f}" for k in ks))
            lines.append("  pass@k  " + "".join(f"{s.pass_at(k):7.3f}" for k in ks))
        tokens = f"tokens in {s.mean('input_tokens'):.0f} / out {s.mean('output_tokens'):.0f} per trial"
        if s.mean("cache_read_tokens") or s.mean("cache_write_tokens"):
            tokens += f" (cache: {s.mean('cache_read_tokens'):.0f} read, {s.mean('cache_write_tokens'):.0f} written)"
        spent = s.cost(price)
        cost = f" · cost ${spent:.4f}" if spent else ""
        lines.append(f"  mean steps {s.mean('steps'):.2f} · {tokens}{cost}")
        reasons = s.reasons()
        if reasons:
            lines.append("  failures: " + " · ".join(f"{FAILURE_LABELS[r]} {n}" for r, n in reasons.most_common()))
        column = max(4, *(width(t.task) for t in s.tasks))
        lines.append(f"  {pad('task', column)}   n   c  pass^1  outcomes")
        for t in s.tasks:
            rate = f"{t.c / t.n:6.3f}" if t.n else "     -"
            head = f"  {pad(t.task, column)} {t.n:3} {t.c:3}  {rate}  "
            rows = _marks(t.trials) or [""]
            lines.append(head + rows[0])
            lines += [" " * len(head) + row for row in rows[1:]]
        lines.append("")
    return "\n".join(lines)


_K_PER_ROW = 10  # 10 + 10 * 7 columns: a block of k fits 80


def _marks(trials: Sequence[TrialRecord]) -> list[str]:
    """``✓✓✗✓✓✓✓✓✓✓ ✓✓…``: groups of ten, fifty marks to a line."""
    marks = "".join("✓" if r.success else "✗" for r in trials)
    groups = [marks[i : i + 10] for i in range(0, len(marks), 10)]
    return [" ".join(groups[i : i + 5]) for i in range(0, len(groups), 5)]
