"""Every error toolslip raises, in one family so callers can catch exactly what they mean.

    ToolslipError
    ├── ConfigError            bad model string, missing API key, unreadable tools file
    ├── ToolDefinitionError    a function or schema that cannot become a tool
    ├── ArgumentError          a call's arguments do not fit the tool's schema (becomes an error result)
    ├── FormatError            wire data that does not fit its format (says where: ``messages[3].content``)
    │   └── CannotExpress      the target format has no way to say this (legacy parallel calls...)
    ├── ProviderError          the model service answered with an error, or could not be reached
    └── ScriptExhausted        a scripted test model was asked for more turns than it was given

Failures of a *tool call* (bad arguments, unknown tool, exception, timeout) are not exceptions: the loop
turns them into error results the model sees, so it can correct itself. A hit step limit is not an
exception either: it is ``RunResult.stop_reason == "max_steps"``.
"""

from __future__ import annotations

__all__ = [
    "ArgumentError",
    "CannotExpress",
    "ConfigError",
    "FormatError",
    "ProviderError",
    "ScriptExhausted",
    "ToolDefinitionError",
    "ToolslipError",
]


class ToolslipError(Exception):
    """Base of every error raised by toolslip."""


class ConfigError(ToolslipError):
    """The caller's configuration is wrong: the message says what and how to fix it."""


class ToolDefinitionError(ToolslipError):
    """A function or JSON Schema cannot be turned into a tool."""


class ArgumentError(ToolslipError):
    """A call's arguments do not fit the tool's schema; the message names each wrong field."""


class FormatError(ToolslipError):
    """Wire data does not match its format. ``path`` locates the bad field, e.g. ``messages[2].role``."""

    def __init__(self, message: str, path: str = "") -> None:
        self.path = path
        super().__init__(f"{path}: {message}" if path else message)


class CannotExpress(FormatError):
    """The target format cannot express something the source holds; nothing is dropped silently."""


class ProviderError(ToolslipError):
    """The model service failed: ``status`` is the HTTP status (0 when unreachable), ``body`` its answer."""

    def __init__(self, message: str, *, status: int = 0, body: str = "", retryable: bool = False) -> None:
        self.status = status
        self.body = body
        self.retryable = retryable
        super().__init__(message)


class ScriptExhausted(ToolslipError):
    """A scripted model ran out of scripted turns."""
