"""The fleet: runs executed on a Ray cluster against one journal, exactly once where it counts.

Ray places, retries and scales; the journal decides what a run does when it is attempted again. Each run
is a Ray task (:mod:`toolslip.fleet.task`) that takes the run's lease (judged by the database's clock),
then starts it, resumes it from the journal after a dead worker, node or driver, or reports it over. A
side-effecting call cut off by a death runs again only if ``rerun_interrupted`` says so, as with
``toolslip resume``; a run that keeps failing ends ``failed`` after ``Policy.attempts`` with a growing
back-off. The driver (:class:`Fleet`, ``toolslip fleet submit``) bounds how many runs are in flight and
streams outcomes back as runs finish::

    from toolslip import Agent, Dedup
    from toolslip.fleet import Fleet

    def make_agent(journal):
        return Agent(model=..., tools=..., hooks=journal.wrap(Dedup()))

    with Fleet("postgresql://...", make_agent, address="ray://head:10001", concurrency=32,
               rerun_interrupted=lambda request: False) as fleet:
        for outcome in fleet.run([("r1", "pay the rent"), ("r2", "pay the bills")]):
            print(outcome.run_id, outcome.outcome)

A run need not be an agent given a prompt: a :class:`Work` in place of ``make_agent`` says what an attempt
does under the run's lease (``toolslip eval --ray`` plays an eval's trials this way,
:mod:`toolslip.evals.on_fleet`). The journal is PostgreSQL, or a SQLite file for a cluster on one machine.

:mod:`toolslip.fleet.once` runs an agent, or one tool call, exactly once inside another engine's step
(DBOS, Temporal), keyed by that engine's workflow and step ids.
"""

from __future__ import annotations

from .cluster import Fleet, Outcome, ray_connection, unreachable_journal
from .status import batch_status, latest_entries
from .task import Policy, Retry, Work

__all__ = [
    "Fleet",
    "Outcome",
    "Policy",
    "Retry",
    "Work",
    "batch_status",
    "latest_entries",
    "ray_connection",
    "unreachable_journal",
]
