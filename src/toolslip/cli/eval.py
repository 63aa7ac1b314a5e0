"""``toolslip eval SUITE.py --model M -k 8``: run every task k times and report pass^1 ... pass^k."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys

from . import EXIT_OK
from .eval_report import check_report_paths, parse_price, write_reports

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
    p.add_argument("-k", type=int, default=8, help="trials per task (default 8)")
    p.add_argument("--concurrency", type=int, default=8, help="trials running at once (default 8)")
    p.add_argument("--out", help="results file (JSON Lines); trials are appended as they finish")
    p.add_argument("--resume", action="store_true", help="keep the trials already in --out, run the missing ones")
    p.add_argument("--seed", type=int, default=0, help="base seed; trial i of a task always gets the same seed")
    p.add_argument("--retries", type=int, default=2, help="reruns of a trial after a provider error or crash")
    p.add_argument("--ray", metavar="ADDRESS", help="run trials on a Ray cluster; 'local' starts one here")
    p.add_argument("--report", help="write a self-contained HTML report here")
    p.add_argument("--png", help="write the pass^k curve and grid as a PNG (needs toolslip[report])")
    p.add_argument("--price", type=parse_price, help="IN,OUT dollars per million tokens, to show cost")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..evals import evaluate, load_suite, resolve_eval_model, summarize, summary_table

    check_report_paths(args.report, args.png)
    suite = load_suite(args.suite)
    models = [resolve_eval_model(m) for m in args.model]
    with contextlib.ExitStack() as stack:
        executor = None
        if args.ray:
            from ..evals.ray_backend import ray_executor

            executor = stack.enter_context(ray_executor(suite, args.ray))
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
            )
        )
    summaries = summarize(records)
    print(summary_table(summaries, args.price))
    write_reports(summaries, args.report, args.png)
    if args.report:
        print(f"report: {args.report}", file=sys.stderr)
    return EXIT_OK
