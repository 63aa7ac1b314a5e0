"""How a run ended: :class:`RunResult` and the names of its stops.

It lives below the loop because every layer above reads it (hooks' ``on_finish``, the journal, tracing,
evals, the CLI) while only the loop makes it; so none of them has to import the loop to name its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from .messages import Message, Usage

__all__ = ["RunResult", "RunStopReason"]

RunStopReason: TypeAlias = Literal[
    "completed",  # the model answered without calling a tool
    "max_steps",  # the step limit ended the run
    "max_tokens",  # the model's output limit cut its answer
    "refusal",  # the model or its safety system refused
    "paused",  # a hook stopped the run to be resumed later (e.g. pending approvals)
    "forced",  # a hook ended the run (see RunContext.stop)
    # a budget (toolslip.Limits) would have been passed: the run stopped before it, its transcript valid to continue
    "max_input_tokens",
    "max_output_tokens",
    "max_total_tokens",
    "max_tool_calls",
    "max_cost",
]


@dataclass(kw_only=True)
class RunResult:
    """How a run ended and everything it produced."""

    output: str
    """The model's final text."""
    stop_reason: RunStopReason | str
    steps: int
    """Model calls made (including ones replayed from a journal)."""
    messages: list[Message]
    """The whole transcript, system prompt first."""
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    run_id: str = ""
    cost: float | None = None
    """US dollars the run's usage costs at the model's list price (genai-prices, the ``prices`` extra);
    ``0.0`` for the local and scripted models, ``None`` when no price is known."""

    @property
    def ok(self) -> bool:
        return self.stop_reason == "completed"
