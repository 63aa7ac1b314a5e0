"""``toolslip eval SUITE.py --model M -k 8``: run every task k times and report pass^1 ... pass^k.

It exits 1 when trials could not be scored (provider errors or crashes left after the retries), naming
how many and the first error, since a pass^k over the trials that happened to work is not the measure
asked for; and with ``--fail-under X`` when a model's pass^k is under X, so an eval can gate CI.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core._display import plural
from . import EXIT_ERROR, EXIT_OK, UsageError
from .argtypes import at_least, check_model, fraction
from .eval_report import check_report_paths, parse_price, write_reports

if TYPE_CHECKING:
    from ..evals.summary import ModelSummary
    from ..evals.trial import Mode, TrialModel

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", help="measure reliability: pass^k of a suite of tasks")
    p.add_argument("suite", help="a Python file defining a toolslip.evals.Suite (or Task objects)")
    p.add_argument(
        "--model",
        action="append",
        required=True,
        help="model to evaluate; repeat to compare models. "
        "Offline: reference, flaky:P (succeeds with probability P), flaky:P:E (E = provider error rate)",
    )
    p.add_argument("-k", type=at_least(1), default=8, help="trials per task (default 8)")
    p.add_argument("--concurrency", type=at_least(1), default=8, help="trials running at once (default 8)")
    p.add_argument("--out", help="results file (JSON Lines); trials are appended as they finish")
    p.add_argument("--resume", action="store_true", help="keep the trials already in --out, run the missing ones")
    p.add_argument("--seed", type=int, default=0, help="base seed; trial i of a task always gets the same seed")
    p.add_argument(
        "--retries", type=at_least(0), default=2, help="reruns of a trial after a provider error or crash (default 2)"
    )
    p.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play each trial as a run of the fleet on a Ray cluster; 'local' starts one here",
    )
    p.add_argument(
        "--journal",
        metavar="LOCATION",
        help="journal every trial as a run (SQLite file or postgresql:// URL), grouped as one report that "
        "`toolslip console --journal LOCATION` shows under /evals; with --ray it is the fleet's journal "
        "(postgresql://... for a cluster with nodes on other machines; default with --ray: a temporary SQLite "
        "file, for a cluster on this machine)",
    )
    p.add_argument(
        "--code",
        action="store_true",
        help="code mode: every trial's model answers with a program that calls the tools (see docs/code-mode.md)",
    )
    p.add_argument("--report", help="write a self-contained HTML report here")
    p.add_argument("--png", help="write the pass^k curve and grid as a PNG (needs toolslip[report])")
    p.add_argument("--price", type=parse_price, help="IN,OUT dollars per million tokens, to show cost")
    p.add_argument(
        "--fail-under",
        type=fraction,
        metavar="PASS_K",
        help="exit 1 when a model's pass^k (k = -k) is under PASS_K, e.g. 0.8; for CI",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..evals import evaluate, load_suite, summarize, summary_table
    from ..evals.about import run_info

    check_report_paths(args.report, args.png)
    suite = load_suite(args.suite)  # may register a provider
    models = _models(args.model)
    mode: Mode = "code" if args.code else "tool"
    about = run_info(suite, models, k=args.k, seed=args.seed, retries=args.retries, command=args.argv, mode=mode)
    from ..evals.journaled import EvalJournal, new_report_id

    report = new_report_id()
    journal = None  # the trials' runs in the journal: the fleet's own with --ray, else journaled in this process
    with contextlib.ExitStack() as stack:
        executor = None
        if args.ray:
            from ..evals.on_fleet import fleet_executor

            executor = stack.enter_context(
                fleet_executor(suite, args.ray, args.journal, concurrency=args.concurrency, report=report)
            )
        elif args.journal:
            from ..durable.stores import open_store

            open_store(args.journal).close()  # a bad location is one sentence now, not a crash in every trial
            journal = EvalJournal(args.journal, report)
        if args.journal:
            about["report"] = report
        records = asyncio.run(
            evaluate(
                suite,
                models,
                k=args.k,
                concurrency=args.concurrency,
                seed=args.seed,
                retries=args.retries,
                out=args.out,
                resume=args.resume,
                executor=executor,
                about=about,
                journal=journal,
                mode=mode,
            )
        )
    summaries = summarize(records)
    print(summary_table(summaries, args.price))
    write_reports(summaries, args.report, args.png, [about])
    if args.report:
        print(f"report: {args.report}", file=sys.stderr)
    if args.journal:
        print(f"journaled as report {report}: /evals/{report} in toolslip console", file=sys.stderr)
    problems = [*_unscored(summaries), *_under(summaries, args.k, args.fail_under)]
    for problem in problems:
        print(f"toolslip eval: {problem}", file=sys.stderr)
    return EXIT_ERROR if problems else EXIT_OK


def _models(specs: Sequence[str]) -> list[TrialModel]:
    """The models to evaluate; a malformed string (``flaky:x``, ``gpt-4o``) is a usage error."""
    from ..core.errors import ConfigError
    from ..evals import resolve_eval_model

    models = []
    for spec in specs:
        offline = spec == "reference" or spec.startswith("flaky:")
        if not offline:
            check_model(spec)
        try:
            models.append(resolve_eval_model(spec))
        except ConfigError as exc:
            if offline:
                raise UsageError(str(exc)) from None
            raise
    return models


def _unscored(summaries: Sequence[ModelSummary]) -> list[str]:
    """One sentence per model with trials that never got a score, quoting the first error."""
    out = []
    for s in summaries:
        scored = {(t.task, t.trial) for t in s.scored}
        failed = [t for t in s.unscored if (t.task, t.trial) not in scored]
        never = {(t.task, t.trial) for t in failed}
        if never:
            first = failed[0]
            cause = first.detail.strip().splitlines()[-1] if first.detail.strip() else first.reason
            out.append(
                f"{plural(len(never), 'trial')} of {s.model} could not be scored "
                f"({FAILURE_WORDS.get(first.reason, first.reason)} after the retries); the first "
                f"(task {first.task}, trial {first.trial}): {cause}"
            )
    return out


def _under(summaries: Sequence[ModelSummary], k: int, threshold: float | None) -> list[str]:
    if threshold is None:
        return []
    out = []
    for s in summaries:
        reached = min(k, s.k_max)
        value = s.pass_hat(reached) if reached else 0.0
        if value < threshold:
            out.append(f"pass^{reached} of {s.model} is {value:.3f}, under --fail-under {threshold:g}")
    return out


FAILURE_WORDS = {"provider_error": "provider errors", "crash": "crashes"}
