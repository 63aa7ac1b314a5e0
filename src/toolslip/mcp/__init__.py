"""MCP in both directions: MCP servers as tool sources, and toolslip tools served over MCP.

    async with toolslip.mcp.stdio("uvx", "mcp-server-time") as time_tools:
        result = await toolslip.arun(model, "What time is it in Tokyo?", tools=time_tools)

Needs the official MCP SDK: ``pip install 'toolslip[mcp]'``. This package is named like the SDK's
top-level ``mcp``; every import of the SDK here is absolute, so the two never mix.
"""

from __future__ import annotations

try:
    import mcp as _sdk  # noqa: F401  (fail early with an install hint, not deep inside a call)
except ImportError:  # pragma: no cover - depends on the environment
    from ..core.errors import ConfigError

    raise ConfigError("toolslip.mcp needs the MCP SDK: pip install 'toolslip[mcp]'") from None

from .client import McpTools
from .mapping import annotations_from_effects, effects_from_mcp_annotations
from .transports import from_spec, http, list_tools, stdio

__all__ = [
    "McpTools",
    "annotations_from_effects",
    "effects_from_mcp_annotations",
    "from_spec",
    "http",
    "list_tools",
    "stdio",
]
