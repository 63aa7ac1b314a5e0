"""``toolslip chat [TOOLS.py ...]``: a conversation with tools, turn after turn, at the terminal.

Each turn is a run, shown as ``toolslip run`` shows one (a line per call, the answer, the stop line), with
the whole conversation so far as its history. Side-effecting calls are approved inline (``--approve``).
Ctrl-C stops the current answer and keeps the session; at the prompt it only clears the line. A line
ending in ``\\`` continues on the next, and a block between two ``\"\"\"`` lines is one message. Commands:
``/usage`` (tokens and cost so far), ``/help``, ``/exit`` (or Ctrl-D). Input lines are kept in a readline
history file next to the journal.

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..agent.loop import Agent
from ..core._display import dollars, plural
from ..core.messages import Message, Usage
from ..durable.journal import Journal, default_journal_path
from ..durable.transcript import transcript_from_entries
from . import EXIT_OK, UsageError
from .argtypes import at_least, check_model
from .conversation import LAST, Earlier, add_limit_options, earlier_run, limits_from_args
from .durable import add_run_options, hooks_from_args, journal_from_args
from .files import load_tools_files
from .interrupts import ctrl_c_held
from .outcome import Outcome
from .render import Renderer
from .resume import finish, is_model_file, load_model
from .runs import open_store
from .window import add_window_options, output_cap, sized_model

__all__ = ["register"]

HELP = "/usage  tokens and cost so far · /help  this list · /exit  leave (or Ctrl-D)"


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
    p.add_argument("--max-steps", type=at_least(1), default=8, help="model calls per turn (default 8)")
    add_limit_options(p)
    add_run_options(p)
    add_window_options(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..providers import default_model

    earlier = None
    if args.continue_run is not None:
        if args.no_journal:
            raise UsageError("--continue reads the session from the journal; drop --no-journal")
        earlier = earlier_run(open_store(args.journal, read_only=True), args.continue_run)
        args.tools = args.tools or earlier.meta.get("tools_files") or [earlier.meta.get("tools_file")]
        args.model = args.model or earlier.meta.get("model")
    if not args.tools or not all(args.tools):
        raise UsageError("no tools: give one or more tools files (chat TOOLS.py ...)")
    tools = load_tools_files(args.tools)
    if not is_model_file(args.model):
        check_model(args.model)
    with ctrl_c_held():
        model, why = (load_model(args.model), "given") if is_model_file(args.model) else default_model(args.model)
    model = sized_model(args, model)
    print(f"model: {model.name} ({why})")
    args.model = args.model or model.name
    journal = journal_from_args(args)
    agent = Agent(
        model=model,
        tools=tools,
        system=args.system,
        max_steps=args.max_steps,
        hooks=[*hooks_from_args(args, journal), *filter(None, [output_cap(args, model)])],
        limits=limits_from_args(args),
    )
    session = _Session(agent=agent, journal=journal, where=args.journal, out=sys.stdout)
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
                        print("\n(Ctrl-D or /exit leaves)", file=self.out)
                        continue
                    if not text.strip():
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
        elif name == "/help":
            print(HELP, file=self.out)
        else:
            print(f"unknown command {name}; {HELP}", file=self.out)
        return False

    def _turn(self, runner: asyncio.Runner, text: str) -> None:
        run_id = uuid.uuid4().hex
        if self.journal is not None:
            self.journal.meta["continues"] = self.previous
        renderer = Renderer(self.out)
        outcome = Outcome(renderer)
        try:
            result = runner.run(self.agent.arun(text, run_id=run_id, on_event=outcome, history=self.history))
        except KeyboardInterrupt:
            print("\n[cancelled: the answer was stopped; ask again or go on]", file=self.out)
            self._recorded(run_id, None)
            return
        finish(result, outcome, renderer, self.journal, self.where)
        self.turns += 1
        self.usage = self.usage + result.usage
        self.cost = None if self.cost is None or result.cost is None else self.cost + result.cost
        self._recorded(run_id, result.messages)

    def _recorded(self, run_id: str, messages: list[Message] | None) -> None:
        """The next turn's history: the journal's record of this turn (the run's own messages without one)."""
        if self.journal is not None:
            recorded = transcript_from_entries(self.journal.store.entries(run_id))
            if recorded is not None:
                self.history, self.previous = recorded, run_id
        elif messages is not None:
            self.history = messages


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
