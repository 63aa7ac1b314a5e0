"""Ollama's native chat API (``POST /api/chat``) over plain HTTP.

Ollama also answers the OpenAI protocol (``openai:MODEL@http://127.0.0.1:11434/v1``), but its native
API is the one that returns ``thinking`` and Ollama's own counters and options. Two things differ from
every other wire here. Ollama streams unless told not to, so a whole answer is asked for with
``"stream": false``. And a stream is newline-delimited JSON (``application/x-ndjson``), one chunk a
line, the last one ``"done": true``; an error after the stream began is a line ``{"error": "..."}``.
The lines are read by :mod:`toolslip.formats.ollama_stream`.

The server is ``OLLAMA_HOST`` when set (``HOST``, ``HOST:PORT`` or a URL, as the official client reads
it), else ``http://127.0.0.1:11434``, the address the official client uses. A local Ollama needs no key;
``OLLAMA_API_KEY`` (ollama.com's hosted models) is sent as a bearer token, as the official client does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from ..core.messages import ModelResponse, Request
from ..core.streaming import ResponseDone, StreamEvent
from ..formats import ollama as ollama_format
from ..formats import ollama_stream
from .http import HttpModel

__all__ = ["DEFAULT_BASE_URL", "NDJSON", "Lines", "OllamaModel", "host_url"]

DEFAULT_BASE_URL = "http://127.0.0.1:11434"
NDJSON = "application/x-ndjson"


def host_url(host: str) -> str:
    """``OLLAMA_HOST`` as a base URL: a missing scheme is ``http://``, a missing port 11434."""
    url = host if "://" in host else f"http://{host}"
    parts = urlsplit(url)
    if parts.port is None and "://" not in host and parts.hostname:
        url = f"{parts.scheme}://{parts.netloc}:11434{parts.path}"
    return url.rstrip("/")


class OllamaModel(HttpModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/api/chat``."""

    prefix = "ollama"
    label = "Ollama"
    default_base_url = DEFAULT_BASE_URL
    path = "/api/chat"
    wire = ollama_format

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def complete(self, request: Request) -> ModelResponse:
        body = self._body(request)
        body["stream"] = False  # Ollama's default is a stream
        return self.wire.response_from_wire(await self._http.post_json(self.path, body))

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The answer as Ollama streams it: one JSON chunk a line."""
        body = self._body(request)
        body["stream"] = True
        lines, accumulator = Lines(), ollama_stream.Accumulator()
        async for raw in self._http.post_stream(self.path, body, media_type=NDJSON):
            for line in lines.feed(raw):
                for delta in accumulator.feed_line(line):
                    yield delta
        for delta in accumulator.feed_line(lines.rest()):  # a last line the server did not end
            yield delta
        yield ResponseDone(response=accumulator.finish())


class Lines:
    """Feed it bytes as they arrive; it answers the lines they complete (a line may be cut anywhere)."""

    def __init__(self) -> None:
        self._partial = b""

    def feed(self, data: bytes) -> list[bytes]:
        *lines, self._partial = (self._partial + data).split(b"\n")
        return lines

    def rest(self) -> bytes:
        """What came after the last newline."""
        rest, self._partial = self._partial, b""
        return rest
