"""Dedup: a call equal to one already executed in the run is not executed again.

The model mints a fresh call id on every retry, so call ids cannot tell two slips for the same transfer
apart. The key is the tool's own ``idempotency_key(arguments)`` when it declares one (e.g.
``"transfer:{iban}:{amount}:{reference}"``), else the tool name plus the canonical JSON of the arguments.
Only a successful execution is remembered: a call that failed, was denied or is awaiting approval may be
sent again and will run. It applies to side-effecting tools unless one says ``@tool(dedup=False)``, and
the answer tells the model how to ask for a real second execution when the user wants one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..core.messages import Text, ToolCall, ToolResult

__all__ = ["DUPLICATE_NOTE", "Dedup", "canonical_json", "duplicate_answer", "idempotency_key"]

DUPLICATE_NOTE = "duplicate"
_LONG_KEY = 200

_MARK = (
    "[duplicate: an identical earlier call already ran, so it was not executed again; its result follows. "
    "If the user really wants this done once more (a second item, a repeated payment), call the tool again "
    "with arguments that say so: a quantity, or a new reference or idempotency key]\n"
)


def canonical_json(arguments: Mapping[str, Any]) -> str:
    """One spelling per value: sorted keys, no spaces, non-ASCII kept."""
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def idempotency_key(tool: Tool | None, call: ToolCall) -> str:
    """The real-world action a call stands for: equal keys mean the same action.

    A key longer than 200 characters is replaced by its SHA-256: the journal stores a key with every tool
    entry, and a 10 MB argument must not be stored again in each of them.
    """
    if tool is not None and tool.idempotency_key is not None and call.arguments is not None:
        key = f"{tool.name}:{tool.idempotency_key(call.arguments)}"
    else:
        arguments = canonical_json(call.arguments) if call.arguments is not None else repr(call.raw_arguments)
        key = f"{call.name}:{arguments}"
    if len(key) <= _LONG_KEY:
        return key
    return f"{call.name}:sha256:{hashlib.sha256(key.encode(errors='surrogatepass')).hexdigest()}"


def duplicate_answer(earlier: ToolResult, call_id: str) -> ToolResult:
    """The answer to a duplicate of the call that produced ``earlier``: its result, marked."""
    content = _MARK + earlier.content if isinstance(earlier.content, str) else (Text(text=_MARK), *earlier.content)
    return replace(earlier, call_id=call_id, content=content, outcome="duplicate")


class Dedup(Hook):
    """Answers a repeated call of a deduplicated tool with the earlier result, marked as a duplicate.

    A tool is deduplicated when it is side-effecting, unless it says ``@tool(dedup=False)`` (two identical
    ``add_to_cart(item="coffee")`` calls for two coffees). Its memory lives in the run's context, so it
    also learns from results replayed by a journal on resume: a transfer that ran before a crash is not
    run again when the model asks for it afresh.
    """

    _STATE = "dedup"

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or not tool.deduplicated or call.arguments is None:
            return None
        done, answered = self._memory(ctx)
        earlier = done.get(idempotency_key(tool, call))
        if earlier is None:
            return None
        answered[ctx.step, call.id] = earlier
        return ToolAnswer(result=duplicate_answer(earlier, call.id), note=DUPLICATE_NOTE)

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        if tool is not None and tool.deduplicated and call.arguments is not None and not result.is_error:
            done, answered = self._memory(ctx)
            if (ctx.step, call.id) not in answered:
                done.setdefault(idempotency_key(tool, call), result)
        return result

    @classmethod
    def answered_with(cls, ctx: RunContext, step: int, call_id: str) -> ToolResult | None:
        """The earlier result a Dedup hook of this run answered call ``call_id`` of ``step`` with, if it did."""
        memory = ctx.state.get(cls._STATE)
        return memory[1].get((step, call_id)) if memory is not None else None

    def _memory(self, ctx: RunContext) -> tuple[dict[str, ToolResult], dict[tuple[int, str], ToolResult]]:
        """(key -> first successful result, (step, call id) -> the result this hook answered it with)."""
        memory: tuple[dict[str, ToolResult], dict[tuple[int, str], ToolResult]]
        memory = ctx.state.setdefault(self._STATE, ({}, {}))
        return memory
