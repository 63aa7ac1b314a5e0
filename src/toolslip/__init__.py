"""toolslip: define a tool once, speak every wire format, and run the tool-calling loop safely.

``import toolslip`` is cheap: names are loaded from their modules on first use, so the HTTP client,
pydantic and the provider SDKs are imported only when something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .approval import Approval, ApprovalRequest, Decision
    from .checker import CheckHook, CheckReport, check
    from .conversion import Conversion, Loss, convert
    from .dedup import Dedup
    from .effects import Effect
    from .errors import (
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
    from .hooks import Hook, RunContext, ToolAnswer
    from .journal import Journal
    from .loop import Agent, RunResult, arun, run
    from .messages import (
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
    from .model import Model, StreamingModel
    from .policy import TaintGate
    from .repeats import RepeatGuard
    from .schema import NameMap, normalize_schema, normalize_tools
    from .search import ToolIndex, ToolSearch
    from .secrets import SecretGuard
    from .serial import SerialSideEffects
    from .server_tools import server_tool
    from .spotlight import Spotlight
    from .tools import Tool, Toolbox, tool
    from .tracing import Tracing

__version__ = "0.1.0"

_LAZY: dict[str, str] = {
    "Agent": "loop",
    "Approval": "approval",
    "ApprovalRequest": "approval",
    "ArgumentError": "errors",
    "CannotExpress": "errors",
    "CheckHook": "checker",
    "CheckReport": "checker",
    "ConfigError": "errors",
    "Conversion": "conversion",
    "Decision": "approval",
    "Dedup": "dedup",
    "Effect": "effects",
    "FormatError": "errors",
    "Hook": "hooks",
    "Image": "messages",
    "Journal": "journal",
    "Loss": "conversion",
    "McpError": "errors",
    "Message": "messages",
    "Model": "model",
    "ModelResponse": "messages",
    "NameMap": "schema",
    "ProviderError": "errors",
    "ProviderPart": "messages",
    "RepeatGuard": "repeats",
    "Request": "messages",
    "RunContext": "hooks",
    "RunResult": "loop",
    "SecretGuard": "secrets",
    "SerialSideEffects": "serial",
    "ServerTool": "messages",
    "Settings": "messages",
    "Spotlight": "spotlight",
    "StreamingModel": "model",
    "TaintGate": "policy",
    "Text": "messages",
    "Tool": "tools",
    "ToolAnswer": "hooks",
    "ToolCall": "messages",
    "ToolDefinitionError": "errors",
    "ToolError": "errors",
    "ToolIndex": "search",
    "ToolResult": "messages",
    "ToolSearch": "search",
    "ToolSpec": "messages",
    "Toolbox": "tools",
    "ToolslipError": "errors",
    "Tracing": "tracing",
    "Usage": "messages",
    "UseTool": "messages",
    "arun": "loop",
    "check": "checker",
    "convert": "conversion",
    "normalize_schema": "schema",
    "normalize_tools": "schema",
    "run": "loop",
    "server_tool": "server_tools",
    "tool": "tools",
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
