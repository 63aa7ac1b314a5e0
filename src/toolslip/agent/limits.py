"""Budgets for a run: tokens in, out and in all, tool calls, and dollars (``Limits``).

A run is otherwise bounded only by its step count, which says nothing about a model that reads a huge
file every step or a paid model left looping. Each limit is checked twice: before each model call, with
the request's estimated size (:func:`toolslip.quality.tokens.request_tokens`), so a call that would pass a
limit is never made; and after each answer, with the usage the provider reported, so calls the answer asks
for are not run once the budget is spent. Reaching a limit is a named stop (``max_input_tokens``,
``max_output_tokens``, ``max_total_tokens``, ``max_tool_calls``, ``max_cost``), never an exception, and the
transcript stays valid to continue: every call in it has a result (``not executed: ...``).

Cost comes from :mod:`toolslip.agent.pricing` (genai-prices).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..core.errors import ConfigError
from ..core.messages import Request, Usage
from ..core.result import RunStopReason
from .pricing import cost

__all__ = ["Budget", "Limits"]


@dataclass(frozen=True, kw_only=True)
class Limits:
    """The most a run may use; ``None`` leaves that measure unbounded. Give it to an
    :class:`~toolslip.Agent` (``limits=``) or to one run (``agent.run(prompt, limits=...)``)."""

    input_tokens: int | None = None
    """Input tokens over all model calls (each call re-reads the transcript, so this grows fastest), those read
    from or written to the prompt cache included."""
    output_tokens: int | None = None
    total_tokens: int | None = None
    """Input plus output tokens."""
    tool_calls: int | None = None
    """Tool calls executed (a turn whose calls would pass the limit runs none of them)."""
    cost: float | None = None
    """US dollars at the model's list price (genai-prices); the model must have a known price."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and (isinstance(value, bool) or not value >= 0):
                raise ConfigError(f"Limits.{f.name} must be a number of at least 0, got {value!r}")

    def check(self, model: str) -> None:
        """Raise ConfigError when a limit cannot be kept on ``model`` (a cost limit on a model with no price)."""
        if self.cost is not None:
            cost(model, Usage(), required=True)


class Budget:
    """One run's :class:`Limits` against what it used so far; the loop asks it at each checkpoint."""

    def __init__(self, limits: Limits | None, model: str) -> None:
        self.limits = limits or Limits()
        self.model = model
        self.reason: RunStopReason | None = None
        """The limit that stopped the run."""
        self.why = ""
        """The sentence for the calls a limit left unexecuted, e.g. ``the run reached its limit of 3 tool calls``."""

    def before_call(self, used: Usage, request: Request) -> RunStopReason | None:
        """The limit the next call would pass, judged by the request's estimated input tokens."""
        limits = self.limits
        if limits.output_tokens is not None and used.output_tokens >= limits.output_tokens:
            return self._stop("max_output_tokens", f"{limits.output_tokens} output tokens")
        if limits.input_tokens is None and limits.total_tokens is None and limits.cost is None:
            return None  # the estimate is not free: skip it when nothing needs it
        from ..quality.tokens import request_tokens  # the tokenizer loads only for a run that needs it

        asked = request_tokens(request)
        return self._over(used + Usage(input_tokens=asked), "would pass")

    def after_answer(self, used: Usage) -> RunStopReason | None:
        """The limit the reported usage passed, if any (the answer's calls are then not run)."""
        return self._over(used, "passed")

    def before_tools(self, made: int, asked: int) -> RunStopReason | None:
        limit = self.limits.tool_calls
        if limit is not None and made + asked > limit:
            return self._stop("max_tool_calls", f"{limit} tool calls")
        return None

    def cost(self, used: Usage) -> float | None:
        return cost(self.model, used)

    def _over(self, used: Usage, how: str) -> RunStopReason | None:
        limits = self.limits
        # Tokens read from or written to the prompt cache are input too (billed at their own rate, which the
        # cost limit prices): a token budget counts them, or caching would make a run look smaller than it is.
        given = used.input_tokens + used.cache_read_tokens + used.cache_write_tokens
        if limits.input_tokens is not None and given > limits.input_tokens:
            return self._stop("max_input_tokens", f"{limits.input_tokens} input tokens", how)
        if limits.output_tokens is not None and used.output_tokens > limits.output_tokens:
            return self._stop("max_output_tokens", f"{limits.output_tokens} output tokens", how)
        total = given + used.output_tokens
        if limits.total_tokens is not None and total > limits.total_tokens:
            return self._stop("max_total_tokens", f"{limits.total_tokens} tokens", how)
        if limits.cost is not None:
            spent = cost(self.model, used, required=True) or 0.0
            if spent > limits.cost:
                return self._stop("max_cost", f"${limits.cost:g}", how)
        return None

    def _stop(self, reason: RunStopReason, limit: str, how: str = "reached") -> RunStopReason:
        self.reason, self.why = reason, f"the run {how} its limit of {limit}"
        return reason
