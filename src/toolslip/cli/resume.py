"""``toolslip resume RUN_ID``: continue a paused or interrupted run from its journal.

Recorded model responses are replayed, finished calls return their recorded results. Two questions are
kept apart: new side-effecting calls are approved as ``--approve`` says, and a side-effecting call that
started before the interruption and has no recorded end (it may have happened) runs again only as
``--rerun-interrupted`` says, or when a person answers yes on the terminal. ``--decide CALL_ID=yes|no``
answers one pending call. The run is executed under its lease: while another process executes it, resume
refuses and names that process. The step lines and the stop line are those of ``toolslip run``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..agent.loop import Agent
from ..core._files import import_user_file
from ..core.errors import ConfigError
from ..core.messages import Settings
from ..core.model import Model
from ..core.result import RunResult
from ..durable.approval import Decision
from ..durable.journal import Entry, Journal
from ..durable.journal_entries import not_resumable, recording_from_entries
from ..providers.local_figures import not_from_a_tool
from . import EXIT_MAX_STEPS, EXIT_OK, EXIT_STOPPED, UsageError
from .argtypes import at_least
from .conversation import add_limit_options, limits_from_args
from .durable import add_rerun_option, add_run_options, hooks_from_args, is_model_file, rerun_approver_from_args
from .files import load_output_type, load_tools_files
from .interrupts import ctrl_c_held
from .outcome import Outcome, pause_message
from .render import Renderer
from .runs import open_store
from .streams import stdout_to_stderr

__all__ = ["exit_code", "finish", "is_model_file", "load_model", "print_value", "register", "value_json"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("resume", help="continue a paused or interrupted run from its journal")
    parser.add_argument("run_id", metavar="RUN_ID", help="as listed by `toolslip runs`")
    parser.add_argument("--tools", metavar="FILE", help="tools file (default: the one the run was started with)")
    parser.add_argument("--model", metavar="MODEL", help="model (default: the one the run was started with)")
    parser.add_argument("--max-steps", type=at_least(1), help="step limit (default: the run's own)")
    parser.add_argument(
        "--decide",
        action="append",
        default=[],
        metavar="CALL_ID=yes|no",
        help="decide one pending call (repeatable); the pause message lists the calls and their ids",
    )
    add_limit_options(parser)
    add_run_options(parser)
    add_rerun_option(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.no_journal:
        raise UsageError("resume reads the run's journal; drop --no-journal")
    decisions = _decisions(args.decide)
    store = open_store(args.journal)
    journal = Journal(store, approver=rerun_approver_from_args(args))
    journal.lease(args.run_id)  # before reading: another process may be executing the run right now
    try:
        entries = store.entries(args.run_id)
        start = next((e for e in entries if e.kind == "start"), None)
        if start is None:
            raise ConfigError(not_resumable(args.run_id, entries, store.path))
        last = entries[-1]
        if last.kind == "finish" and last.data.get("stop_reason") == "completed":
            print(f"run {args.run_id} already completed: {last.data.get('output', '')}")
            return EXIT_OK
        _check_decisions(decisions, entries, args.run_id)
        journal.meta = meta = dict(start.data.get("meta") or {})
        tools_files = [args.tools] if args.tools else meta.get("tools_files") or [meta.get("tools_file")]
        model_spec = args.model or meta.get("model")
        if not all(tools_files) or not model_spec:
            raise ConfigError(
                "the journal does not say which tools file and model the run used; pass --tools and --model"
            )
        output_type = load_output_type(meta["output_schema"]) if meta.get("output_schema") else None
        agent = Agent(
            model=load_model(model_spec),
            tools=load_tools_files(tools_files),
            max_steps=args.max_steps or meta.get("max_steps") or 8,
            hooks=hooks_from_args(args, journal),
            limits=limits_from_args(args),
            output_type=output_type,
            output_mode=meta.get("output_mode"),
            mode="code" if meta.get("mode") == "code" else "tool",
            settings=Settings(temperature=meta.get("temperature")),
        )
        out = sys.stdout if output_type is None else sys.stderr  # a typed run's stdout: the JSON alone, as run's
        print(f"resuming run {args.run_id}: model {model_spec}, tools {', '.join(tools_files)}", file=out)
        renderer = Renderer(out, typed=output_type is not None)
        outcome = Outcome(renderer, lambda step, call_id: (args.run_id, step, call_id) in journal.replayer.reran)
        with stdout_to_stderr() if output_type is not None else contextlib.nullcontext():  # a tool's prints too
            result = asyncio.run(journal.resume(agent, args.run_id, decisions, on_event=outcome))
    finally:
        journal.release(args.run_id)  # when the run never began; the run itself releases it when it ends
    code = finish(result, outcome, renderer, journal, args.journal)
    if output_type is not None:
        print_value(result, outcome.ungrounded)
    return code


def finish(result: RunResult, outcome: Outcome, renderer: Renderer, journal: Journal | None, where: str | None) -> int:
    """Print how the run ended (answer, stop line, re-runs, what a pause waits for); return the exit code."""
    out = renderer.out
    if result.output and not renderer.streamed and not renderer.typed:  # streamed text is already on the screen
        print(f"\n{result.output}", file=out)
    print(outcome.stop_line(result), file=out)
    for line in outcome.reruns():
        print(line, file=out)
    if result.stop_reason == "paused":
        if journal is None:
            lost = "it was not journaled (--no-journal), so it cannot be resumed: run it again with --approve yes|no"
            print(f"run {result.run_id} is paused, but {lost}", file=sys.stderr)
        else:
            entries = journal.store.entries(result.run_id)
            pending = entries[-1].data.get("pending", ()) if entries and entries[-1].kind == "finish" else ()
            print(pause_message(result.run_id, pending, where), file=sys.stderr)
    return exit_code(result)


def print_value(result: RunResult, ungrounded: Sequence[str] = ()) -> None:
    """A typed run's answer: the validated value as JSON on stdout, or why there is none on stderr; and on
    stderr which of its figures no tool gave (``ungrounded``), which a JSON value cannot say itself."""
    if result.output_error is not None:
        print(f"no valid answer: {result.output_error}", file=sys.stderr)
    elif result.ok:
        print(value_json(result.data))
        if ungrounded:
            print(not_from_a_tool(ungrounded), file=sys.stderr)


def value_json(value: Any) -> str:
    """A validated answer as JSON text (pydantic models and dataclasses as their fields)."""
    from ..agent.outputs import serialize_output

    text = serialize_output(value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) or not isinstance(text, str) else text


def _decisions(values: list[str]) -> dict[str, Decision]:
    """``["c1=yes", "c2=no"]`` as decisions; a malformed one is a ConfigError that shows the form."""
    decisions = {}
    for value in values:
        call_id, sep, answer = value.rpartition("=")
        if not sep or not call_id or answer.lower() not in ("yes", "no", "y", "n"):
            raise UsageError(f"--decide {value!r}: write CALL_ID=yes or CALL_ID=no (the ids are in the pause message)")
        decisions[call_id] = Decision(approved=answer.lower().startswith("y"))
    return decisions


def _check_decisions(decisions: Mapping[str, Decision], entries: Sequence[Entry], run_id: str) -> None:
    """Every decided call must be one the run waits for: pending approval, or cut off by the interruption."""
    if not decisions:
        return
    last = entries[-1]
    if last.kind == "finish":
        waiting = [str(p["call_id"]) for p in last.data.get("pending", ())]
    else:
        recording = recording_from_entries(entries)
        waiting = [call_id for _, call_id in recording.started] if recording is not None else []
    unknown = [c for c in decisions if c not in waiting]
    if unknown:
        listed = ", ".join(waiting) or "none"
        raise ConfigError(f"run {run_id} has no pending call {unknown[0]!r}; the pending calls are: {listed}")


def load_model(spec: str) -> Model:
    """``path/to/file.py:NAME`` loads a Model object from a Python file; anything else is a model string."""
    path, _, name = spec.rpartition(":")
    with ctrl_c_held():  # a model file, or a provider's HTTP stack, is being imported
        if not is_model_file(spec):
            from ..providers import resolve_model

            return resolve_model(spec)
        model = getattr(import_user_file(path, "model file"), name, None)
    if model is None or not hasattr(model, "complete"):
        raise ConfigError(f"{path} has no model named {name!r} (an object with an async complete(request))")
    return model  # type: ignore[no-any-return]


def exit_code(result: RunResult) -> int:
    if result.ok:
        return EXIT_OK
    return EXIT_MAX_STEPS if result.stop_reason == "max_steps" else EXIT_STOPPED
