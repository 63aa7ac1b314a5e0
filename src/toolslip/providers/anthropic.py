"""Anthropic Messages over plain HTTP.

Anthropic authenticates with ``x-api-key`` (not a bearer token) and wants an ``anthropic-version``
header on every request; ``2023-06-01`` is the version of the Messages API the format module speaks.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..formats import anthropic as anthropic_format
from ..formats import anthropic_stream
from ..messages import Request
from ..server_tools import anthropic_betas
from .http import HttpModel

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicModel(HttpModel):
    """A :class:`~toolslip.model.Model` that POSTs to ``{base_url}/v1/messages``.

    A server tool still in beta (the advisor) needs an ``anthropic-beta`` header; it is added to the calls
    that declare one, next to any betas given in ``headers``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        version: str = API_VERSION,
        name: str | None = None,
    ) -> None:
        official = base_url.rstrip("/") == DEFAULT_BASE_URL
        own = {"anthropic-version": version, **({"x-api-key": api_key} if api_key else {})}
        super().__init__(
            model,
            name=name or f"anthropic:{model}",
            wire=anthropic_format,
            stream=anthropic_stream,
            path="/v1/messages",
            service="Anthropic" if official else f"the Anthropic-compatible server at {base_url}",
            base_url=base_url,
            headers=own,
            extra_headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            secret=api_key,
        )

    def headers_for(self, request: Request) -> Mapping[str, str] | None:
        betas = anthropic_betas(request.server_tools)
        if not betas:
            return None
        given = [b.strip() for b in self._http.headers.get("anthropic-beta", "").split(",") if b.strip()]
        return {"anthropic-beta": ",".join(dict.fromkeys([*given, *betas]))}
