"""``toolslip run [TOOLS.py] "question"``: run the loop and show each step as it happens.

Tools come from a Python file of ``@tool`` functions, from MCP servers (``--mcp``), or both. The run is
journaled by default, so ``toolslip resume RUN_ID`` can finish it after a crash or a paused approval.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from . import UsageError
from .argtypes import at_least, check_model
from .durable import add_run_options, approver_from_args, hooks_from_args, journal_from_args
from .files import load_output_type, load_tools_file
from .interrupts import ctrl_c_held
from .mcp_option import add_mcp_option, mcp_sources
from .outcome import Outcome
from .render import Renderer
from .resume import finish, is_model_file, load_model

if TYPE_CHECKING:
    from ..core.messages import ServerTool
    from ..core.model import Model
    from ..core.result import RunResult
    from ..durable.journal import Journal

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="ask a question with a file of @tool functions (and/or MCP servers) as tools",
        description="toolslip run [TOOLS.py] QUESTION — the tools file may be left out when --mcp gives the tools.",
    )
    p.add_argument("items", nargs="+", metavar="[TOOLS.py] QUESTION", help="a tools file (optional), then the question")
    p.add_argument(
        "--model",
        help="local, local:qwen2.5-coder-1.5b, openai:gpt-4o-mini, anthropic:claude-sonnet-4-6..., "
        "or scripted (the offline demo, no model)",
    )
    p.add_argument("--max-steps", type=at_least(1), default=8, help="hard limit on model calls (default 8)")
    p.add_argument("--system", help="a system prompt")
    p.add_argument("--json", action="store_true", help="print the whole transcript as JSON on stdout")
    p.add_argument(
        "--output-schema",
        metavar="SCHEMA.json|FILE.py:TYPE",
        help="end in a value of this JSON Schema (or Python type): it is validated and printed as JSON on stdout",
    )
    p.add_argument(
        "--output-mode",
        choices=("native", "tool", "prompted"),
        help="how --output-schema is asked for (default: the provider's own structured output where it has one)",
    )
    p.add_argument(
        "--no-stream", action="store_true", help="wait for each whole answer (for servers that cannot stream)"
    )
    p.add_argument(
        "--gate",
        action="store_true",
        help="injection gate: once untrusted tool output is in the context, side-effecting calls need approval",
    )
    p.add_argument(
        "--server-tool",
        action="append",
        default=[],
        metavar="KIND[=JSON]",
        help="a tool the provider runs, e.g. web_search or 'web_search={\"max_uses\": 3}' (repeatable)",
    )
    add_mcp_option(p)
    add_run_options(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..providers import default_model

    if len(args.items) > 2:
        raise UsageError("give at most a tools file and one question; quote the question")
    args.tools, args.question = args.items if len(args.items) == 2 else (None, args.items[0])
    if args.tools is None and args.question.endswith(".py"):
        raise UsageError(f"no question: {args.question} looks like the tools file; give the question after it")
    if not args.question.strip():
        raise UsageError("the question is empty; give the question after the tools file, in quotes")
    if args.tools is None and not args.mcp:
        raise UsageError("no tools: give a tools file before the question, or --mcp 'CMD ...'")
    args.server_tools = [_server_tool(text) for text in args.server_tool]
    local_tools = load_tools_file(args.tools) if args.tools else None  # may register a provider
    args.output_type = load_output_type(args.output_schema) if args.output_schema else None
    if not is_model_file(args.model):
        check_model(args.model)
    with ctrl_c_held():  # the provider's HTTP stack (or the local model's) is imported here
        model, why = (load_model(args.model), "given") if is_model_file(args.model) else default_model(args.model)
    out = sys.stderr if args.json or args.output_type is not None else sys.stdout  # stdout: the JSON alone
    print(f"model: {model.name} ({why})", file=out)
    renderer = Renderer(out)
    outcome = Outcome(renderer)
    # resume must rebuild the same model, so the journal records the resolved name, not an empty default
    args.model = args.model or model.name
    journal = journal_from_args(args)
    result = asyncio.run(_run(args, model, local_tools, outcome, journal))
    if args.json:
        print(json.dumps(_transcript_json(result), ensure_ascii=False, indent=2))
        renderer.streamed = True  # the answer is in the JSON
    code = finish(result, outcome, renderer, journal, args.journal)
    if result.output_error is not None:
        print(f"no valid answer: {result.output_error}", file=sys.stderr)
    elif args.output_type is not None and not args.json and result.ok:
        print(_value_json(result.data))
    return code


async def _run(
    args: argparse.Namespace, model: Model, local_tools: Any, outcome: Outcome, journal: Journal | None
) -> RunResult:
    from ..agent.loop import Agent
    from ..agent.tools import Toolbox

    hooks = hooks_from_args(args, journal)
    if args.gate:  # after the journal's replayer, before dedup and approval
        from ..guard.policy import TaintGate

        hooks.insert(1 if journal is not None else 0, TaintGate(approver=approver_from_args(args)))
    async with mcp_sources(args) as servers:
        tools = Toolbox([*(local_tools or ()), *servers])
        agent = Agent(
            model=model,
            tools=tools,
            system=args.system,
            max_steps=args.max_steps,
            hooks=hooks,
            server_tools=args.server_tools,
            stream=False if args.no_stream else None,
            output_type=args.output_type,
            output_mode=args.output_mode,
        )
        try:
            return await agent.arun(args.question, on_event=outcome)
        finally:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


def _transcript_json(result: RunResult) -> dict[str, Any]:
    from ..core.messages import message_to_dict

    return {
        "run_id": result.run_id,
        "stop_reason": result.stop_reason,
        "steps": result.steps,
        "output": result.output,
        **({"data": json.loads(_value_json(result.data))} if result.data is not None else {}),
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "server_tool_use": dict(result.usage.server_tool_use),
        },
        "messages": [message_to_dict(m) for m in result.messages],
    }


def _value_json(value: Any) -> str:
    """A validated answer as JSON text (pydantic models and dataclasses as their fields)."""
    from ..agent.outputs import serialize_output

    text = serialize_output(value)
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) or not isinstance(text, str) else text


def _server_tool(text: str) -> ServerTool:
    """``web_search`` or ``web_search={"max_uses": 3}`` as a ServerTool (a UsageError says what is wrong)."""
    from ..core.errors import ConfigError
    from ..formats.server_tools import server_tool

    kind, _, options = text.partition("=")
    try:
        parsed = json.loads(options) if options else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"--server-tool {text!r}: the options after '=' are not JSON ({exc.msg})") from None
    if not isinstance(parsed, dict):
        raise UsageError(f"--server-tool {text!r}: the options after '=' must be a JSON object")
    try:
        return server_tool(kind.strip(), **parsed)
    except ConfigError as exc:  # an unknown kind or option, as the user wrote it
        raise UsageError(str(exc)) from None
