"""``toolslip lint TOOLS``: check tool descriptions and what the set costs; exit 1 on errors (for CI).

TOOLS is a Python file of ``@tool`` functions or a JSON file of declarations in any shape ``convert`` reads
(see :func:`load_declarations`). Another source of tools, such as an MCP
server, plugs in at :func:`load_subjects`: it returns ``Tool`` objects (which carry their effects) or
``ToolSpec`` declarations for :func:`toolslip.quality.lint.lint`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from typing import Any

from ..agent.tools import Tool
from ..core._files import require_file
from ..core.errors import ConfigError, FormatError
from ..core.messages import ToolSpec
from . import EXIT_ERROR, EXIT_OK, UsageError
from .files import load_output_type, load_tools_file
from .mcp_option import add_mcp_option

__all__ = ["load_declarations", "load_subjects", "register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("lint", help="check tool descriptions, overlaps and token cost")
    p.add_argument("tools", nargs="?", help="a Python file of @tool functions, or a JSON list of tool declarations")
    add_mcp_option(p)
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    p.add_argument(
        "--disable",
        action="append",
        default=[],
        metavar="RULE",
        help="skip a rule everywhere, or for one tool as TOOL:RULE (repeatable)",
    )
    p.add_argument("--fail-on", choices=("error", "warning"), default="error", help="what makes the exit code 1")
    p.add_argument("--no-cost", action="store_true", help="skip counting tokens")
    p.add_argument(
        "--output-schema",
        metavar="SCHEMA.json|FILE.py:TYPE",
        help="also lint the answer's schema, as toolslip run --output-schema takes it",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..quality.lint import lint, lint_output

    if args.tools is None and not args.mcp and not args.output_schema:
        raise UsageError(
            "give a tools file or JSON list of declarations, --mcp CMD, or both; "
            "or --output-schema for an answer's schema"
        )
    tools = load_subjects(args.tools) if args.tools else []
    for spec in args.mcp:  # Tools whose effects come from the server's annotations, so side-effect rules apply
        from ..mcp import list_tools

        tools += asyncio.run(list_tools(spec))
    reports = [lint(tools, disable=args.disable, cost=not args.no_cost)] if args.tools or args.mcp else []
    if args.output_schema:
        reports.append(lint_output(load_output_type(args.output_schema), disable=args.disable))
    for report in reports:
        if args.format == "json":
            print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        else:
            print(report.render())
    failed = any(r.errors or (args.fail_on == "warning" and r.warnings) for r in reports)
    return EXIT_ERROR if failed else EXIT_OK


def load_subjects(source: str) -> list[Tool | ToolSpec]:
    """The tools named by ``source``: ``Tool`` objects from a Python file, declarations from a JSON file."""
    if source.endswith(".py"):
        return list(load_tools_file(source))
    return list(load_declarations(source))


# Each declaration shape ``convert`` reads, by the keys that tell it apart, and the format that reads it.
_SHAPES = (
    ("an OpenAI Chat tool", lambda d: "function" in d, "openai-chat"),
    ("an Anthropic tool", lambda d: "input_schema" in d, "anthropic"),
    ("an MCP tool", lambda d: "inputSchema" in d, "mcp"),
    ("an OpenAI Responses tool", lambda d: d.get("type") == "function", "openai-responses"),
    ("a bare function doc", lambda d: "name" in d and "type" not in d, "openai-functions"),
)


def load_declarations(path: str) -> list[ToolSpec]:
    """Read tool declarations from a JSON file: a list of them, one of them, or a body that holds them.

    Every shape ``convert`` reads is accepted, mixed freely: OpenAI Chat tools (``{"type": "function",
    "function": {...}}``), bare function docs (``{"name", "description", "parameters"}``, the legacy
    ``functions`` list and most tool catalogues), Responses tools (``{"type": "function", "name", ...}``),
    Anthropic tools (``{"name", "input_schema"}``), Converse ``toolSpec`` entries, Gemini
    ``functionDeclarations`` entries, and MCP tools (``{"name", "inputSchema"}``, as
    ``tools/list`` answers). Each is read by its wire format's own reader.
    """
    file = require_file(path, "tools file")
    if file.suffix != ".json":
        raise ConfigError(f"{path}: lint reads a Python file (.py) or a JSON list of tool declarations (.json)")
    try:
        data: Any = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path} is not valid JSON: {exc}") from None
    if isinstance(data, dict):
        config = data.get("toolConfig")  # a Converse request body
        listed = data.get("tools", data.get("functions", config.get("tools") if isinstance(config, dict) else None))
        data = listed if isinstance(listed, list) else [data]
    if isinstance(data, list):
        data = [one for item in data for one in _entries(item)]
    if not isinstance(data, list) or not data:
        raise ConfigError(
            f"{path}: expected a non-empty JSON list of tool declarations (or an object with 'tools' or 'functions')"
        )
    return [_declaration(path, i, item) for i, item in enumerate(data)]


def _entries(item: object) -> list[object]:
    """A Gemini ``tools`` entry as its declarations, each in an entry of its own; anything else as it is."""
    declarations = (
        item.get("functionDeclarations", item.get("function_declarations")) if isinstance(item, dict) else None
    )
    if not isinstance(declarations, list) or len(declarations) < 2:
        return [item]
    return [{"functionDeclarations": [one]} for one in declarations]


def _declaration(path: str, i: int, item: object) -> ToolSpec:
    from ..formats import get_format, read_declaration

    if isinstance(item, dict):
        try:
            fmt, spec = read_declaration(item, f"{path}[{i}]")
        except FormatError:
            fmt = ""  # an MCP tool, or no declaration: told apart below
        if fmt in ("gemini", "bedrock"):  # their spellings, which read_declaration tells apart
            return spec

    shape = next((s for s in _SHAPES if isinstance(item, dict) and s[1](item)), None)
    if shape is None or not isinstance(item, dict):
        kinds = "; ".join(s[0] for s in _SHAPES)
        raise ConfigError(f"{path}: item {i} is not a tool declaration of any shape lint reads ({kinds})")
    fmt = shape[2]
    if fmt == "mcp":  # an MCP tool is an Anthropic one with another key for its schema
        item = {
            "name": item.get("name"),
            "description": item.get("description", ""),
            "input_schema": item["inputSchema"],
        }
        fmt = "anthropic"
    try:
        (spec,) = get_format(fmt).tools_from_wire([item])
    except FormatError as exc:  # its path names the one-item list it was given: say which item of the file
        where = re.sub(r"^(?:tools|functions)\[0\]", f"[{i}]", exc.path)
        raise ConfigError(f"{path}{where}: {str(exc).removeprefix(f'{exc.path}: ')} ({shape[0]})") from None
    return spec
