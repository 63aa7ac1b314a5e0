"""``toolslip tools [TOOLS.py] [--mcp CMD]``: what the model would be offered, and what it costs.

One line per tool: its name, declared effects, whether its output is trusted, and the tokens its
declaration takes in every OpenAI Chat request (:func:`toolslip.quality.tokens.declaration_cost`).
"""

from __future__ import annotations

import argparse
import asyncio
import json

from ..agent.tools import Tool
from ..core._display import pad, plural
from ..core._display import width as display_width
from . import EXIT_OK, UsageError
from .files import load_tools_file
from .mcp_option import add_mcp_option, mcp_sources

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tools", help="list tools from a file and/or MCP servers: names, effects, token cost")
    p.add_argument("file", nargs="?", help="a Python file of @tool functions")
    add_mcp_option(p)
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..quality.tokens import declaration_cost

    if args.file is None and not args.mcp:
        raise UsageError("give a tools file, --mcp CMD, or both")
    listed = asyncio.run(_collect(args))
    cost = declaration_cost([t.spec for t, _ in listed], formats=("openai-chat",))
    tokens = {c.name: c.tokens["openai-chat"] for c in cost.tools}
    approx = "" if cost.exact else "~"
    if args.json:
        rows = [
            {
                "name": t.name,
                "effects": sorted(e.value for e in t.effects),
                "trusted_output": t.trusted_output,
                "tokens": tokens[t.name],
                "source": source,
            }
            for t, source in listed
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return EXIT_OK
    width = max([4, *(display_width(t.name) for t, _ in listed)])  # 查询天气 takes 8 columns, not 4
    print(f"{pad('NAME', width)}  {'EFFECTS':<24}  {'OUTPUT':<9}  {approx + 'TOKENS':>7}  SOURCE")
    for t, source in listed:
        effects = ",".join(sorted(e.value for e in t.effects))
        output = "trusted" if t.trusted_output else "untrusted"
        print(f"{pad(t.name, width)}  {effects:<24}  {output:<9}  {tokens[t.name]:>7}  {source}")
    declared = f"{approx}{plural(cost.totals['openai-chat'], 'token')}"
    print(f"total: {plural(len(listed), 'tool')}, {declared} of declarations per request")
    return EXIT_OK


async def _collect(args: argparse.Namespace) -> list[tuple[Tool, str]]:
    listed: list[tuple[Tool, str]] = []
    if args.file is not None:
        listed += [(t, args.file) for t in load_tools_file(args.file)]
    async with mcp_sources(args) as servers:
        for server in servers:
            listed += [(t, f"mcp: {server.label}") for t in server]
    return listed
