"""Google Gemini (the Gemini Developer API, ``generateContent``) over plain HTTP.

Gemini names the model in the URL, not the body: ``POST /v1beta/models/{model}:generateContent``, and
``:streamGenerateContent?alt=sse`` for a stream (without ``alt=sse`` the service streams one JSON array,
which cannot be read until it ends). The key travels in ``x-goog-api-key``, the header the official
``google-genai`` SDK sends, never in the ``?key=`` query string, where proxies and logs would keep it.
``toolslip serve`` answers the same routes, so ``gemini:MODEL@http://127.0.0.1:8000`` talks to it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Unpack
from urllib.parse import quote

from ..core.messages import ModelResponse, Request
from ..core.streaming import ResponseDone, StreamEvent
from ..formats import gemini as gemini_format
from ..formats import gemini_stream
from ..formats.sse import SSEDecoder
from .http import HttpModel, HttpOptions

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "GeminiModel"]

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
API_VERSION = "v1beta"


class GeminiModel(HttpModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/v1beta/models/{model}:generateContent``.

    ``api_version`` is the path's first segment (``v1beta``, where tools, thinking and every newer field
    live; ``v1`` for the stable subset).
    """

    prefix = "gemini"
    label = "Gemini"
    default_base_url = DEFAULT_BASE_URL
    path = ""  # per model: see _paths
    wire = gemini_format

    def __init__(self, model: str, *, api_version: str = API_VERSION, **options: Unpack[HttpOptions]) -> None:
        self.api_version = api_version
        self._routes: dict[str, tuple[str, str]] = {}
        super().__init__(model, **options)

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        return {"x-goog-api-key": api_key} if api_key else {}

    def _paths(self, model: str) -> tuple[str, str]:
        """The whole-answer and the streaming path for ``model`` (``models/NAME`` or ``NAME``), made once."""
        routes = self._routes.get(model)
        if routes is None:
            name = quote(model.removeprefix("models/"), safe="")
            base = f"/{self.api_version}/models/{name}"
            routes = self._routes[model] = (f"{base}:generateContent", f"{base}:streamGenerateContent?alt=sse")
        return routes

    def _route(self, request: Request) -> tuple[dict[str, Any], tuple[str, str]]:
        body = self.wire.request_to_wire(request)
        # The model is the URL's; a "model" field in the body would only repeat it (or contradict it).
        body.pop("model", None)
        return body, self._paths(request.model or self.model)

    async def complete(self, request: Request) -> ModelResponse:
        body, (path, _) = self._route(request)
        return self.wire.response_from_wire(await self._http.post_json(path, body))

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The answer as Gemini streams it: each SSE event a whole ``GenerateContentResponse`` chunk."""
        body, (_, path) = self._route(request)
        decoder, accumulator = SSEDecoder(), gemini_stream.Accumulator()
        async for data in self._http.post_stream(path, body):
            for event in decoder.feed(data):
                for delta in accumulator.feed(event):
                    yield delta
        yield ResponseDone(response=accumulator.finish())
