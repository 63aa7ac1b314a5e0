"""What both stream accumulators share: JSON events in, and every malformed input named as a ProviderError.

A broken stream is the service failing, not the caller's data being wrong, so shape errors found while
reading one (a ``FormatError`` from the format's checks) are reported as :class:`ProviderError`.
"""

from __future__ import annotations

from typing import ClassVar

import orjson

from ..core.errors import FormatError, ProviderError
from ..core.messages import ModelResponse
from ..core.streaming import StreamEvent
from .sse import ServerSentEvent


class JsonStream:
    """Base of the per-format accumulators: :meth:`feed` one SSE event, :meth:`finish` for the response."""

    SERVICE: ClassVar[str]
    done: bool

    def feed(self, event: ServerSentEvent) -> list[StreamEvent]:
        try:
            data = orjson.loads(event.data)
        except orjson.JSONDecodeError as exc:
            what = f"a {event.event} event" if event.event else "an event"
            raise self.malformed(f"{what} is not JSON ({exc}): {event.data[:200]!r}") from None
        try:
            return self.feed_object(data)
        except FormatError as exc:
            raise self.malformed(str(exc)) from None

    def feed_object(self, data: object) -> list[StreamEvent]:
        """One event's decoded data (a dict, or the SDK's object for it)."""
        raise NotImplementedError

    def finish(self) -> ModelResponse:
        try:
            return self.response_object()
        except FormatError as exc:
            raise self.malformed(str(exc)) from None

    def response_object(self) -> ModelResponse:
        """The neutral response, once the stream has ended properly."""
        raise NotImplementedError

    def malformed(self, what: str) -> ProviderError:
        return ProviderError(f"malformed {self.SERVICE} stream: {what}")

    def cut_short(self, awaited: str, got: str) -> ProviderError:
        """The stream stopped before ``awaited`` (its proper end): asking again may well work."""
        return ProviderError(
            f"the {self.SERVICE} stream ended before {awaited} (received {got}); the partial answer was discarded",
            retryable=True,
        )
