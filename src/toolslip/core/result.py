"""How a run ended: :class:`RunResult` and the names of its stops.

It lives below the loop because every layer above reads it (hooks' ``on_finish``, the journal, tracing,
evals, the CLI) while only the loop makes it; so none of them has to import the loop to name its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from .messages import Message, Usage

__all__ = ["RunResult", "RunStopReason"]

RunStopReason: TypeAlias = Literal[
    "completed",  # the model answered without calling a tool
    "max_steps",  # the step limit ended the run
    "max_tokens",  # the model's output limit cut its answer
    "refusal",  # the model or its safety system refused
    "paused",  # a hook stopped the run to be resumed later (e.g. pending approvals)
    "forced",  # a hook ended the run (see RunContext.stop)
    "output_invalid",  # the answer did not fit the run's output_type, after the retries it was given
]

DataT = TypeVar("DataT", default=Any)
"""The type of a run's validated answer (``Agent(output_type=...)``); ``Any`` for a free-text run."""


@dataclass(kw_only=True)
class RunResult(Generic[DataT]):
    """How a run ended and everything it produced."""

    output: str
    """The model's final text (with ``output_type`` in tool mode: the answer's JSON)."""
    stop_reason: RunStopReason | str
    steps: int
    """Model calls made (including ones replayed from a journal)."""
    messages: list[Message]
    """The whole transcript, system prompt first."""
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    run_id: str = ""
    data: DataT | None = None
    """The answer validated against the run's ``output_type``; ``None`` without one, or when it failed."""
    output_error: str | None = None
    """Why the last answer was not accepted (the validator's field-level message, or the refusal)."""

    @property
    def ok(self) -> bool:
        return self.stop_reason == "completed"
