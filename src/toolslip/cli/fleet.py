"""``toolslip fleet submit|status``: a batch of runs on a Ray cluster, over one journal.

``submit PROMPTS.jsonl TOOLS.py --model M --journal postgresql://...`` runs each line's prompt (a JSON
string, or an object with ``prompt`` and optionally ``id``) as a run on the cluster at ``--address``
(default: a local Ray on this machine), prints a progress line on stderr and one JSON outcome per run
(``--out FILE``, else stdout) as runs finish. Run ids are ``BATCH-NNNNN`` (``--batch``, default the
prompts file's name) unless a line gives its own, so the same command run again after its driver was
killed reports the runs that are over and finishes the rest from the journal. ``status [BATCH]`` counts
the batch's runs by state, from the journal (and the cluster's nodes, with ``--address``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ..agent.loop import Agent
from ..core.errors import ConfigError
from ..durable.approval import Approval
from ..durable.dedup import Dedup
from ..durable.journal import Journal
from ..durable.stores import default_location
from . import EXIT_OK, EXIT_STOPPED, UsageError
from .argtypes import at_least
from .durable import _APPROVERS, JOURNAL_HELP
from .files import load_tools_files

__all__ = ["CliAgent", "read_prompts", "register"]

_CHOICES = ("yes", "no", "pause")  # nobody is at a Ray worker's terminal to ask


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("fleet", help="run a batch of prompts on a Ray cluster over a PostgreSQL journal")
    sub = parser.add_subparsers(dest="fleet_command", metavar="submit|status", required=True)
    submit = sub.add_parser("submit", help="run every prompt of a JSONL file as a run on the cluster")
    submit.add_argument("prompts", metavar="PROMPTS.jsonl", help="one prompt a line: a JSON string or {prompt, id}")
    submit.add_argument("tools", metavar="TOOLS.py", nargs="+", help="the tools file(s) the workers load")
    submit.add_argument("--model", required=True, metavar="MODEL", help="model string, or path/to/file.py:NAME")
    _journal_and_address(submit)
    submit.add_argument("--batch", metavar="NAME", help="run ids are NAME-00001... (default: the prompts file's name)")
    submit.add_argument("--out", metavar="FILE", help="write the outcomes (JSON lines) here instead of stdout")
    submit.add_argument("--concurrency", type=at_least(1), default=8, help="runs in flight at once (default 8)")
    submit.add_argument("--attempts", type=at_least(1), default=3, help="failed attempts before a run is failed")
    submit.add_argument("--max-steps", type=at_least(1), default=8, help="step limit of each run (default 8)")
    submit.add_argument("--approve", choices=_CHOICES, default="pause", help="new side-effecting calls (default pause)")
    submit.add_argument(
        "--rerun-interrupted",
        choices=_CHOICES,
        default="pause",
        help="side-effecting calls cut off by a dead worker: run again, do not, or pause the run (default pause)",
    )
    submit.set_defaults(handler=handle_submit)
    status = sub.add_parser("status", help="the batch's runs by state, from the journal")
    status.add_argument("batch", metavar="BATCH", nargs="?", default="", help="run id prefix (default: every run)")
    _journal_and_address(status)
    status.set_defaults(handler=handle_status)


def _journal_and_address(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--journal", metavar="URL", help=JOURNAL_HELP + "; a cluster of several machines needs postgresql://"
    )
    parser.add_argument("--address", metavar="ADDRESS", help="the Ray cluster (ray://host:10001, auto; default local)")


def _journal_url(args: argparse.Namespace) -> str:
    """The fleet's journal: the one given, by default the usual one, so a Ray on this machine works with no
    database server; one that some node could not open is refused (:func:`~toolslip.fleet.unreachable_journal`)."""
    return str(args.journal or default_location())


@dataclass(frozen=True)
class CliAgent:
    """The agent of ``fleet submit``, built on each worker from the files and model the command named.

    A picklable value (Ray sends it to the workers); paths are absolute, and a cluster's workers must see
    them (ship them with Ray's ``runtime_env`` on a remote cluster).
    """

    tools_files: tuple[str, ...]
    model: str
    max_steps: int
    approve: str

    def __call__(self, journal: Journal) -> Agent:
        from .resume import load_model

        journal.meta = {  # what `toolslip resume RUN` needs to take over a fleet run by hand
            "model": self.model,
            "tools_file": self.tools_files[0],
            "tools_files": list(self.tools_files),
            "max_steps": self.max_steps,
        }
        return Agent(
            model=load_model(self.model),
            tools=load_tools_files(self.tools_files),
            max_steps=self.max_steps,
            hooks=journal.wrap(Dedup(), Approval(_APPROVERS[self.approve])),
        )


def read_prompts(path: str, batch: str) -> list[tuple[str, str]]:
    """``(run id, prompt)`` of each line; a malformed line is a ConfigError naming it."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the prompts file {path}: {exc.strerror}") from None
    runs: list[tuple[str, str]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{number} is not JSON ({exc.msg})") from None
        if isinstance(value, dict) and isinstance(value.get("prompt"), str):
            prompt, run_id = value["prompt"], str(value.get("id") or f"{batch}-{number:05}")
        elif isinstance(value, str):
            prompt, run_id = value, f"{batch}-{number:05}"
        else:
            raise ConfigError(f'{path}:{number} is neither a JSON string nor an object with a "prompt" string')
        runs.append((run_id, prompt))
    if len({run_id for run_id, _ in runs}) != len(runs):
        raise ConfigError(f"{path} gives two prompts the same id")
    return runs


def handle_submit(args: argparse.Namespace) -> int:
    from ..fleet import Fleet, Policy, unreachable_journal

    url = _journal_url(args)
    if why := unreachable_journal(url, args.address):  # before reading anything: the command cannot work
        raise UsageError(why)
    runs = read_prompts(args.prompts, args.batch or Path(args.prompts).stem)
    tools = tuple(os.path.abspath(f) for f in args.tools)
    load_tools_files(tools)  # a broken tools file is one sentence here, not a failure on every worker
    model = args.model
    if model.rpartition(":")[0].endswith(".py"):
        path, _, name = model.rpartition(":")
        model = f"{os.path.abspath(path)}:{name}"
    make_agent = CliAgent(tools, model, args.max_steps, args.approve)
    policy = Policy(attempts=args.attempts)
    out: TextIO = open(args.out, "a", encoding="utf-8") if args.out else sys.stdout
    counts: collections.Counter[str] = collections.Counter()
    progress = _Progress(len(runs))
    try:
        with Fleet(
            url,
            make_agent,
            address=args.address,
            concurrency=args.concurrency,
            policy=policy,
            rerun_interrupted=_APPROVERS[args.rerun_interrupted],
        ) as fleet:
            for outcome in fleet.run(runs):
                counts[outcome.outcome] += 1
                print(json.dumps(outcome.to_dict(), ensure_ascii=False, default=str), file=out, flush=True)
                progress.show(counts)
    finally:
        if out is not sys.stdout:
            out.close()
    progress.show(counts, last=True)
    return EXIT_OK if counts["completed"] == len(runs) else EXIT_STOPPED


class _Progress:
    """``fleet: 12/40 runs over (11 completed, 1 failed)`` on stderr: redrawn on a terminal, else every 5 s."""

    def __init__(self, total: int) -> None:
        self.total, self.shown, self.tty = total, 0.0, sys.stderr.isatty()

    def show(self, counts: collections.Counter[str], *, last: bool = False) -> None:
        now = time.monotonic()
        if not (last or self.tty or now - self.shown >= 5):
            return
        self.shown = now
        done = sum(counts.values())
        detail = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
        line = f"fleet: {done}/{self.total} runs over ({detail})" if detail else f"fleet: 0/{self.total} runs over"
        end = "\n" if last or not self.tty else ""
        print(("\r" if self.tty else "") + line, end=end, file=sys.stderr, flush=True)


def handle_status(args: argparse.Namespace) -> int:
    from ..fleet import batch_status
    from ..fleet.task import open_journal

    store = open_journal(_journal_url(args))
    try:
        counts = batch_status(store, args.batch)
    finally:
        store.close()
    what = f"batch {args.batch}" if args.batch else "all runs"
    detail = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "no runs"
    print(f"{what}: {sum(counts.values())} runs in the journal: {detail}")
    if args.address:
        print(_cluster_line(args.address))
    return EXIT_OK


def _cluster_line(address: str) -> str:
    from ..fleet import ray_connection

    disconnect = ray_connection(address)
    try:
        import ray

        nodes = [n for n in ray.nodes() if n.get("Alive")]  # type: ignore[no-untyped-call]  # Ray leaves these untyped
        total = ray.cluster_resources().get("CPU", 0)  # type: ignore[no-untyped-call]
        free = ray.available_resources().get("CPU", 0)  # type: ignore[no-untyped-call]
    finally:
        disconnect()
    return f"cluster {address}: {len(nodes)} nodes alive, {total - free:g} of {total:g} CPUs busy"
