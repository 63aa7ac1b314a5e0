"""``--max-tool-output CHARS`` and ``--context-size TOKENS``: how much a model reads of each tool result, and how
much the embedded model reads at all.

A ~350 KB tool output ended a local run (185,298 prompt tokens for an 8,192-token window). With the local
model each result is cut to its context size in characters by default (8,192: some 2,000-3,000 tokens of
English or JSON), with a note the model reads; the journal keeps the whole output. The provider itself cuts
whatever still overflows (:mod:`toolslip.providers.local_window`), so the cap here is what makes the cut
visible and predictable on the command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

from . import UsageError
from .argtypes import at_least

if TYPE_CHECKING:
    from ..agent.hooks import Hook
    from ..core.model import Model

__all__ = ["add_window_options", "output_cap", "sized_model"]


def add_window_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("context")
    group.add_argument(
        "--max-tool-output",
        type=at_least(1),
        metavar="CHARS",
        help="cut each tool result the model reads to CHARS characters, with a note (the journal keeps it whole); "
        "default: the local model's context size in characters, no cap for other models",
    )
    group.add_argument(
        "--context-size",
        type=at_least(512),
        metavar="TOKENS",
        help="the local model's context window in tokens, prompt and answer together (default 8192)",
    )


def sized_model(args: argparse.Namespace, model: Model) -> Model:
    """``model`` with ``--context-size`` applied; a usage error for a model whose window is not ours to set."""
    from ..providers.local import LocalModel

    if args.context_size is None:
        return model
    if not isinstance(model, LocalModel):
        raise UsageError(f"--context-size sets the local model's window; {model.name} has its own")
    return dataclasses.replace(model, n_ctx=args.context_size)


def output_cap(args: argparse.Namespace, model: Model) -> Hook | None:
    """The hook that cuts tool results for ``model`` (last in the hook list: the journal sees whole results)."""
    from ..agent.output_cap import OutputCap

    local = sys.modules.get("toolslip.providers.local")  # a local model has loaded it; nothing else needs it
    chars = args.max_tool_output
    if chars is None and local is not None and isinstance(model, local.LocalModel):
        chars = model.n_ctx
        why = f"; the local model reads {chars} characters of a result (--max-tool-output)"
    else:
        why = "; --max-tool-output"
    return OutputCap(chars, why=why) if chars is not None else None
