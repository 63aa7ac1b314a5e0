"""The loop's extension seam: hooks see every model call and every tool call, and may answer them.

Exactly-once execution, approval, the run journal, the injection gate and the repeated-call guard are all
hooks, so the loop body stays one screen long. Hooks run in the order given; the first ``before_*``
that returns a value answers the call and the rest (and the real call) are skipped; every ``after_*``
runs, each seeing the previous one's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.messages import Message, ModelResponse, Request, ToolCall, ToolResult, Usage

if TYPE_CHECKING:
    from ..core.events import Event
    from ..core.result import RunResult
    from .tools import Tool, Toolbox

__all__ = ["Hook", "RunContext", "ToolAnswer"]


@dataclass(kw_only=True)
class RunContext:
    """The state of one run, shared by the loop and its hooks."""

    run_id: str
    model_name: str
    tools: Toolbox
    messages: list[Message]
    step: int = 0
    usage: Usage = field(default_factory=Usage)
    state: dict[str, Any] = field(default_factory=dict)
    """Scratch space for hooks, keyed by the hook's own name."""
    stop_reason: str | None = None
    """Set by :meth:`stop` to end the run after the current turn."""
    emit: Any = None
    """Callable[[Event], None] delivering events to the run's listener."""

    def stop(self, reason: str) -> None:
        """End the run after this turn with ``reason`` as its stop reason (e.g. ``"paused"``)."""
        self.stop_reason = reason

    def event(self, event: Event) -> None:
        if self.emit is not None:
            self.emit(event)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAnswer:
    """A hook's answer to a call in place of running the tool; ``note`` says why (shown by the CLI)."""

    result: ToolResult
    note: str


class Hook:
    """Subclass and override what you need; every method defaults to doing nothing."""

    def check(self, tools: Toolbox) -> None:
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
