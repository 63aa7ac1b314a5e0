"""One call, one result: how the loop (and the MCP server) runs a slip and what the model reads back.

Every way a call can fail becomes an error result that tells the model what to fix, never an exception:
an unknown tool name, arguments that are not a JSON object or do not fit the schema, the tool's own
error (its text passed on unchanged), a timeout, any other failure. Output longer than the tool allows
is cut with a marker, and a call the run never ran says why. How the tool's function itself runs
(thread, process, timeouts) is :mod:`toolslip.agent.execution`'s.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from ..core.errors import ArgumentError, ToolError
from ..core.messages import ToolCall, ToolResult
from .context import RunContext
from .execution import timeout_outcome
from .tools import Tool, Toolbox

__all__ = ["cut_output", "execute_call", "not_executed", "truncate_output"]


async def execute_call(call: ToolCall, tool: Tool | None, tools: Toolbox, ctx: RunContext | None = None) -> ToolResult:
    """Run one call and turn every failure into an error result that tells the model what to fix.

    ``ctx`` is the run's context: a tool that asks for it gets the copy made for this call."""
    if tool is None:
        available = ", ".join(tools.names) or "(none)"
        return _error(
            call, f"unknown tool {call.name!r}. Available tools: {available}. Call one of them by its exact name."
        )
    if call.arguments is None:
        problem = _json_problem(call.raw_arguments)
        return _error(
            call, f"the arguments are not a JSON object ({problem}). Send the call again with one JSON object."
        )
    own = ctx.for_call(call) if ctx is not None and tool.takes_context else None
    try:
        if tool.timeout is None:
            output = await tool.invoke(call.arguments, own)
        else:
            output = await asyncio.wait_for(tool.invoke(call.arguments, own), tool.timeout)
    except ArgumentError as exc:
        return _error(call, f"{exc}. Fix these arguments and call {tool.name} again.")
    except ToolError as exc:  # the tool chose the error text itself: pass it on unchanged
        return ToolResult(
            call_id=call.id,
            name=call.name,
            content=exc.content,
            is_error=True,
            untrusted=not tool.trusted_output,
            outcome="failed",
        )
    except TimeoutError:
        outcome = timeout_outcome(tool.fn, tool.isolate)
        return _error(call, f"{tool.name} timed out after {tool.timeout:g} s and {outcome}.")
    except Exception as exc:  # a tool's own failure is information for the model, not a crash
        return _error(call, f"{tool.name} failed: {type(exc).__name__}: {exc}")
    untrusted, spans = tool.untrusted_parts(output)
    return ToolResult(
        call_id=call.id, name=call.name, content=output, untrusted=untrusted, untrusted_spans=spans, outcome="ran"
    )


def _error(call: ToolCall, text: str) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, outcome="failed")


def truncate_output(result: ToolResult, tool: Tool | None) -> ToolResult:
    """Cut text output longer than the tool's ``max_output_chars``, with a marker the model can read."""
    return cut_output(result, tool.max_output_chars if tool is not None else None)


def cut_output(result: ToolResult, limit: int | None, why: str = "") -> ToolResult:
    """``result`` with its text cut to ``limit`` characters and a marker saying how much was left out (and ``why``)."""
    if limit is None or not isinstance(result.content, str) or len(result.content) <= limit:
        return result
    cut = len(result.content) - limit
    marker = f"\n[... output truncated: {cut} more characters not shown{why}]"
    return replace(result, content=result.content[:limit] + marker)


def _json_problem(raw: str | None) -> str:
    if raw is None:
        return "no arguments were sent"
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}; got {raw[:200]!r}"
    return f"got a JSON {type(value).__name__}, not an object"


def not_executed(call: ToolCall, limit: int = 0, *, why: str = "") -> ToolResult:
    """The result of a call the run stopped before running: at its step limit, or for ``why``."""
    return ToolResult(
        call_id=call.id,
        name=call.name,
        content=f"not executed: {why or f'the run reached its step limit of {limit} model calls'}",
        is_error=True,
        outcome="not_executed",
    )
