"""Every error toolslip raises, in one family so callers can catch exactly what they mean.

    ToolslipError
    ├── ConfigError            bad model string, missing API key, unreadable tools file
    │   └── InvalidValue       a value the caller wrote is malformed or names nothing known (the CLI exits 2)
    ├── ToolDefinitionError    a function or schema that cannot become a tool
    ├── ArgumentError          a call's arguments do not fit the tool's schema (becomes an error result)
    ├── FormatError            wire data that does not fit its format (says where: ``messages[3].content``)
    │   └── CannotExpress      the target format has no way to say this (legacy parallel calls...)
    ├── ProviderError          the model service answered with an error, or could not be reached
    ├── McpError               an MCP server could not be started or reached, or broke the protocol
    ├── RunBusy                another process is executing this run (it holds the run's lease)
    ├── JournalError           the run journal's storage failed (disk full, damaged, read-only, gone): one sentence
    ├── ToolError              raised by a tool to return an error result with its own content
    └── ScriptExhausted        a scripted test model was asked for more turns than it was given

Failures of a *tool call* (bad arguments, unknown tool, exception, timeout) are not exceptions: the loop
turns them into error results the model sees, so it can correct itself. A tool that wants to say
"this failed, and here is exactly what the model should read" raises :class:`ToolError`: its content
becomes the error result verbatim, without the ``failed: ExceptionName:`` prefix a stray exception gets.
A hit step limit is not an exception either: it is ``RunResult.stop_reason == "max_steps"``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .messages import Image, Text

__all__ = [
    "ArgumentError",
    "CannotExpress",
    "ConfigError",
    "FormatError",
    "InvalidValue",
    "JournalError",
    "McpError",
    "ProviderError",
    "RunBusy",
    "ScriptExhausted",
    "ToolDefinitionError",
    "ToolError",
    "ToolslipError",
]


class ToolslipError(Exception):
    """Base of every error raised by toolslip."""


class ConfigError(ToolslipError):
    """The caller's configuration is wrong: the message says what and how to fix it."""


class InvalidValue(ConfigError):
    """A value the caller wrote is malformed or names nothing toolslip knows: a model string, a demo's name,
    a date. The message says which values would do (and the nearest one, for a typo); the CLI exits 2."""


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


class RunBusy(ToolslipError):
    """Another process holds the run's lease (:mod:`toolslip.durable.lease`); the message names it."""


class JournalError(ToolslipError):
    """The run journal's storage failed: the disk is full, the file is damaged, its folder is read-only.

    Every store raises this one type with one sentence that names the file and what to do
    (:mod:`toolslip.durable.journal_faults` writes it), so no backend's own exception reaches a caller.
    """


class McpError(ToolslipError):
    """An MCP server failed: it did not start, went away, or answered with a protocol error.

    The message names the server and ends with the last lines the server wrote to stderr, if any.
    """


class ToolError(ToolslipError):
    """Raised inside a tool: the call ends as an error result whose content is ``content``, unchanged.

    MCP servers answer ``isError`` results this way, and a local tool can do the same to hand the model a
    precise correction ("no such city; try one of ...") instead of a Python exception name.
    """

    def __init__(self, content: str | tuple[Text | Image, ...]) -> None:
        self.content = content
        super().__init__(
            content if isinstance(content, str) else " ".join(getattr(p, "text", "[image]") for p in content)
        )


class ScriptExhausted(ToolslipError):
    """A scripted model ran out of scripted turns."""
