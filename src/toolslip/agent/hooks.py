"""The loop's extension seam: hooks see every model call and every tool call, and may answer them.

Exactly-once execution, approval, the run journal, the injection gate and the repeated-call guard are all
hooks, so the loop body stays one screen long. Hooks run in the order given; the first ``before_*``
that returns a value answers the call and the rest (and the real call) are skipped; every ``after_*``
runs, each seeing the previous one's output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.messages import ModelResponse, Request, ToolCall, ToolResult
from .context import RunContext, Tools

if TYPE_CHECKING:
    from ..core.result import RunResult
    from .tools import Tool

__all__ = ["Hook", "RunContext", "ToolAnswer"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnswer:
    """A hook's answer to a call in place of running the tool; ``note`` says why (shown by the CLI)."""

    result: ToolResult
    note: str


class Hook:
    """Subclass and override what you need; every method defaults to doing nothing."""

    def check(self, tools: Tools) -> None:
        """Called when an :class:`~toolslip.Agent` is built with this hook: raise for a setup that cannot
        work, so it fails there and not at the first request. ``tools`` may still be empty (an MCP server
        lists its tools only once entered)."""
        return None

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        """Reshape what is sent (which tools are offered, tool_choice, how results are shown)."""
        return request

    async def before_model(self, ctx: RunContext, request: Request) -> ModelResponse | None:
        return None

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        return response

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        return None

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        return result

    async def on_finish(self, ctx: RunContext, result: RunResult) -> None:
        return None

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        """The run ended by raising ``error`` (a provider failure, a cancellation); it is re-raised after."""
        return None
