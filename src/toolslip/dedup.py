"""Dedup: a side-effecting call equal to one already executed in the run is not executed again.

The model mints a fresh call id on every retry, so call ids cannot tell two slips for the same transfer
apart. The key is the tool's own ``idempotency_key(arguments)`` when it declares one (e.g.
``"transfer:{iban}:{amount}:{reference}"``), else the tool name plus the canonical JSON of the arguments.
Only a successful execution is remembered: a call that failed, was denied or is awaiting approval may be
sent again and will run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .hooks import Hook, RunContext, ToolAnswer
from .messages import Text, ToolCall, ToolResult
from .tools import Tool

__all__ = ["DUPLICATE_NOTE", "Dedup", "canonical_json", "idempotency_key"]

DUPLICATE_NOTE = "duplicate"

_MARK = "[duplicate: an identical earlier call already ran; it was not executed again. Its result follows]\n"


def canonical_json(arguments: Mapping[str, Any]) -> str:
    """One spelling per value: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def idempotency_key(tool: Tool | None, call: ToolCall) -> str:
    """The real-world action a call stands for: equal keys mean the same action."""
    if tool is not None and tool.idempotency_key is not None and call.arguments is not None:
        return f"{tool.name}:{tool.idempotency_key(call.arguments)}"
    arguments = canonical_json(call.arguments) if call.arguments is not None else repr(call.raw_arguments)
    return f"{call.name}:{arguments}"


class Dedup(Hook):
    """Answers a repeated side-effecting call with the earlier result, marked as a duplicate.

    Its memory lives in the run's context, so it also learns from results replayed by a journal on
    resume: a transfer that ran before a crash is not run again when the model asks for it afresh.
    """

    _STATE = "dedup"

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or not tool.side_effecting or call.arguments is None:
            return None
        done, answered = self._memory(ctx)
        earlier = done.get(idempotency_key(tool, call))
        if earlier is None:
            return None
        answered.add((ctx.step, call.id))
        content = _MARK + earlier.content if isinstance(earlier.content, str) else (Text(text=_MARK), *earlier.content)
        result = replace(earlier, call_id=call.id, content=content, outcome="duplicate")
        return ToolAnswer(result=result, note=DUPLICATE_NOTE)

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        if tool is not None and tool.side_effecting and call.arguments is not None and not result.is_error:
            done, answered = self._memory(ctx)
            if (ctx.step, call.id) not in answered:
                done.setdefault(idempotency_key(tool, call), result)
        return result

    def _memory(self, ctx: RunContext) -> tuple[dict[str, ToolResult], set[tuple[int, str]]]:
        """(key -> first successful result, (step, call id) of calls this hook answered) for this run."""
        memory: tuple[dict[str, ToolResult], set[tuple[int, str]]] = ctx.state.setdefault(self._STATE, ({}, set()))
        return memory
