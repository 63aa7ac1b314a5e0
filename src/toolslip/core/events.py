"""What a run reports as it goes: the CLI renders these, tracing and journals listen to them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from .messages import ModelResponse, ToolCall, ToolResult

if TYPE_CHECKING:
    from .result import RunResult

__all__ = [
    "CacheBusted",
    "Event",
    "GateDecided",
    "ModelCalled",
    "ModelResponded",
    "ModelSwitched",
    "RunFinished",
    "TextDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "ToolFinished",
    "ToolStarted",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelCalled:
    """A request is about to go to the model."""

    step: int
    messages: int
    """How many messages the request carries."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of streamed answer text."""

    step: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted:
    """A streamed tool call's name is known; its arguments are still arriving."""

    step: int
    id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallReady:
    """A streamed tool call's arguments are complete. It runs once the whole response has arrived."""

    step: int
    call: ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponded:
    step: int
    response: ModelResponse
    replayed: bool = False
    """True when the response came from a journal instead of the model."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSwitched:
    """A step was answered by another model than the first choice (:class:`~toolslip.FallbackModel`)."""

    step: int
    model: str
    """The model that answered."""
    failed: tuple[str, ...] = ()
    """Each model tried before it and why it was passed over (``anthropic:claude-x: 529 overloaded``)."""
    dropped: tuple[str, ...] = ()
    """What the transcript held that this model's wire cannot take (another provider's signed reasoning)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheBusted:
    """A warning: this step's request does not begin with what the previous one sent, so the provider's prompt
    cache of it cannot be read and the whole prefix is billed again (:mod:`toolslip.formats.caching`)."""

    step: int
    model: str
    reason: str
    """What changed: ``the tools offered changed``, ``message 3 (tool) changed``..."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolStarted:
    step: int
    call: ToolCall


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolFinished:
    step: int
    call: ToolCall
    result: ToolResult
    seconds: float
    note: str = ""
    """Why the result did not come from running the tool (``duplicate``, ``denied``, ``replayed``...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GateDecided:
    """A policy hook judged a call before it ran (the injection gate, the secret guard): the audit record."""

    step: int
    call_id: str
    tool: str
    gate: str
    """Which hook decided (``taint-gate``, ``secret-guard``)."""
    decision: str
    """``allowed``, ``denied`` or ``asked``."""
    reason: str
    approved: bool | None = None
    """The answer when the decision was ``asked``."""
    sources: tuple[str, ...] = ()
    """The untrusted content in the context when the call was judged (``read_issue#call_3``...)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished:
    result: RunResult = field(repr=False)


Event: TypeAlias = (
    ModelCalled
    | TextDelta
    | ToolCallStarted
    | ToolCallReady
    | ModelResponded
    | ModelSwitched
    | CacheBusted
    | ToolStarted
    | ToolFinished
    | GateDecided
    | RunFinished
)
