"""The provider seam: anything that answers a :class:`~toolslip.core.messages.Request` is a model.

The loop talks only to this protocol, so it knows no provider and no wire format. HTTP transports
(:mod:`toolslip.providers`), the embedded local model and the scripted test models all implement it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .messages import ModelResponse, Request

if TYPE_CHECKING:
    from .events import Event
    from .streaming import StreamEvent

__all__ = ["CURRENT_RUN", "IGNORED", "Model", "RunReporter", "StreamingModel"]

IGNORED = "ignored"
"""Key of ``ModelResponse.extra``: the request's ``Settings.extra`` fields the model received and did not act
on (a tuple of names), so a server can tell its client (``toolslip serve``'s ``x-toolslip-ignored`` header)."""


@runtime_checkable
class Model(Protocol):
    """One method: take the whole transcript, the tools and the settings; return the model's answer."""

    @property
    def name(self) -> str:
        """A label for logs and the CLI, e.g. ``openai:gpt-4o-mini``."""
        ...

    async def complete(self, request: Request) -> ModelResponse: ...


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that can also yield its answer as it is written (see :mod:`toolslip.core.streaming`).

    ``stream`` yields deltas and ends with a ``ResponseDone`` equal to what ``complete`` returns; when the
    stream breaks it raises :class:`~toolslip.core.errors.ProviderError` instead of ending early.
    """

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


class RunReporter(Protocol):
    """What a model may see of the run that asks it: the step, scratch state, and the run's event listener."""

    step: int
    state: dict[str, Any]

    def event(self, event: Event) -> None: ...


CURRENT_RUN: ContextVar[RunReporter | None] = ContextVar("toolslip_current_run", default=None)
"""The run being served in this task (the loop sets it), so a model made of models can report what it did
(which model answered, what it dropped) as the run's events without a second argument on the seam."""
