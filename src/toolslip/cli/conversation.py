"""What ``run`` and ``chat`` share to carry a conversation on: the question and tools files on the command
line, a question from stdin, budget options, and the earlier run a follow-up continues.

A follow-up is a new run whose transcript starts with the earlier run's whole transcript, read back from
the journal (:func:`toolslip.durable.transcript.transcript_from_entries`), so it works after the process
that ran it is gone, even after it was killed. It records ``continues: RUN_ID`` in its start entry.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from ..agent.limits import Limits
from ..core.errors import ConfigError
from ..core.messages import Message
from ..durable.journal_store import JournalStore, SqliteStore
from ..durable.transcript import transcript_from_entries
from . import UsageError

__all__ = [
    "LAST",
    "Earlier",
    "add_limit_options",
    "continue_with",
    "earlier_run",
    "limits_from_args",
    "read_question",
    "split_items",
]

LAST = ""
"""``--continue`` given without a run id: the newest run in the journal."""


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("budgets (a run that would pass one stops with its name, exit code 4)")
    group.add_argument("--max-tokens-total", type=_count, metavar="N", help="input plus output tokens of the run")
    group.add_argument("--max-input-tokens", type=_count, metavar="N", help="input tokens over all model calls")
    group.add_argument("--max-output-tokens", type=_count, metavar="N", help="output tokens over all model calls")
    group.add_argument("--max-tool-calls", type=_count, metavar="N", help="tool calls executed")
    group.add_argument(
        "--max-cost", type=_dollars, metavar="USD", help="US dollars at the model's list price (genai-prices)"
    )


def limits_from_args(args: argparse.Namespace) -> Limits | None:
    limits = Limits(
        input_tokens=args.max_input_tokens,
        output_tokens=args.max_output_tokens,
        total_tokens=args.max_tokens_total,
        tool_calls=args.max_tool_calls,
        cost=args.max_cost,
    )
    return None if limits == Limits() else limits


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is below 0")
    return value


def _dollars(text: str) -> float:
    try:
        value = float(text.removeprefix("$"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars such as 0.50") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars of at least 0")
    return value


def split_items(items: list[str], continued: str | None) -> tuple[list[str], str, str | None]:
    """``(tools files, question, run id to continue)`` from ``[TOOLS.py ...] QUESTION`` and ``--continue``.

    ``-c`` takes an optional run id, so ``-c "why?"`` hands it the question and ``-c tools.py`` a tools
    file; those go back where they belong, and the newest run is continued.
    """
    items = list(items)
    if continued and (continued.endswith(".py") or not items):
        items.insert(0, continued)
        continued = LAST
    if not items:
        raise UsageError("the following arguments are required: [TOOLS.py] QUESTION (- reads the question from stdin)")
    *tools, question = items
    if len(items) == 2 and question.endswith(".py") and not tools[0].endswith(".py"):
        raise UsageError(f"the tools file comes first: toolslip run {question} {shlex.quote(tools[0])}")
    stray = [t for t in tools if not t.endswith(".py") and not os.path.isfile(t)]  # words of an unquoted question
    if stray:
        raise UsageError(f"{stray[0]!r} is not a tools file (*.py); quote the question so it is one argument")
    if question.endswith(".py") and not question.count(" "):
        raise UsageError(f"no question: {question} looks like the tools file; give the question after it")
    question = read_question(question)
    return tools, question, continued


def read_question(text: str) -> str:
    """The question as given, or stdin's whole text for ``-``; an empty one is a UsageError."""
    if text == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("the question is - (read stdin), but stdin is a terminal; pipe the question in")
        text = sys.stdin.read()
    if not text.strip():
        raise UsageError("the question is empty; give the question after the tools file, in quotes")
    return text


@dataclass(kw_only=True)
class Earlier:
    """The run a follow-up continues: its id, what it was started with, and its whole transcript."""

    run_id: str
    meta: dict[str, Any] = field(default_factory=dict)
    messages: list[Message] = field(default_factory=list)


def continue_with(args: argparse.Namespace, earlier: Earlier) -> str | None:
    """Take what ``args`` leaves out from the run a follow-up continues: its tools files, ``--mcp`` servers
    and model. Returns why the model is what it is when it is the earlier run's (``None`` otherwise), for
    the ``model: NAME (WHY)`` line: "given" would say the user typed it."""
    meta = earlier.meta
    args.tools = args.tools or meta.get("tools_files") or ([meta["tools_file"]] if meta.get("tools_file") else [])
    args.mcp = getattr(args, "mcp", None) or list(meta.get("mcp") or ())
    if args.model or not meta.get("model"):
        return None
    args.model = meta["model"]
    return f"the model of run {earlier.run_id}, which this continues"


def earlier_run(store: JournalStore, run_id: str) -> Earlier:
    """Run ``run_id`` (the newest run for :data:`LAST`) as a follow-up needs it; a paused run must be decided
    first, since a follow-up would leave its held calls unanswered."""
    where = f" in {store.path}" if isinstance(store, SqliteStore) else ""
    if run_id == LAST:
        newest = store.runs(1)
        if not newest:
            raise ConfigError(f"there is no earlier run to continue{where}; ask a first question without --continue")
        run_id = newest[0].run_id
    entries = store.entries(run_id)
    messages = transcript_from_entries(entries)
    if messages is None:
        raise ConfigError(f"no run {run_id!r}{where}; `toolslip runs` lists the runs it holds")
    last = entries[-1]
    if last.kind == "finish" and last.data.get("stop_reason") == "paused":
        raise ConfigError(
            f"run {run_id} is paused waiting for decisions; decide them with `toolslip resume {run_id}` first"
        )
    start = next(e for e in entries if e.kind == "start")
    return Earlier(run_id=run_id, meta=dict(start.data.get("meta") or {}), messages=messages)
