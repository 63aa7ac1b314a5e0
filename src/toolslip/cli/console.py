"""``toolslip console``: the web console over the run journal, on this machine by default.

It prints the URL to open once, with a fresh access token in it (as Jupyter does); every route needs the
token. Bound to another address it needs a token you choose (``--token`` or ``$TOOLSLIP_CONSOLE_TOKEN``),
since a printed one would travel in the clear. ``--model`` (and ``--tools``) give it an agent to run for
front-ends on ``POST /api/chat`` (the Vercel AI SDK's UI message stream), its held calls in the inbox.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any

from ..core.errors import ConfigError
from . import EXIT_OK, UsageError
from .argtypes import port
from .durable import JOURNAL_HELP

__all__ = ["register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("console", help="a web console over the run journal: runs, timelines, approvals")
    parser.add_argument("--journal", metavar="PATH|URL", help=JOURNAL_HELP)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=port, default=8765, help="port (default 8765; 0 picks a free one)")
    parser.add_argument(
        "--token", help="the access token (default: $TOOLSLIP_CONSOLE_TOKEN, else a fresh one printed once)"
    )
    parser.add_argument("--user", help="who decisions are recorded as when a form names no one (default: you)")
    parser.add_argument("--model", metavar="MODEL", help="serve an agent on POST /api/chat with this model")
    parser.add_argument("--tools", metavar="FILE", action="append", default=[], help="its tools file (repeatable)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from ..console import LOOPBACK, Console, new_token
    from ..durable.stores import open_store

    token = args.token or os.environ.get("TOOLSLIP_CONSOLE_TOKEN")
    loopback = args.host in LOOPBACK
    if not loopback and not token:
        raise UsageError(
            f"--host {args.host} is reachable from other machines: give --token (or set $TOOLSLIP_CONSOLE_TOKEN)"
        )
    if args.tools and not args.model:
        raise UsageError("--tools goes with --model: the agent the console serves on /api/chat")
    agent, journal = _agent(args) if args.model else (None, None)
    store = open_store(args.journal, existing=agent is None)
    console = Console(store=store, token=token or new_token(), loopback=loopback, agent=agent, journal=journal)
    if args.user:
        console.user = args.user
    asyncio.run(_serve_forever(console, args.host, args.port, printed=not token))
    return EXIT_OK


def _agent(args: argparse.Namespace) -> tuple[Any, Any]:
    from ..agent.loop import Agent
    from ..agent.tools import Toolbox
    from ..durable.approval import Approval
    from ..durable.dedup import Dedup
    from ..durable.journal import Journal
    from .files import load_tools_files
    from .resume import load_model

    journal = Journal(args.journal, meta={"model": args.model, "tools_files": args.tools})
    tools = load_tools_files(args.tools) if args.tools else Toolbox([])
    agent = Agent(model=load_model(args.model), tools=tools, hooks=journal.wrap(Dedup(), Approval()))
    return agent, journal


async def _serve_forever(console: Any, host: str, port: int, *, printed: bool) -> None:
    from ..console import serve

    try:
        async with serve(console, host, port) as base:
            where = f"{base}/?token={console.token}" if printed else f"{base}/ (with your token)"
            print(f"toolslip console: open {where}", flush=True)
            print(f"journal: {console.store.path}; Ctrl-C to stop", file=sys.stderr, flush=True)
            await asyncio.Event().wait()
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
