"""``toolslip run TOOLS.py "question"``: run the loop on a file of tools and show each step as it happens."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from . import EXIT_ERROR, EXIT_MAX_STEPS, EXIT_OK, EXIT_STOPPED
from .files import load_tools_file
from .render import Renderer

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("run", help="run a question against a file of @tool functions")
    p.add_argument("tools", help="a Python file whose @tool functions the model may call")
    p.add_argument("question", help="what to ask the model")
    p.add_argument("--model", help="e.g. local, openai:gpt-4o-mini, anthropic:claude-sonnet-4-5, scripted")
    p.add_argument("--max-steps", type=int, default=8, help="hard limit on model calls (default 8)")
    p.add_argument("--system", help="a system prompt")
    p.add_argument("--json", action="store_true", help="print the whole transcript as JSON on stdout")
    p.add_argument(
        "--server-tool",
        action="append",
        default=[],
        metavar="KIND[=JSON]",
        help="a tool the provider runs, e.g. web_search or 'web_search={\"max_uses\": 3}' (repeatable)",
    )
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..loop import Agent
    from ..providers import default_model

    if args.max_steps < 1:
        print("toolslip run: --max-steps must be at least 1", file=sys.stderr)
        return EXIT_ERROR
    server_tools = [_server_tool(text) for text in args.server_tool]
    tools = load_tools_file(args.tools)
    model, why = default_model(args.model)
    out = sys.stderr if args.json else sys.stdout
    print(f"model: {model.name} ({why})", file=out)
    agent = Agent(model=model, tools=tools, system=args.system, max_steps=args.max_steps, server_tools=server_tools)
    renderer = Renderer(out)
    result = asyncio.run(agent.arun(args.question, on_event=renderer))
    if args.json:
        print(json.dumps(_transcript_json(result), ensure_ascii=False, indent=2))
    else:
        print(f"\n{result.output}" if result.output else "", file=out)
    served = "".join(f", {n} {key}" for key, n in result.usage.server_tool_use.items() if n)
    print(
        f"[stop: {result.stop_reason} after {result.steps} model calls, {result.tool_calls} tool calls{served}]",
        file=out,
    )
    if result.ok:
        return EXIT_OK
    return EXIT_MAX_STEPS if result.stop_reason == "max_steps" else EXIT_STOPPED


def _transcript_json(result: Any) -> dict[str, Any]:
    from ..messages import message_to_dict

    return {
        "run_id": result.run_id,
        "stop_reason": result.stop_reason,
        "steps": result.steps,
        "output": result.output,
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "server_tool_use": dict(result.usage.server_tool_use),
        },
        "messages": [message_to_dict(m) for m in result.messages],
    }


def _server_tool(text: str) -> Any:
    """``web_search`` or ``web_search={"max_uses": 3}`` as a ServerTool (a ConfigError says what is wrong)."""
    from ..errors import ConfigError
    from ..server_tools import server_tool

    kind, _, options = text.partition("=")
    try:
        parsed = json.loads(options) if options else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--server-tool {text!r}: the options after '=' are not JSON ({exc.msg})") from None
    if not isinstance(parsed, dict):
        raise ConfigError(f"--server-tool {text!r}: the options after '=' must be a JSON object")
    return server_tool(kind.strip(), **parsed)
