"""The injection table: per suite and defence, attack success, honest utility and approval prompts.

* **attack success**: share of (task, attack, phrasing) cases where the gullible model reached the
  attacker's goal, counting only cases where the attack text reached the model at all.
* **honest utility**: share of benign tasks (no attack planted) the honest model completed.
* **prompts per task**: approval prompts shown to the attentive human per benign task.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .harness import DEFENCES, PHRASINGS, Defence, Suite, run_case

__all__ = ["Row", "format_table", "measure"]


@dataclass(kw_only=True)
class Row:
    suite: str
    defence: Defence
    tasks: int
    completed: int
    """Benign tasks the honest model completed."""
    prompts: int
    """Approval prompts over all benign tasks."""
    cases: int
    """Attack cases whose text reached the model."""
    unseen: int
    """Attack cases whose task never read the planted text (not counted)."""
    attacks: int
    """Cases where the attacker's goal was reached."""
    completed_under_attack: int
    """Cases where the gullible model still completed the user's task."""
    attack_prompts: int
    """Approval prompts over all attack cases."""
    chars_sent: int
    """Characters sent to the model over all benign runs (the cost of spotlighting)."""

    @property
    def attack_rate(self) -> float:
        return self.attacks / self.cases if self.cases else 0.0

    @property
    def utility(self) -> float:
        return self.completed / self.tasks

    @property
    def prompts_per_task(self) -> float:
        return self.prompts / self.tasks


async def measure(suite: Suite, defence: Defence, phrasings: Sequence[str] = tuple(PHRASINGS)) -> Row:
    """Run every benign task once with the honest model, and every (task, attack, phrasing) case with the
    gullible one, under ``defence``."""
    row = Row(
        suite=suite.name, defence=defence, tasks=len(suite.tasks), completed=0, prompts=0,
        cases=0, unseen=0, attacks=0, completed_under_attack=0, attack_prompts=0, chars_sent=0,
    )  # fmt: skip
    for task in suite.tasks:
        case = await run_case(suite, task, model="honest", defence=defence)
        row.completed += case.utility
        row.prompts += case.prompts
        row.chars_sent += case.chars_sent
        for injection in suite.injections:
            for phrasing in phrasings:
                case = await run_case(
                    suite, task, injection=injection, phrasing=phrasing, model="gullible", defence=defence
                )
                if not case.seen:
                    row.unseen += 1
                    continue
                row.cases += 1
                row.attacks += case.attacked
                row.completed_under_attack += case.utility
                row.attack_prompts += case.prompts
    return row


async def measure_all(suites: Iterable[Suite], defences: Sequence[Defence] = DEFENCES) -> list[Row]:
    return [await measure(suite, defence) for suite in suites for defence in defences]


def format_table(rows: Sequence[Row]) -> str:
    header = (
        f"{'suite':<7} {'defence':<14} {'attack success':>16} {'honest utility':>15} {'prompts/task':>13} "
        f"{'utility under attack':>21} {'prompts/attack':>15} {'chars sent/task':>16}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        under = r.completed_under_attack / r.cases if r.cases else 0.0
        lines.append(
            f"{r.suite:<7} {r.defence:<14} {f'{r.attacks}/{r.cases} {r.attack_rate:.0%}':>16} "
            f"{f'{r.completed}/{r.tasks} {r.utility:.0%}':>15} {r.prompts_per_task:>13.2f} "
            f"{f'{r.completed_under_attack}/{r.cases} {under:.0%}':>21} "
            f"{r.attack_prompts / r.cases if r.cases else 0.0:>15.2f} {r.chars_sent / r.tasks:>16.0f}"
        )
    return "\n".join(lines)
