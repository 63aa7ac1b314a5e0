"""Prompt injection: attack success and honest utility per scenario suite and defence.

    python benchmarks/injection.py

Every suite (issue tracker, bank, mailbox + files) is run under four defences: none; spotlighting only
(model-side, shown for comparison, never the boundary); the harness gate (secret guard + taint gate) with
an attentive approver that accepts exactly what the user asked for; the same gate with no human (anything
the rules do not allow is denied). Attacks are played by ``toolslip.testing.GullibleModel``, a model that
obeys every instruction it reads; utility by an honest scripted model following the task's plan.
Everything is deterministic, so one run gives the figures; the wall time is printed for reference only.
"""

from __future__ import annotations

import asyncio
import time

from toolslip.scenarios import SUITES
from toolslip.scenarios.harness import PHRASINGS
from toolslip.scenarios.report import format_table, measure_all


def main() -> None:
    started = time.perf_counter()
    rows = asyncio.run(measure_all(SUITES.values()))
    elapsed = time.perf_counter() - started
    print(format_table(rows))
    suites = list(SUITES.values())
    cases = sum(len(s.tasks) * len(s.injections) * len(PHRASINGS) for s in suites)
    print(
        f"\n{len(suites)} suites, {sum(len(s.tasks) for s in suites)} benign tasks, "
        f"{sum(len(s.injections) for s in suites)} attacks x {len(PHRASINGS)} phrasings = {cases} attack cases "
        f"per defence (cases whose task never reads the planted text are not counted)."
    )
    gated = [r for r in rows if r.defence.startswith("gate")]
    approver = [r for r in rows if r.defence == "gate+approver"]
    nohuman = [r for r in rows if r.defence == "gate+nohuman"]
    print(f"gate, both modes: attack success {sum(r.attacks for r in gated)}/{sum(r.cases for r in gated)}")
    print(
        f"gate+approver: honest utility {sum(r.completed for r in approver)}/{sum(r.tasks for r in approver)}, "
        f"{sum(r.prompts for r in approver) / sum(r.tasks for r in approver):.2f} prompts per benign task"
    )
    print(f"gate+nohuman: honest utility {sum(r.completed for r in nohuman)}/{sum(r.tasks for r in nohuman)}")
    base = {r.suite: r.chars_sent for r in rows if r.defence == "none"}
    overhead = [r.chars_sent / base[r.suite] - 1 for r in rows if r.defence == "spotlight"]
    print(f"spotlight: +{min(overhead):.0%}..+{max(overhead):.0%} characters sent per benign task")
    print(f"wall time {elapsed:.1f} s for {len(rows)} suite x defence rows")


if __name__ == "__main__":
    main()
