"""toolslip: define a tool once, speak every wire format, and run the tool-calling loop safely.

``import toolslip`` is cheap: names are loaded from their modules on first use, so the HTTP client,
pydantic and the provider SDKs are imported only when something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .agent.context import Context, RunContext
    from .agent.debug import CheckHook
    from .agent.hooks import Hook, ToolAnswer
    from .agent.limits import Limits
    from .agent.loop import Agent, RunResult, arun, run
    from .agent.tools import Tool, Toolbox, tool
    from .agent.tracing import Tracing
    from .core.effects import Effect
    from .core.errors import (
        ArgumentError,
        CannotExpress,
        ConfigError,
        FormatError,
        McpError,
        ProviderError,
        ToolDefinitionError,
        ToolError,
        ToolslipError,
    )
    from .core.messages import (
        Image,
        Message,
        ModelResponse,
        ProviderPart,
        Request,
        ServerTool,
        Settings,
        Text,
        ToolCall,
        ToolResult,
        ToolSpec,
        Usage,
        UseTool,
    )
    from .core.model import Model, StreamingModel
    from .durable.approval import Approval, ApprovalRequest, Decision
    from .durable.dedup import Dedup
    from .durable.journal import Journal
    from .durable.repeats import RepeatGuard
    from .durable.serial import SerialSideEffects
    from .formats.checker import CheckReport, check
    from .formats.conversion import Conversion, Loss, convert
    from .formats.schema import NameMap, normalize_schema, normalize_tools
    from .formats.server_tools import server_tool
    from .guard.policy import TaintGate
    from .guard.secrets import SecretGuard
    from .guard.spotlight import Spotlight
    from .providers.fallback import FallbackModel
    from .quality.search import ToolIndex, ToolSearch

from . import _moved
from .core.version import __version__

_moved.install()

_LAZY: dict[str, str] = {
    "Agent": "agent.loop",
    "Approval": "durable.approval",
    "ApprovalRequest": "durable.approval",
    "ArgumentError": "core.errors",
    "CannotExpress": "core.errors",
    "CheckHook": "agent.debug",
    "CheckReport": "formats.checker",
    "ConfigError": "core.errors",
    "Context": "agent.context",
    "Conversion": "formats.conversion",
    "Decision": "durable.approval",
    "Dedup": "durable.dedup",
    "Effect": "core.effects",
    "FallbackModel": "providers.fallback",
    "FormatError": "core.errors",
    "Hook": "agent.hooks",
    "Image": "core.messages",
    "Journal": "durable.journal",
    "Limits": "agent.limits",
    "Loss": "formats.conversion",
    "McpError": "core.errors",
    "Message": "core.messages",
    "Model": "core.model",
    "ModelResponse": "core.messages",
    "NameMap": "formats.schema",
    "ProviderError": "core.errors",
    "ProviderPart": "core.messages",
    "RepeatGuard": "durable.repeats",
    "Request": "core.messages",
    "RunContext": "agent.context",
    "RunResult": "agent.loop",
    "SecretGuard": "guard.secrets",
    "SerialSideEffects": "durable.serial",
    "ServerTool": "core.messages",
    "Settings": "core.messages",
    "Spotlight": "guard.spotlight",
    "StreamingModel": "core.model",
    "TaintGate": "guard.policy",
    "Text": "core.messages",
    "Tool": "agent.tools",
    "ToolAnswer": "agent.hooks",
    "ToolCall": "core.messages",
    "ToolDefinitionError": "core.errors",
    "ToolError": "core.errors",
    "ToolIndex": "quality.search",
    "ToolResult": "core.messages",
    "ToolSearch": "quality.search",
    "ToolSpec": "core.messages",
    "Toolbox": "agent.tools",
    "ToolslipError": "core.errors",
    "Tracing": "agent.tracing",
    "Usage": "core.messages",
    "UseTool": "core.messages",
    "arun": "agent.loop",
    "check": "formats.checker",
    "convert": "formats.conversion",
    "normalize_schema": "formats.schema",
    "normalize_tools": "formats.schema",
    "run": "agent.loop",
    "server_tool": "formats.server_tools",
    "tool": "agent.tools",
}

__all__ = sorted([*_LAZY, "__version__"])


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolslip' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
