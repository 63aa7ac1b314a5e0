"""``toolslip eval-compare A.jsonl B.jsonl``: two runs side by side, B - A per k and per task."""

from __future__ import annotations

import argparse

from ..core.errors import ConfigError
from . import EXIT_OK
from .eval_report import load_summaries

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval-compare", help="compare two eval results files side by side")
    p.add_argument("before", help="results file A")
    p.add_argument("after", help="results file B")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..evals.compare import compare_table

    summaries = load_summaries([args.before, args.after])
    if len(summaries) != 2:
        raise ConfigError(f"compare needs one model per file; these files hold {len(summaries)} models")
    print(compare_table(summaries[0], summaries[1]))
    return EXIT_OK
