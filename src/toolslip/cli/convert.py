"""``toolslip convert --from openai-chat --to anthropic FILE``: one wire format's JSON in, another's out.

What the target cannot express is reported on stderr, one line each; with ``--on-loss error`` (the
default) the first such thing stops the conversion with its path.
"""

from __future__ import annotations

import argparse
import sys

from ..formats import FORMATS
from . import EXIT_OK
from .files import load_json, print_json

__all__ = ["register"]

FORMAT_NAMES = tuple(FORMATS)
"""Every wire format the library reads and writes: the command offers exactly what ``toolslip.convert`` does."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("convert", help="convert tools, a request, a response or messages between wire formats")
    p.add_argument("file", help="a JSON file, or - for stdin")
    p.add_argument("--from", dest="source", required=True, choices=FORMAT_NAMES, help="the format FILE is in")
    p.add_argument("--to", dest="target", required=True, choices=FORMAT_NAMES, help="the format to write")
    p.add_argument("--what", default="auto", choices=("auto", "tools", "request", "response", "messages"))
    p.add_argument(
        "--on-loss",
        default="error",
        choices=("error", "drop", "mark"),
        help="what to do with what the target cannot express (default: error)",
    )
    p.add_argument(
        "--split-calls",
        action="store_true",
        help="openai-functions: send parallel calls as consecutive single-call turns",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..formats.conversion import convert

    data = load_json(args.file)
    result = convert(
        data, from_=args.source, to=args.target, what=args.what, on_loss=args.on_loss, split_calls=args.split_calls
    )
    for loss in result.lost:
        print(f"toolslip convert: lost {loss}", file=sys.stderr)
    print_json(result.data)
    return EXIT_OK
