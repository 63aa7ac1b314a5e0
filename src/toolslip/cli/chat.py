"""``toolslip chat [TOOLS.py ...]``: a conversation with tools, turn after turn, at the terminal.

Each turn is a run, shown as ``toolslip run`` shows one (a line per call, the answer, the stop line), with
the whole conversation so far as its history. Side-effecting calls are approved inline (``--approve``).
Ctrl-C stops the current answer and keeps the session; at the prompt it only clears the line. When the reader
of the output leaves (``chat | head``), the session ends at its next write, quietly with exit 141, as ``run``
does (:mod:`toolslip.cli.streams`). A line
ending in ``\\`` continues on the next, and a block between two ``\"\"\"`` lines is one message. Commands:
``/usage`` (tokens and cost so far), ``/retry`` (after a provider error), ``/help``, ``/exit`` (or Ctrl-D).
Input lines are kept in a readline history file next to the journal.

A provider error ends the turn, not the session, and the budget options bound the session as a whole:
each turn gets what is left of them.

Every turn is journaled as a run that records ``continues: PREVIOUS_RUN``; the next turn's history is read
back from the journal, so what the session knows is exactly what was recorded. After a crash (even a
SIGKILL), ``toolslip chat --continue`` goes on from the newest run, with its tools and model: calls that
finished are in the history with their results and are never run again; a call cut off mid-way is marked
as possibly done (:mod:`toolslip.durable.transcript`).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO

from ..agent.limits import Limits
from ..agent.loop import Agent
from ..core._display import dollars, plural
from ..core.errors import FormatError, ProviderError
from ..core.messages import Message, Settings, Usage
from ..durable.journal import Journal, default_journal_path
from ..durable.transcript import transcript_from_entries
from . import EXIT_OK, UsageError
from .argtypes import at_least, check_model, temperature
from .conversation import LAST, Earlier, add_limit_options, continue_with, earlier_run, limits_from_args
from .durable import add_run_options, hooks_from_args, journal_from_args
from .files import load_tools_files
from .interrupts import ctrl_c_held
from .outcome import Outcome
from .render import Renderer
from .resume import finish, is_model_file, load_model
from .runs import open_store
from .streams import reader_gone
from .window import add_window_options, output_cap, sized_model

__all__ = ["register"]

_BUDGET_STOPS = frozenset({"max_input_tokens", "max_output_tokens", "max_total_tokens", "max_tool_calls", "max_cost"})

HELP = "/usage  tokens and cost so far · /retry  ask again after an error · /help  this list · /exit  leave (or Ctrl-D)"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "chat",
        help="talk with a model that uses your tools, turn after turn; --continue a session after a crash",
        description="toolslip chat [TOOLS.py ...] — a session; every turn is journaled, Ctrl-C stops an answer.",
    )
    p.add_argument("tools", nargs="*", metavar="TOOLS.py", help="Python files of @tool functions")
    p.add_argument("--model", help="as for `toolslip run` (default: the same choice)")
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_run",
        nargs="?",
        const=LAST,
        metavar="RUN_ID",
        help="go on from the newest run (or RUN_ID) with its transcript, tools and model",
    )
    p.add_argument("--system", help="a system prompt")
    p.add_argument(
        "--temperature",
        type=temperature,
        help="sample at this temperature (0 to 2; default: the model's own, greedy for the local model)",
    )
    p.add_argument(
        "--code",
        action="store_true",
        help="code mode: the model answers with a Python program that calls the tools, run in a sandbox "
        "(each call through the same journal, approval and gate); see docs/code-mode.md",
    )
    p.add_argument("--max-steps", type=at_least(1), default=8, help="model calls per turn (default 8)")
    add_limit_options(p)
    add_run_options(p)
    add_window_options(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..providers import default_model

    earlier = continued_why = None
    if args.continue_run is not None:
        if args.no_journal:
            raise UsageError("--continue reads the session from the journal; drop --no-journal")
        earlier = earlier_run(open_store(args.journal, read_only=True), args.continue_run)
        continued_why = continue_with(args, earlier)
    if not args.tools or not all(args.tools):
        raise UsageError("no tools: give one or more tools files (chat TOOLS.py ...)")
    tools = load_tools_files(args.tools)
    if not is_model_file(args.model):
        check_model(args.model)
    with ctrl_c_held():
        model, why = (load_model(args.model), "given") if is_model_file(args.model) else default_model(args.model)
    model = sized_model(args, model)
    why = continued_why + why.removeprefix("given") if continued_why else why
    print(f"model: {model.name} ({why})")
    args.model = args.model or model.name
    journal = journal_from_args(args)
    limits = limits_from_args(args)
    agent = Agent(
        model=model,
        tools=tools,
        system=args.system,
        max_steps=args.max_steps,
        hooks=[*hooks_from_args(args, journal), *filter(None, [output_cap(args, model)])],
        limits=limits,  # checked now (a cost limit needs a priced model); each turn gets what is left of it
        mode="code" if args.code else "tool",
        settings=Settings(temperature=args.temperature),
    )
    session = _Session(agent=agent, journal=journal, where=args.journal, out=sys.stdout, limits=limits)
    if earlier is not None:
        session.resume_from(earlier)
    print(f"{plural(len(tools), 'tool')}: {', '.join(tools.names)} · {HELP}")
    return session.loop()


@dataclass(kw_only=True)
class _Session:
    agent: Agent
    journal: Journal | None
    where: str | None
    out: TextIO
    history: list[Message] = field(default_factory=list)
    previous: str | None = None
    """The run the next turn continues."""
    usage: Usage = field(default_factory=Usage)
    cost: float | None = 0.0
    turns: int = 0
    tool_calls: int = 0
    limits: Limits | None = None
    """The session's budget (``--max-tokens-total``...): all its turns together, not each one."""
    retry: str | list[Message] | None = None
    """What ``/retry`` sends after a turn ended in a provider error: nothing new (``[]``: the model is asked
    again from the recorded history, which holds the question), or the question when nothing recorded it."""

    def resume_from(self, earlier: Earlier) -> None:
        self.history, self.previous = earlier.messages, earlier.run_id
        asked = sum(m.role == "user" for m in earlier.messages)
        print(f"continuing run {earlier.run_id}: {plural(asked, 'question')} so far", file=self.out)

    def loop(self) -> int:
        history_file = _readline_history()
        with asyncio.Runner() as runner:
            try:
                while True:
                    try:
                        text = _read_message(history_file)
                    except EOFError:
                        print(file=self.out)
                        break
                    except KeyboardInterrupt:
                        if reader_gone():  # nobody reads the answers: the session ends, as run | head does
                            raise
                        print("\n(Ctrl-D or /exit leaves)", file=self.out)
                        continue
                    if not text.strip():
                        continue
                    if text.strip() == "/retry" and self.retry is not None:
                        self._turn(runner, self.retry)
                        continue
                    if text.strip().startswith("/"):
                        if self._command(text.strip()):
                            break
                        continue
                    self._turn(runner, text)
            finally:
                close = getattr(self.agent.model, "aclose", None)
                if close is not None:
                    runner.run(close())
        return EXIT_OK

    def _command(self, text: str) -> bool:
        """Run a slash-command; True when the session should end."""
        name = text.split()[0]
        if name in ("/exit", "/quit"):
            return True
        if name == "/usage":
            cost = f", {dollars(self.cost)}" if self.cost else ("" if self.cost == 0 else ", cost unknown")
            tokens = f"{self.usage.input_tokens} in / {self.usage.output_tokens} out"
            print(f"{plural(self.turns, 'turn')} this session: tokens {tokens}{cost}", file=self.out)
        elif name == "/retry":
            print("nothing to retry: the last turn did not fail", file=self.out)
        elif name == "/help":
            print(HELP, file=self.out)
        else:
            print(f"unknown command {name}; {HELP}", file=self.out)
        return False

    def _turn(self, runner: asyncio.Runner, text: str | list[Message]) -> None:
        """One turn: ``text`` asked, or (``[]``) the model asked again from where the history stops."""
        used = _used(self.usage, self.cost, self.tool_calls)
        spent = _budget(self.limits, used)
        if spent:
            print(f"[the session's budget is spent: {spent}; nothing was sent. /exit leaves]", file=self.out)
            return
        run_id = uuid.uuid4().hex
        if self.journal is not None:
            self.journal.meta["continues"] = self.previous
        renderer = Renderer(self.out)
        outcome = Outcome(renderer)
        left = _left(self.limits, used)
        try:
            result = runner.run(
                self.agent.arun(text, run_id=run_id, on_event=outcome, history=self.history, limits=left)
            )
        except KeyboardInterrupt:
            if reader_gone():  # not a Ctrl-C: the reader of stdout left, and every later turn would be lost
                raise
            print("\n[cancelled: the answer was stopped; ask again or go on]", file=self.out)
            self._recorded(run_id, None)
            return
        except (ProviderError, FormatError) as exc:  # the service failed this turn, not the session
            print(f"\n[error: {exc}]\n[the conversation is kept: /retry asks again, or go on]", file=self.out)
            # The journal holds the question (and any calls that ran): a retry asks the model from there.
            self.retry = [] if self._recorded(run_id, None) else text
            return
        self.retry = None
        finish(result, outcome, renderer, self.journal, self.where)
        self.turns += 1
        self.usage = self.usage + result.usage
        self.tool_calls += result.tool_calls
        self.cost = None if self.cost is None or result.cost is None else self.cost + result.cost
        if self.limits is not None and result.stop_reason in _BUDGET_STOPS:  # the turn had what the session had left
            used = _used(self.usage, self.cost, self.tool_calls)
            print(f"[the session's budget: {_budget(self.limits, used, reached=False)}]", file=self.out)
        self._recorded(run_id, result.messages)

    def _recorded(self, run_id: str, messages: list[Message] | None) -> bool:
        """The next turn's history: the journal's record of this turn (the run's own messages without one);
        False when neither holds the turn."""
        if self.journal is not None:
            recorded = transcript_from_entries(self.journal.store.entries(run_id))
            if recorded is not None:
                self.history, self.previous = recorded, run_id
                return True
        elif messages is not None:
            self.history = messages
            return True
        return False


def _used(usage: Usage, cost: float | None, tool_calls: int) -> dict[str, float]:
    """What a session used, by the name of the :class:`Limits` field that bounds it."""
    total = usage.input_tokens + usage.output_tokens
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": total,
        "tool_calls": tool_calls,
        "cost": cost or 0.0,
    }


def _set(limits: Limits | None) -> dict[str, float]:
    """The limits that are set, by name (none without a budget)."""
    values = {f.name: getattr(limits, f.name) for f in fields(Limits)} if limits is not None else {}
    return {name: value for name, value in values.items() if value is not None}


def _left(limits: Limits | None, used: dict[str, float]) -> Limits | None:
    """What is left of the session's budget for the next turn (``None``: no budget)."""
    if limits is None:
        return None
    left: dict[str, Any] = {n: max(limit - used[n], 0) for n, limit in _set(limits).items()}
    return Limits(**{n: value if n == "cost" else int(value) for n, value in left.items()})


def _budget(limits: Limits | None, used: dict[str, float], *, reached: bool = True) -> str:
    """The session's limits (only those reached, by default) as ``total tokens 5012 of 5000``."""
    shown = [(n, limit) for n, limit in _set(limits).items() if not reached or used[n] >= limit]
    return ", ".join(f"{name.replace('_', ' ')} {used[name]:g} of {limit:g}" for name, limit in shown)


def _readline_history() -> Path | None:
    """Load the input history (up and down arrows across sessions); None where readline is missing."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline: plain input() still works
        return None
    path = default_journal_path().parent / "chat_history"
    readline.set_history_length(1000)
    try:
        readline.read_history_file(path)
    except OSError:  # none yet, or unreadable: the session works without it
        pass
    return path


def _read_message(history_file: Path | None) -> str:
    """One message: a line, lines joined by a trailing backslash, or a block between two \"\"\" lines."""
    line = input("> ")
    lines = []
    if line.strip() == '"""':
        while (line := input("... ")).strip() != '"""':
            lines.append(line)
    else:
        while line.endswith("\\"):
            lines.append(line[:-1])
            line = input("... ")
        lines.append(line)
    _save_history(history_file)
    return "\n".join(lines)


def _save_history(path: Path | None) -> None:
    """Written after every message, so a killed session keeps its input history too."""
    if path is None:
        return
    import readline

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        readline.write_history_file(path)
    except OSError:
        pass
