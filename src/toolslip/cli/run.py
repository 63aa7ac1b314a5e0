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
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..loop import Agent
    from ..providers import default_model

    if args.max_steps < 1:
        print("toolslip run: --max-steps must be at least 1", file=sys.stderr)
        return EXIT_ERROR
    tools = load_tools_file(args.tools)
    model, why = default_model(args.model)
    out = sys.stderr if args.json else sys.stdout
    print(f"model: {model.name} ({why})", file=out)
    agent = Agent(model=model, tools=tools, system=args.system, max_steps=args.max_steps)
    renderer = Renderer(out)
    result = asyncio.run(agent.arun(args.question, on_event=renderer))
    if args.json:
        print(json.dumps(_transcript_json(result), ensure_ascii=False, indent=2))
    elif not renderer.streamed:  # streamed text is already on the screen
        print(f"\n{result.output}" if result.output else "", file=out)
    print(f"[stop: {result.stop_reason} after {result.steps} model calls, {result.tool_calls} tool calls]", file=out)
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
        "usage": {"input_tokens": result.usage.input_tokens, "output_tokens": result.usage.output_tokens},
        "messages": [message_to_dict(m) for m in result.messages],
    }
