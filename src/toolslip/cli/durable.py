"""Command-line options for exactly-once runs, shared by ``toolslip run`` and ``toolslip resume``.

``add_run_options(parser)`` adds ``--journal``, ``--no-journal``, ``--approve``, ``--no-dedup``,
``--max-repeats`` and ``--serial``; ``hooks_from_args(args)`` turns them into the hooks to give the agent,
in the order that matters: journal replay, dedup, approval, the repeated-call guard, journal record.
``toolslip resume`` adds ``--rerun-interrupted``: whether a side effect cut off by the interruption runs
again is a different question from approving new calls, with its own answer.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..agent.hooks import Hook
from ..durable.approval import Approval, Approver, terminal_approver
from ..durable.dedup import Dedup
from ..durable.journal import Journal
from ..durable.repeats import RepeatGuard
from ..durable.serial import SerialSideEffects
from .argtypes import at_least

__all__ = [
    "JOURNAL_HELP",
    "add_rerun_option",
    "add_run_options",
    "approver_from_args",
    "gate_approver_from_args",
    "hooks_from_args",
    "is_model_file",
    "journal_from_args",
    "rerun_approver_from_args",
]

_APPROVERS: dict[str, Approver | None] = {
    "ask": terminal_approver,
    "yes": lambda request: True,
    "no": lambda request: False,
    "pause": None,
}


JOURNAL_HELP = (
    "the run journal: a SQLite file, or a postgresql:// URL that many machines share "
    "(default $TOOLSLIP_JOURNAL, else $TOOLSLIP_HOME/runs.sqlite)"
)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("side effects")
    group.add_argument("--journal", metavar="PATH|URL", help=JOURNAL_HELP)
    group.add_argument("--no-journal", action="store_true", help="do not record the run (it cannot be resumed)")
    group.add_argument(
        "--approve",
        choices=sorted(_APPROVERS),
        help="side-effecting calls: ask on the terminal, approve all, refuse all, or pause the run to decide "
        "later with `toolslip resume` (default: ask on a terminal, else pause)",
    )
    group.add_argument(
        "--no-dedup",
        action="store_true",
        help="run identical side-effecting calls each time instead of answering repeats from the first result",
    )
    group.add_argument(
        "--max-repeats",
        type=at_least(0),
        default=0,
        metavar="N",
        help="identical calls answered from the earlier result before the model is made to answer "
        "(default 0: the step after the first repeat must answer)",
    )
    group.add_argument(
        "--serial",
        action="store_true",
        help="ask the model for one call per turn when side-effecting tools are offered",
    )


def add_rerun_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rerun-interrupted",
        choices=sorted(_APPROVERS),
        help="side-effecting calls cut off by the interruption (they may already have happened): ask on the "
        "terminal, run them again, do not, or pause (default: ask on a terminal, else pause)",
    )


def approver_from_args(args: argparse.Namespace) -> Approver | None:
    """Who approves new side-effecting calls (``--approve``)."""
    return _approver(args.approve)


def gate_approver_from_args(args: argparse.Namespace) -> Approver | None:
    """Who answers the injection gate's questions (``--gate``): ``--approve``, except that ``--approve yes``,
    a blanket approval of side effects, never approves a call the gate found driven by untrusted output
    (that call is asked about on a terminal and paused otherwise, as with no ``--approve`` at all)."""
    return _approver(None if args.approve == "yes" else args.approve)


def rerun_approver_from_args(args: argparse.Namespace) -> Approver | None:
    """Who decides whether an interrupted side effect runs again (``--rerun-interrupted``): never ``--approve``."""
    return _approver(getattr(args, "rerun_interrupted", None))


def _approver(choice: str | None) -> Approver | None:
    """The approver ``choice`` names; by default ask on a terminal and pause otherwise (CI, cron)."""
    return _APPROVERS[choice or ("ask" if sys.stdin.isatty() else "pause")]


def journal_from_args(args: argparse.Namespace, meta: Mapping[str, Any] | None = None) -> Journal | None:
    """The journal the options name, or ``None`` with ``--no-journal``."""
    if args.no_journal:
        return None
    return Journal(args.journal, approver=rerun_approver_from_args(args), meta=meta or _meta(args))


def hooks_from_args(args: argparse.Namespace, journal: Journal | None = None) -> list[Hook]:
    """Journal replay, dedup, approval, journal record (and the serial hook with ``--serial``)."""
    journal = journal if journal is not None else journal_from_args(args)
    inner: list[Hook] = [] if args.no_dedup else [Dedup()]
    inner.append(Approval(approver_from_args(args)))
    if args.serial:
        inner.append(SerialSideEffects())
    inner.append(RepeatGuard(max_repeats=args.max_repeats))
    return journal.wrap(*inner) if journal is not None else inner


def is_model_file(spec: str | None) -> bool:
    """True for ``path/to/file.py:NAME``: a Model object in a Python file (scripted models for tests, demos)."""
    path, sep, _ = (spec or "").rpartition(":")
    return bool(sep) and path.endswith(".py")


def _meta(args: argparse.Namespace) -> dict[str, Any]:
    """What `toolslip resume` and `run --continue` need to rebuild the agent: the model string, tools files
    (``tools_file``, the first, for journals written before several could be given), the ``--mcp`` servers,
    step limit, the ``--temperature`` and the ``--output-schema`` and ``--output-mode`` of a typed run."""
    tools = getattr(args, "tools", None)
    files = [tools] if isinstance(tools, str) else list(tools or ())
    model = getattr(args, "model", None)
    if model is not None and is_model_file(model):  # resume may run in another folder
        path, _, name = model.rpartition(":")
        model = f"{os.path.abspath(path)}:{name}"
    meta = {
        "model": model,
        "tools_file": os.path.abspath(files[0]) if files else None,
        "tools_files": [os.path.abspath(f) for f in files],
        "max_steps": getattr(args, "max_steps", None),
    }
    if getattr(args, "temperature", None) is not None:  # resumed as it was asked: sampled at this temperature
        meta["temperature"] = args.temperature
    if getattr(args, "code", False):  # a program's calls are replayed by running the same program again
        meta["mode"] = "code"
    if getattr(args, "mcp", None):  # a follow-up (run -c) starts the same servers: its history calls their tools
        meta["mcp"] = list(args.mcp)
    output_schema = getattr(args, "output_schema", None)
    if output_schema:  # a typed run resumes typed: the same answer type, asked for the same way
        path, _, name = output_schema.rpartition(":")
        typed = is_model_file(output_schema)  # FILE.py:NAME, the same shape as a model file's
        meta["output_schema"] = f"{os.path.abspath(path)}:{name}" if typed else os.path.abspath(output_schema)
        meta["output_mode"] = getattr(args, "output_mode", None)
    return meta
