"""The ``toolslip`` command line: a thin layer over the library.

Each sub-command lives in its own module with a ``register(subparsers)`` function; add a module name to
``COMMANDS`` to add a command. Errors the user can fix are printed as one sentence on stderr, never as a
traceback. Exit codes: 0 success, 1 error, 2 bad usage, 3 step limit hit, 4 the run stopped otherwise
(refusal, output limit, paused, or a budget: ``--max-tokens-total``, ``--max-tool-calls``, ``--max-cost``...),
130 interrupted by Ctrl-C, 141 the output's reader left (``| head``).

Bad usage means the command line itself is wrong: an unknown option, a missing argument, a value out of
range or malformed (``--max-steps 0``, ``--port 99999``, ``--model gpt-4o``), an empty question. argparse's
own errors and a handler's :class:`UsageError` print the same one line, ``toolslip CMD: what is wrong``, and
exit 2. What goes wrong while working (a missing file or key, a provider error) exits 1.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import signal
import sys
from collections.abc import Sequence
from typing import NoReturn

from ..core.errors import InvalidValue

__all__ = ["COMMANDS", "UsageError", "main"]

COMMANDS: tuple[str, ...] = (
    "run",
    "chat",
    "eval",
    "eval-report",
    "eval-compare",
    "resume",
    "runs",
    "show",
    "console",
    "injection",
    "mcp-serve",
    "tools",
    "lint",
    "serve",
    "convert",
    "check",
    "doctor",
    "fleet",
)

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_MAX_STEPS, EXIT_STOPPED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
EXIT_READER_GONE = 141  # 128 + SIGPIPE, as shells report a command whose pipe's reader left (| head)


class UsageError(InvalidValue):
    """The command line is wrong in a way argparse cannot see (an empty question...): exit 2.

    The library's own :class:`~toolslip.core.errors.InvalidValue` (a model string that names no model, a
    bad ``TOOLSLIP_MODEL``) is bad usage too, and takes the same path: every usage error exits 2 here.
    """


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the command, like every other error of the CLI
    (argparse prints the whole usage block first, several lines for the larger commands)."""

    _intermixing = False

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """A command's options may come between its words: ``toolslip run examples/expenses.py --code "..."``
        (plain argparse gives the files to ``TOOLS.py ...`` and then calls the question unrecognized).

        argparse's intermixed parsing, for every command without subcommands of its own; it calls this
        method again itself, hence the flag."""
        if self._intermixing or any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def build_parser() -> argparse.ArgumentParser:
    from ..core.version import __version__

    parser = _Parser(
        prog="toolslip",
        description="LLM tool calling with safety belts.",
        epilog="Exit codes: 0 success, 1 error, 2 bad usage, 3 step limit hit, 4 the run stopped otherwise "
        "(refusal, paused, or a budget such as --max-cost), 130 interrupted (Ctrl-C), 141 the output's reader left.",
    )
    parser.add_argument("--version", action="version", version=f"toolslip {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f".{name.replace('-', '_')}", __name__).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line (``argv``, else the process's arguments) and return its exit code.

    Run as the command itself (no ``argv``), a Ctrl-C ends the process as soon as its line is printed.
    """
    from .streams import standard_streams

    with standard_streams():
        code = _main(argv)
    if argv is None:
        # The command is over and its last line printed: a Ctrl-C now could only break into the exit
        # handlers (stopping idle tool processes), where Python prints it as a traceback under that line
        # (1 press in 20 within ~200 ms of the end of a run, seen in CI). The process is ending anyway.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if code in (EXIT_INTERRUPTED, EXIT_READER_GONE):
            _leave(code)
    return code


def _leave(code: int) -> NoReturn:
    """End the process now: the exit handlers run (tool processes are stopped, logs flushed), the
    interpreter's teardown does not.

    After ``toolslip run: interrupted`` was printed, unloading every imported module took 1.3-2.3 s on the
    shared 2-core machine at load average 10 (measured under strace: CPU time with no system call), on top
    of freeing the embedded model; the user had asked to stop. The kernel frees the memory at once.
    """
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    from ..core.errors import ToolslipError
    from .interrupts import ctrl_c_held

    try:
        with ctrl_c_held():  # the commands' modules are imported here
            parser = build_parser()
    except KeyboardInterrupt:
        print("toolslip: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    args, extra = parser.parse_known_args(argv)
    args.argv = ["toolslip", *(sys.argv[1:] if argv is None else argv)]  # the command as typed, for records
    if extra:  # argparse would name the top command ("toolslip: unrecognized arguments"), not the one used
        unknown = " ".join(extra)
        print(
            f"toolslip {args.command}: unrecognized arguments: {unknown} (see toolslip {args.command} --help)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        code: int = args.handler(args)
    except InvalidValue as exc:  # UsageError, and a value the library could not use (a model string...)
        print(f"toolslip {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ToolslipError as exc:
        print(f"toolslip {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except RecursionError:  # a document nested hundreds of levels deep, wherever it was read
        print(f"toolslip {args.command}: the input nests too deeply to be read; flatten it", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        # A file the command had to read or write; the handlers check the likely cases first.
        where = f" {exc.filename!r}" if exc.filename else " a file"
        reason = exc.strerror or exc
        print(f"toolslip {args.command}: cannot use{where}: {reason}; check the path and its folder", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        from .streams import reader_gone

        if reader_gone():  # stopped because nobody reads the output any more: quietly, as a pipe's end does
            return EXIT_READER_GONE
        print(f"toolslip {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    sys.exit(main())
