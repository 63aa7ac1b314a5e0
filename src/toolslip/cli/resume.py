"""``toolslip resume RUN_ID``: continue a paused or interrupted run from its journal.

Recorded model responses are replayed, finished calls return their recorded results, and a
side-effecting call that started but never finished is asked about on the terminal (or as ``--approve``
says) before it runs again.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from .._files import import_user_file
from ..errors import ConfigError
from ..journal import Journal
from ..loop import Agent, RunResult
from ..model import Model
from . import EXIT_MAX_STEPS, EXIT_OK, EXIT_STOPPED
from .argtypes import at_least
from .durable import add_run_options, approver_from_args, hooks_from_args
from .files import load_tools_file
from .runs import open_store

__all__ = ["exit_code", "load_model", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("resume", help="continue a paused or interrupted run from its journal")
    parser.add_argument("run_id", metavar="RUN_ID", help="as listed by `toolslip runs`")
    parser.add_argument("--tools", metavar="FILE", help="tools file (default: the one the run was started with)")
    parser.add_argument("--model", metavar="MODEL", help="model (default: the one the run was started with)")
    parser.add_argument("--max-steps", type=at_least(1), help="step limit (default: the run's own)")
    add_run_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.no_journal:
        raise ConfigError("resume reads the run's journal; drop --no-journal")
    store = open_store(args.journal)
    entries = store.entries(args.run_id)
    start = next((e for e in entries if e.kind == "start"), None)
    if start is None:
        raise ConfigError(f"no run {args.run_id!r} in {store.path}; `toolslip runs` lists the runs it holds")
    if entries[-1].kind == "finish" and entries[-1].data.get("stop_reason") == "completed":
        print(f"run {args.run_id} already completed: {entries[-1].data.get('output', '')}")
        return EXIT_OK
    meta = dict(start.data.get("meta") or {})
    tools_file = args.tools or meta.get("tools_file")
    model_spec = args.model or meta.get("model")
    if not tools_file or not model_spec:
        raise ConfigError("the journal does not say which tools file and model the run used; pass --tools and --model")
    journal = Journal(store, approver=approver_from_args(args), meta=meta)
    agent = Agent(
        model=load_model(model_spec),
        tools=load_tools_file(tools_file),
        max_steps=args.max_steps or meta.get("max_steps") or 8,
        hooks=hooks_from_args(args, journal),
    )
    result = asyncio.run(journal.resume(agent, args.run_id))
    return report(result)


def is_model_file(spec: str | None) -> bool:
    """True for ``path/to/file.py:NAME``: a Model object in a Python file (scripted models for tests, demos)."""
    path, sep, _ = (spec or "").rpartition(":")
    return bool(sep) and path.endswith(".py")


def load_model(spec: str) -> Model:
    """``path/to/file.py:NAME`` loads a Model object from a Python file; anything else is a model string."""
    path, _, name = spec.rpartition(":")
    if is_model_file(spec):
        model = getattr(import_user_file(path, "model file"), name, None)
        if model is None or not hasattr(model, "complete"):
            raise ConfigError(f"{path} has no model named {name!r} (an object with an async complete(request))")
        return model  # type: ignore[no-any-return]
    from ..providers import resolve_model

    return resolve_model(spec)


def report(result: RunResult) -> int:
    """Print the answer, or what the run is waiting for; the exit code says how it ended."""
    if result.output:
        print(result.output)
    if result.stop_reason == "paused":
        hint = f"continue with: toolslip resume {result.run_id}"
        print(f"run {result.run_id} is paused for approval; {hint}", file=sys.stderr)
    return exit_code(result)


def exit_code(result: RunResult) -> int:
    if result.ok:
        return EXIT_OK
    return EXIT_MAX_STEPS if result.stop_reason == "max_steps" else EXIT_STOPPED
