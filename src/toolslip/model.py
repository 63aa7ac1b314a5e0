"""The provider seam: anything that answers a :class:`~toolslip.messages.Request` is a model.

The loop talks only to this protocol, so it knows no provider and no wire format. HTTP transports
(:mod:`toolslip.providers`), the embedded local model and the scripted test models all implement it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .messages import ModelResponse, Request

__all__ = ["Model"]


@runtime_checkable
class Model(Protocol):
    """One method: take the whole transcript, the tools and the settings; return the model's answer."""

    @property
    def name(self) -> str:
        """A label for logs and the CLI, e.g. ``openai:gpt-4o-mini``."""
        ...

    async def complete(self, request: Request) -> ModelResponse: ...
