"""The ``toolslip`` command line: a thin layer over the library.

Each sub-command lives in its own module with a ``register(subparsers)`` function; add a module name to
``COMMANDS`` to add a command. Errors the user can fix are printed as one sentence on stderr, never as a
traceback. Exit codes: 0 success, 1 error, 2 bad usage, 3 step limit hit, 4 the run stopped otherwise
(refusal, output limit, paused).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["COMMANDS", "main"]

COMMANDS: tuple[str, ...] = (
    "run",
    "eval",
    "eval-report",
    "eval-compare",
    "resume",
    "runs",
    "show",
    "injection",
    "mcp-serve",
    "tools",
    "lint",
    "serve",
    "convert",
    "check",
)

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_MAX_STEPS, EXIT_STOPPED = 0, 1, 2, 3, 4


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolslip", description="LLM tool calling with safety belts.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f".{name.replace('-', '_')}", __name__).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ..errors import ToolslipError
    from .interrupts import ctrl_c_held

    try:
        with ctrl_c_held():  # the commands' modules are imported here
            parser = build_parser()
    except KeyboardInterrupt:
        print("toolslip: interrupted", file=sys.stderr)
        return 130
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except ToolslipError as exc:
        print(f"toolslip {args.command}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        # A file the command had to read or write; the handlers check the likely cases first.
        where = f" {exc.filename!r}" if exc.filename else " a file"
        reason = exc.strerror or exc
        print(f"toolslip {args.command}: cannot use{where}: {reason}; check the path and its folder", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"toolslip {args.command}: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
