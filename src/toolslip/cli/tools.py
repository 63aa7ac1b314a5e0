"""``toolslip tools [TOOLS.py ...] [--mcp CMD]``: what the model would be offered, and what it costs.

One line per tool: its name, declared effects, whether its output is trusted, and the tokens its
declaration takes in every OpenAI Chat request (:func:`toolslip.quality.tokens.declaration_cost`); under
it, the description and one line per parameter, as the model reads them. ``--json`` prints each tool's
whole declaration (description and JSON Schema) with the same figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from ..agent.tools import Tool
from ..core._display import pad, plural
from ..core._display import width as display_width
from . import EXIT_OK, UsageError
from .files import load_tools_file
from .mcp_option import add_mcp_option, mcp_sources

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("tools", help="list tools from a file and/or MCP servers: names, effects, token cost")
    p.add_argument("files", nargs="*", metavar="TOOLS.py", help="Python files of @tool functions")
    add_mcp_option(p)
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..quality.tokens import declaration_cost

    if not args.files and not args.mcp:
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
                "description": t.description,
                "parameters": t.parameters,
                "strict": t.strict,
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
        for line in _described(t):
            print(f"    {line}")
    declared = f"{approx}{plural(cost.totals['openai-chat'], 'token')}"
    print(f"total: {plural(len(listed), 'tool')}, {declared} of declarations per request")
    return EXIT_OK


async def _collect(args: argparse.Namespace) -> list[tuple[Tool, str]]:
    listed: list[tuple[Tool, str]] = []
    for path in args.files:
        listed += [(t, path) for t in load_tools_file(path)]
    async with mcp_sources(args) as servers:
        for server in servers:
            listed += [(t, f"mcp: {server.label}") for t in server]
    return listed


def _described(t: Tool) -> list[str]:
    """The description's first paragraph, then ``name: type (required) - description`` per parameter."""
    lines = [" ".join(t.description.split("\n\n")[0].split())] if t.description.strip() else []
    schema = t.parameters
    required = set(schema.get("required", ()))
    for name, sub in (schema.get("properties") or {}).items():
        sub = sub if isinstance(sub, dict) else {}
        kind = " | ".join(json.dumps(v, ensure_ascii=False) for v in sub["enum"]) if "enum" in sub else _type(sub)
        note = " (required)" if name in required else (f" = {json.dumps(sub['default'])}" if "default" in sub else "")
        about = f" - {' '.join(str(sub['description']).split())}" if sub.get("description") else ""
        lines.append(f"{name}: {kind}{note}{about}")
    return lines


def _type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(map(str, kind))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {_type(schema['items'])}"
    options = schema.get("anyOf") or schema.get("oneOf")
    if kind is None and options:
        return " | ".join(_type(o) for o in options if isinstance(o, dict))
    return str(kind or "any")
