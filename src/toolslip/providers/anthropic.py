"""Anthropic Messages over plain HTTP.

Anthropic authenticates with ``x-api-key`` (not a bearer token) and wants an ``anthropic-version``
header on every request; ``2023-06-01`` is the version of the Messages API the format module speaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Unpack

from ..core.messages import Request
from ..formats import anthropic as anthropic_format
from ..formats import anthropic_stream
from ..formats.server_tools import anthropic_betas
from .http import HttpModel, HttpOptions

__all__ = ["API_VERSION", "DEFAULT_BASE_URL", "AnthropicModel"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The ``anthropic-beta`` value a request with ``context_management`` edits needs."""


class AnthropicModel(HttpModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/v1/messages``.

    A server tool still in beta (the advisor) and a message ``thread`` (kept in ``Settings.extra``, see
    :mod:`toolslip.formats.anthropic`) need an ``anthropic-beta`` header; it is added to the calls that
    declare one, next to any betas given in ``headers``.
    """

    prefix = "anthropic"
    label = "Anthropic"
    default_base_url = DEFAULT_BASE_URL
    path = "/v1/messages"
    wire = anthropic_format
    stream_format = anthropic_stream

    def __init__(self, model: str, *, version: str = API_VERSION, **options: Unpack[HttpOptions]) -> None:
        self.version = version
        super().__init__(model, **options)

    def caches_by_default(self, official: bool) -> bool:
        """Anthropic caches only what a request marks, and an unused mark costs nothing: mark every request to
        the service (a compatible server, a proxy or ``toolslip serve``, gets them with ``cache=True``)."""
        return official

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        return {"anthropic-version": self.version, **({"x-api-key": api_key} if api_key else {})}

    def headers_for(self, request: Request) -> Mapping[str, str] | None:
        betas = anthropic_betas(request.server_tools)
        if request.settings.extra.get(anthropic_format.THREAD_FIELD) is not None:  # threads are still a beta
            betas = [*betas, anthropic_format.MESSAGE_THREADS_BETA]
        if "context_management" in request.settings.extra:  # toolslip.agent.history.provider_context_management
            betas = [*betas, CONTEXT_MANAGEMENT_BETA]
        if not betas:
            return None
        given = [b.strip() for b in self._http.headers.get("anthropic-beta", "").split(",") if b.strip()]
        return {"anthropic-beta": ",".join(dict.fromkeys([*given, *betas]))}
