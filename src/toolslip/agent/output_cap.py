"""One cap on every tool's output for a run, for a model whose window a single result could fill.

A tool's own ``max_output_chars`` is set where the tool is written; this hook is set where the run is
started (``toolslip run --max-tool-output CHARS``, and by default for the embedded model, whose 8,192-token
window one 350 KB result overflowed 22 times). It runs after the other hooks, so the run journal records
the whole output while the model reads the cut one with a marker saying how much was left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.errors import InvalidValue
from .calls import cut_output
from .hooks import Hook

if TYPE_CHECKING:
    from ..core.messages import ToolCall, ToolResult
    from .hooks import RunContext
    from .tools import Tool

__all__ = ["OutputCap"]


class OutputCap(Hook):
    """Cut each tool result's text to ``max_chars`` (a tool's own smaller ``max_output_chars`` still applies)."""

    def __init__(self, max_chars: int, *, why: str = "") -> None:
        if max_chars < 1:
            raise InvalidValue(f"max_chars must be at least 1, got {max_chars}")
        self.max_chars = max_chars
        self.why = why
        """Said in the marker after the count, e.g. ``"; the cap is 8192 characters (--max-tool-output)"``."""

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        return cut_output(result, self.max_chars, self.why)
