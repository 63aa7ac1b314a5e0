"""``toolslip check [--fix] [--format F] FILE``: find the classic tool-calling mistakes in a transcript.

Each problem is one line on stderr (path, what is wrong, the fix). stdout gets JSON: the report, or with
``--fix`` the repaired transcript. Exit 0 when nothing is left to fix by hand, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from . import EXIT_ERROR, EXIT_OK
from .convert import FORMAT_NAMES
from .files import load_json, print_json

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("check", help="check a request body or message list for unpaired calls and format mix-ups")
    p.add_argument("file", help="a JSON file, or - for stdin")
    p.add_argument("--format", choices=FORMAT_NAMES, help="the wire format (guessed when left out)")
    p.add_argument("--fix", action="store_true", help="repair what is safe and print the repaired JSON")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..formats.checker import check

    report = check(load_json(args.file), args.format, fix=args.fix)
    left = [p for p in report.problems if not (args.fix and p.fixable)]
    for problem in left:
        print(f"toolslip check: {problem}", file=sys.stderr)
    for change in report.changes:
        print(f"toolslip check: fixed {change}", file=sys.stderr)
    if args.fix:
        print_json(report.fixed)
    else:
        print_json({"format": report.format, "problems": [asdict(p) for p in report.problems]})
    return EXIT_ERROR if left else EXIT_OK
