"""``toolslip run [TOOLS.py ...] "question"``: run the loop and show each step as it happens.

Tools come from Python files of ``@tool`` functions, from MCP servers (``--mcp``), or both. The run is
journaled by default, so ``toolslip resume RUN_ID`` can finish it after a crash or a paused approval, and
``toolslip run -c "follow-up"`` asks a follow-up of it with its whole transcript. ``-`` as the question
reads it from stdin. Budgets (``--max-tokens-total``, ``--max-tool-calls``, ``--max-cost``...) stop the run
with a named stop and exit code 4.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

from . import UsageError
from .argtypes import at_least, check_model, temperature
from .conversation import add_limit_options, continue_with, earlier_run, limits_from_args, split_items
from .durable import add_run_options, gate_approver_from_args, hooks_from_args, journal_from_args
from .files import load_output_type, load_tools_files
from .interrupts import ctrl_c_held
from .mcp_option import add_mcp_option, mcp_sources
from .outcome import Outcome
from .render import Renderer
from .resume import finish, is_model_file, load_model, print_value, value_json
from .runs import open_store
from .streams import stdout_to_stderr
from .window import add_window_options, output_cap, sized_model

if TYPE_CHECKING:
    from ..core.messages import ServerTool
    from ..core.model import Model
    from ..core.result import RunResult
    from ..durable.journal import Journal
    from .conversation import Earlier

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help="ask a question with a file of @tool functions (and/or MCP servers) as tools",
        description="toolslip run [TOOLS.py ...] QUESTION — tools files may be left out when --mcp gives the tools "
        "or --continue continues a run that had them.",
    )
    p.add_argument(
        "items",
        nargs="*",
        metavar="[TOOLS.py ...] QUESTION",
        help="tools files (optional), then the question (- reads it from stdin)",
    )
    p.add_argument(
        "-c",
        "--continue",
        dest="continue_run",
        nargs="?",
        const="",
        metavar="RUN_ID",
        help="ask a follow-up of the newest run (or RUN_ID) with its whole transcript, its tools and model",
    )
    p.add_argument(
        "--model",
        help="local, local:qwen2.5-coder-1.5b, openai:gpt-4o-mini, anthropic:claude-sonnet-4-6..., "
        "or scripted (the offline demo, no model)",
    )
    p.add_argument("--max-steps", type=at_least(1), default=8, help="hard limit on model calls (default 8)")
    p.add_argument("--system", help="a system prompt")
    p.add_argument(
        "--temperature",
        type=temperature,
        help="sample at this temperature (0 to 2; default: the model's own, greedy for the local model)",
    )
    p.add_argument(
        "--code",
        action="store_true",
        help="code mode: the model answers with a Python program that calls the tools, run in a sandbox "
        "(each call through the same journal, approval and gate); see docs/code-mode.md",
    )
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
    add_limit_options(p)
    add_run_options(p)
    add_window_options(p)
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    from ..providers import default_model

    args.tools, args.question, continued = split_items(args.items, args.continue_run)
    earlier = continued_why = None
    if continued is not None:
        if args.no_journal:
            raise UsageError("--continue reads the earlier run from the journal; drop --no-journal")
        earlier = earlier_run(open_store(args.journal, read_only=True), continued)
        continued_why = continue_with(args, earlier)
    if not args.tools and not args.mcp:
        raise UsageError("no tools: give a tools file before the question, or --mcp 'CMD ...'")
    args.server_tools = [_server_tool(text) for text in args.server_tool]
    args.limits = limits_from_args(args)
    local_tools = load_tools_files(args.tools) if args.tools else None  # may register a provider
    args.output_type = load_output_type(args.output_schema) if args.output_schema else None
    if not is_model_file(args.model):
        check_model(args.model)
    with ctrl_c_held():  # the provider's HTTP stack (or the local model's) is imported here
        model, why = (load_model(args.model), "given") if is_model_file(args.model) else default_model(args.model)
    model = sized_model(args, model)
    why = continued_why + why.removeprefix("given") if continued_why else why  # a scripted model still says so
    json_only = args.json or args.output_type is not None  # stdout: the JSON alone
    out = sys.stderr if json_only else sys.stdout
    print(f"model: {model.name} ({why})", file=out)
    if args.server_tools and model.name.split(":")[0] in _NO_SERVER_TOOLS:
        kinds = ", ".join(dict.fromkeys(t.kind for t in args.server_tools))
        print(
            f"warning: --server-tool {kinds} is left out: the {model.name} model runs no server tools "
            "(the anthropic: and openai: services do)",
            file=sys.stderr,
        )
    renderer = Renderer(out, typed=args.output_type is not None)
    outcome = Outcome(renderer)
    # resume must rebuild the same model, so the journal records the resolved name, not an empty default
    args.model = args.model or model.name
    journal = journal_from_args(args)
    if journal is not None and earlier is not None:
        journal.meta["continues"] = earlier.run_id
        print(f"continuing run {earlier.run_id} ({len(earlier.messages)} messages)", file=out)
    with stdout_to_stderr() if json_only else contextlib.nullcontext():  # a tool's prints too
        result = asyncio.run(_run(args, model, local_tools, outcome, journal, earlier))
    if args.json:
        print(json.dumps(_transcript_json(result), ensure_ascii=False, indent=2))
        renderer.streamed = True  # the answer is in the JSON
    code = finish(result, outcome, renderer, journal, args.journal)
    if args.output_type is not None and not args.json:
        print_value(result, outcome.ungrounded)
    elif result.output_error is not None:
        print(f"no valid answer: {result.output_error}", file=sys.stderr)
    return code


_NO_SERVER_TOOLS = frozenset({"scripted", "local"})
"""Models that answer without ever running a server tool: a ``--server-tool`` given to them would vanish
unnoticed (the HTTP formats without server tools refuse one in a sentence of their own)."""


async def _run(
    args: argparse.Namespace,
    model: Model,
    local_tools: Any,
    outcome: Outcome,
    journal: Journal | None,
    earlier: Earlier | None = None,
) -> RunResult:
    from ..agent.loop import Agent
    from ..agent.tools import Toolbox
    from ..core.messages import Settings

    hooks = hooks_from_args(args, journal)
    if (cap := output_cap(args, model)) is not None:  # last: the journal records the whole output
        hooks.append(cap)
    if args.gate:  # after the journal's replayer, before dedup and approval
        from ..guard.policy import TaintGate

        hooks.insert(1 if journal is not None else 0, TaintGate(approver=gate_approver_from_args(args)))
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
            limits=args.limits,
            output_type=args.output_type,
            output_mode=args.output_mode,
            mode="code" if args.code else "tool",
            settings=Settings(temperature=args.temperature),
        )
        history = earlier.messages if earlier is not None else None
        try:
            return await agent.arun(args.question, on_event=outcome, history=history)
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
        **({"data": json.loads(value_json(result.data))} if result.data is not None else {}),
        "usage": {
            "input_tokens": result.usage.input_tokens,
            "output_tokens": result.usage.output_tokens,
            "server_tool_use": dict(result.usage.server_tool_use),
        },
        "cost": result.cost,
        "messages": [message_to_dict(m) for m in result.messages],
    }


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
