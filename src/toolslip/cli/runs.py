"""``toolslip runs``: the runs in the journal, newest first."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..journal import SqliteStore, default_journal_path
from . import EXIT_OK
from .argtypes import at_least

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("runs", help="list the runs in the journal, newest first")
    parser.add_argument("--journal", metavar="PATH", help=f"the run journal (default {default_journal_path()})")
    parser.add_argument("--limit", type=at_least(1), default=20, help="how many runs to show (default 20)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    store = open_store(args.journal)
    runs = store.runs(args.limit)
    if not runs:
        print("no runs recorded yet")
    for run in runs:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run.started_at))
        prompt = run.prompt.replace("\n", " ")
        prompt = prompt if len(prompt) <= 60 else prompt[:57] + "..."
        print(f"{run.run_id}  {when}  {run.status:<10}  steps {run.steps:<3}  {run.model}  {prompt}")
    return EXIT_OK


def open_store(path: str | None) -> SqliteStore:
    """The journal at ``path`` (default location otherwise); a missing file is an error, not a new journal."""
    file = Path(path) if path else default_journal_path()
    if not file.is_file() and not file.is_dir():
        raise ConfigError(f"no run journal at {str(file)!r}; runs are recorded there by `toolslip run`")
    return SqliteStore(file)
