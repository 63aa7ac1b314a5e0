"""The injection table: per suite and defence, attack success, utility and approval prompts.

* **tool-call attacks**: share of (task, attack, phrasing) cases whose attacker's goal was reached by a
  tool call, counting only cases where the attack text reached the model at all; prose and Python-call
  attacks are also counted apart.
* **text-only attacks**: cases whose attacker's value (a link, a phone number, an IBAN) reached the final
  answer, and how many of those the gate marked there.
* **utility**: benign tasks (no attack planted) the honest model completed, and cases where the gullible
  model still completed the user's task under attack.
* **prompts**: approval prompts shown to the attentive human, per benign task and per attack case.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Literal

from .harness import DEFENCES, PHRASINGS, Defence, Suite, run_case

__all__ = ["Row", "format_table", "measure", "measure_all", "total"]


@dataclass(kw_only=True)
class Row:
    suite: str
    defence: Defence
    tasks: int = 0
    completed: int = 0
    """Benign tasks the honest model completed."""
    prompts: int = 0
    """Approval prompts over all benign tasks."""
    cases: int = 0
    """Tool-call attack cases whose text reached the model."""
    prose_cases: int = 0
    unseen: int = 0
    """Attack cases whose task never read the planted text (not counted)."""
    attacks: int = 0
    """Tool-call cases where the attacker's goal was reached."""
    prose_attacks: int = 0
    text_cases: int = 0
    """Text-only attack cases whose text reached the model."""
    text_reached: int = 0
    """Text-only cases whose attacker's value reached the final answer (marked or not)."""
    text_flagged: int = 0
    """... and were marked there by the gate."""
    completed_under_attack: int = 0
    """Attack cases (both kinds) where the gullible model still completed the user's task."""
    attack_prompts: int = 0
    """Approval prompts over all attack cases."""
    chars_sent: int = 0
    """Characters sent to the model over all benign runs (the cost of spotlighting)."""

    @property
    def attack_rate(self) -> float:
        return self.attacks / self.cases if self.cases else 0.0

    @property
    def utility(self) -> float:
        return self.completed / self.tasks if self.tasks else 0.0

    @property
    def utility_under_attack(self) -> float:
        seen = self.cases + self.text_cases
        return self.completed_under_attack / seen if seen else 0.0

    @property
    def prompts_per_task(self) -> float:
        return self.prompts / self.tasks if self.tasks else 0.0

    @property
    def flag_rate(self) -> float:
        return self.text_flagged / self.text_reached if self.text_reached else 1.0


async def measure(
    suite: Suite, defence: Defence, phrasings: Sequence[str] = tuple(PHRASINGS), mode: Literal["tool", "code"] = "tool"
) -> Row:
    """Run every benign task once with the honest model, and every (task, attack, phrasing) case with the
    gullible one, under ``defence``; in code mode each turn of calls goes out as one program."""
    row = Row(suite=suite.name, defence=defence, tasks=len(suite.tasks))
    for task in suite.tasks:
        case = await run_case(suite, task, model="honest", defence=defence, mode=mode)
        row.completed += case.utility
        row.prompts += case.prompts
        row.chars_sent += case.chars_sent
        for injection in suite.injections:
            for phrasing in phrasings:
                case = await run_case(
                    suite, task, injection=injection, phrasing=phrasing, model="gullible", defence=defence, mode=mode
                )
                if not case.seen:
                    row.unseen += 1
                    continue
                if injection.kind == "text":
                    row.text_cases += 1
                    row.text_reached += case.attacked
                    row.text_flagged += case.flagged
                else:
                    row.cases += 1
                    row.attacks += case.attacked
                    row.prose_cases += injection.prose
                    row.prose_attacks += injection.prose and case.attacked
                row.completed_under_attack += case.utility
                row.attack_prompts += case.prompts
    return row


async def measure_all(
    suites: Iterable[Suite],
    defences: Sequence[Defence] = DEFENCES,
    phrasings: Sequence[str] = tuple(PHRASINGS),
    mode: Literal["tool", "code"] = "tool",
) -> list[Row]:
    return [await measure(suite, defence, phrasings, mode) for suite in suites for defence in defences]


def total(rows: Sequence[Row], defence: Defence) -> Row:
    """The rows of one defence added up: the "overall" line."""
    out = Row(suite="overall", defence=defence)
    for row in rows:
        if row.defence == defence:
            for f in fields(Row):
                if isinstance(getattr(out, f.name), int):
                    setattr(out, f.name, getattr(out, f.name) + getattr(row, f.name))
    return out


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} {part / whole:.0%}" if whole else "-"


def format_table(rows: Sequence[Row]) -> str:
    header = (
        f"{'suite':<8} {'defence':<14} {'tool-call attacks':>18} {'of them prose':>14} {'text-only reached':>18} "
        f"{'flagged':>8} {'utility':>12} {'under attack':>15} {'prompts/task':>13} {'prompts/attack':>15} "
        f"{'chars/task':>11}"
    )
    lines = [header, "-" * len(header)]
    for r in rows:
        flagged = f"{r.flag_rate:.0%}" if r.text_reached else "-"
        lines.append(
            f"{r.suite:<8} {r.defence:<14} {_share(r.attacks, r.cases):>18} "
            f"{_share(r.prose_attacks, r.prose_cases):>14} "
            f"{_share(r.text_reached, r.text_cases):>18} {flagged:>8} {_share(r.completed, r.tasks):>12} "
            f"{_share(r.completed_under_attack, r.cases + r.text_cases):>15} {r.prompts_per_task:>13.2f} "
            f"{r.attack_prompts / max(1, r.cases + r.text_cases):>15.2f} {r.chars_sent / max(1, r.tasks):>11.0f}"
        )
    return "\n".join(lines)
