"""Tool search: find the few tools a request needs in a set too large to send whole.

:class:`ToolSearch` is the loop's ``tool_search`` mode, built on the lexical index
(:class:`~toolslip.quality.index.ToolIndex`, see there for what it does with words): the model first sees
only a search tool (plus any pinned tools) and the tools it finds are offered from the next step on, as
Anthropic's tool search defers loading.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..core.errors import ConfigError, ToolDefinitionError
from ..core.messages import Request, ToolCall, ToolResult, ToolSpec
from ..formats.schema import name_pattern
from .index import FIELD_WEIGHTS, Hit, ToolIndex
from .text import terms

if TYPE_CHECKING:
    from ..agent.context import Tools
    from ..agent.tools import Tool

__all__ = ["DEFAULT_FLOOR", "FIELD_WEIGHTS", "Hit", "ToolIndex", "ToolSearch", "terms"]


DEFAULT_FLOOR = 1.45
"""The score a tool must beat to be offered by :class:`ToolSearch`: calibrated on BFCL's live questions
(half of them) so that 95% of the right tools that reach the top 5 clear it; on the held-out half it keeps
96.5% of them and answers "no tool fits" to about half the questions no offered tool can answer
(``benchmarks/tool_search.py``; recalibrated when a word every tool shares stopped weighing almost nothing
and a question's verb began to count, see :data:`~toolslip.quality.index.BACKGROUND`)."""

_NAME = re.compile(name_pattern("openai-chat"))


class ToolSearch(Hook):
    """The ``tool_search`` mode: offer a search tool instead of the whole set, and add what it finds.

    On every step the model is offered the search tool, the ``pinned`` tools and every tool found so far
    in this run. A call to the search tool is answered by the hook from the toolbox's index (it never
    reaches a tool function): the tools scoring over ``floor``, with their scores, which are offered from the
    next step on; when none does, the model is told that no tool fits and to answer without one or ask the
    user. A call to a tool that exists but was not found yet still runs (the model guessed its name right)
    and is then offered like a found one.

    Args:
        pinned: names of tools offered from the first step, e.g. the one or two used in most runs.
        k: how many tools one search returns at most.
        floor: the score a tool must beat (see :class:`Hit`); 0 offers anything sharing a word.
        name: the search tool's name; it must not be the name of one of the agent's tools.
    """

    def __init__(
        self, *, pinned: Iterable[str] = (), k: int = 5, floor: float = DEFAULT_FLOOR, name: str = "tool_search"
    ) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"ToolSearch(k=...) must be a whole number of tools, at least 1, not {k!r}")
        if isinstance(floor, bool) or not isinstance(floor, int | float) or not floor >= 0:
            raise ConfigError(f"ToolSearch(floor=...) must be a score of 0 or more, not {floor!r}")
        if not isinstance(name, str) or not _NAME.match(name):
            raise ConfigError(
                f"ToolSearch(name={name!r}): a tool name is 1 to 64 letters, digits, '_' or '-' for every provider"
            )
        self.pinned = tuple(pinned)
        self.k = k
        self.floor = float(floor)
        self.spec = ToolSpec(
            name=name,
            description=(
                "Search the available tools by what you want to do. Only the tools you have found (and a few "
                "always offered) can be called, so use this first whenever no offered tool fits the task. "
                f"Returns up to {k} tools with their descriptions and match scores; they become callable from "
                "your next step. When no tool fits, it says so (not an error): then answer without a tool or "
                "ask the user, and never invent a tool name."
            ),
            parameters={
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "The action and its object in a few words, e.g. 'convert currency'.",
                    }
                },
                "required": ["query"],
            },
        )

    def _found(self, ctx: RunContext) -> list[str]:
        found: list[str] = ctx.state.setdefault(f"tool_search:{self.spec.name}", [])
        return found

    def check(self, tools: Tools) -> None:
        if self.spec.name in tools:
            raise ToolDefinitionError(
                f"a tool is named {self.spec.name!r}, the search tool's name; pass ToolSearch(name=...)"
            )

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        self.check(ctx.tools)  # again: an MCP server lists its tools only once entered
        missing = [n for n in self.pinned if n not in ctx.tools]
        if missing:
            raise ToolDefinitionError(f"pinned tool {missing[0]!r} is not one of the agent's tools")
        offered = {*self.pinned, *self._found(ctx)}
        return replace(request, tools=(self.spec, *(t for t in request.tools if t.name in offered)))

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if call.name != self.spec.name:
            if tool is not None and call.name not in self._found(ctx):
                self._found(ctx).append(call.name)
            return None
        query = (call.arguments or {}).get("query")
        if not isinstance(query, str) or not query.strip():
            text = "tool_search needs a 'query' string: the action and its object, e.g. 'convert currency'."
            return ToolAnswer(result=ToolResult(call_id=call.id, name=call.name, content=text, is_error=True), note="")
        hits = ctx.tools.index.search(query, self.k, floor=self.floor)
        found = self._found(ctx)
        found.extend(h.name for h in hits if h.name not in found)
        lines = [f"- {h.name} (score {h.score:.1f}): {_first_line(ctx.tools[h.name].description)}" for h in hits]
        text = (
            f"Found {len(hits)} tools for {query!r}, best first; you can call them from now on:\n" + "\n".join(lines)
            if hits
            else f"No tool fits {query!r} (an empty result, not an error). Answer without a tool, ask the user, or "
            "search again with other words if the request names a task this search did not describe."
        )
        note = f"tool search {query!r}: {', '.join(f'{h.name} {h.score:.1f}' for h in hits) or 'nothing fits'}"
        return ToolAnswer(result=ToolResult(call_id=call.id, name=call.name, content=text), note=note)


def _first_line(description: str) -> str:
    return description.strip().splitlines()[0] if description.strip() else ""
