"""``toolslip runs``: the runs in the journal, newest first, with their status and size; ``--prune``.

Statuses: ``running`` (a live process holds the run's lease), ``interrupted`` (Ctrl-C, or the process was
killed: it can be resumed), ``failed`` (the model call failed; the error is shown), ``paused`` (waiting for
decisions), and the finished ones (``completed``, ``max_steps``...). ``--prune`` removes finished runs
(``--before DATE``, ``--keep N``); runs that can still be resumed are kept. The journal is a SQLite file or
a ``postgresql://`` URL (``--journal``, else ``$TOOLSLIP_JOURNAL``).
"""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from ..core._display import dollars, local_time
from ..durable.stores import LeasedStore
from ..durable.stores import open_store as _open
from . import EXIT_OK, UsageError
from .argtypes import at_least
from .durable import JOURNAL_HELP

__all__ = ["human_size", "open_store", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("runs", help="list the runs in the journal, newest first; --prune old ones")
    parser.add_argument("--journal", metavar="PATH|URL", help=JOURNAL_HELP)
    parser.add_argument("--limit", type=at_least(1), default=20, help="how many runs to show (default 20)")
    parser.add_argument("--prune", action="store_true", help="remove finished runs (with --before and/or --keep)")
    parser.add_argument("--before", metavar="DATE", help="with --prune: finished runs last active before DATE")
    parser.add_argument("--keep", type=at_least(0), metavar="N", help="with --prune: keep the N newest finished runs")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if (args.before is not None or args.keep is not None) and not args.prune:
        raise UsageError("--before and --keep choose what --prune removes; add --prune")
    if args.prune:  # the command line is checked before the journal is opened
        if args.before is None and args.keep is None:
            raise UsageError("--prune needs --before DATE (e.g. 2026-01-31) and/or --keep N")
        before = _date(args.before) if args.before is not None else None
        return _prune(open_store(args.journal), before, args.keep)
    store = open_store(args.journal, read_only=True)
    runs = store.runs(args.limit)
    if not runs:
        print("no runs recorded yet")
    for run in runs:
        when = local_time(run.started_at)
        prompt = run.prompt.replace("\n", " ")
        prompt = prompt if len(prompt) <= 60 else prompt[:57] + "..."
        size = human_size(run.size)
        cost = dollars(run.cost) if run.cost is not None else "-"
        line = f"{run.run_id}  {when}  {run.status:<17}  steps {run.steps:<3}  {size:>8}  {cost:>9}  {run.model}"
        print(f"{line}  {prompt}")
        if run.message:
            print(f"    {run.message}")
    print(f"journal {store.path}: {human_size(store.file_size())} on disk")
    return EXIT_OK


def _prune(store: LeasedStore, before: float | None, keep: int | None) -> int:
    report = store.prune(before=before, keep=keep)
    n = len(report.removed)
    sizes = f"{human_size(report.bytes_before)} -> {human_size(report.bytes_after)}"
    print(f"removed {n} finished run{'s' * (n != 1)} from {store.path} ({sizes})")
    return EXIT_OK


def _date(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()  # local time unless it says otherwise
    except ValueError:
        raise UsageError(f"--before {text!r} is not a date; write 2026-01-31 or 2026-01-31T18:00") from None


def human_size(n: int) -> str:
    """``512 B``, ``12.3 kB``, ``45.1 MB`` (decimal units)."""
    if n < 1000:
        return f"{n} B"
    return f"{n / 1000:.1f} kB" if n < 1_000_000 else f"{n / 1_000_000:.1f} MB"


def open_store(location: str | None, *, read_only: bool = False) -> LeasedStore:
    """The journal at ``location`` (default location otherwise); a missing file is an error, not a new journal.

    ``read_only`` for the commands that only look: they then read a journal in a read-only folder too.
    """
    return _open(location, existing=True, read_only=read_only)
