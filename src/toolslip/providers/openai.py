"""OpenAI over plain HTTP: Chat Completions and the Responses API, for OpenAI itself, Azure OpenAI, and
every compatible server.

vLLM, llama.cpp's server, Ollama, LM Studio and ``toolslip serve`` speak the same ``/chat/completions``
protocol, so one transport serves them all; only the base URL and the credential header differ.
:class:`OpenAIResponsesModel` is the same transport speaking ``/responses`` (OpenAI, Azure's v1 API,
``toolslip serve`` and the servers that added it). It sends the whole conversation every time
(stateless: no ``previous_response_id``), so it works the same against every one of them.
The headers are the ones the official SDK sends (``Authorization: Bearer``, ``Content-Type`` and
``Accept: application/json``, ``OpenAI-Organization`` / ``OpenAI-Project`` when set); the SDK's
``X-Stainless-*`` telemetry headers are not sent.
"""

from __future__ import annotations

import os
from typing import Unpack

from ..formats import openai_chat, openai_chat_stream, openai_responses, openai_responses_stream
from .http import HttpModel, HttpOptions

__all__ = ["DEFAULT_BASE_URL", "OpenAIChatModel", "OpenAIResponsesModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class _OpenAIModel(HttpModel):
    """What both OpenAI APIs share: the credential and organisation headers; a subclass names its API.

    ``api_key`` is sent as ``Authorization: Bearer``; leave it ``None`` for local servers that need no
    key. For Azure OpenAI use ``base_url="https://RESOURCE.openai.azure.com/openai/v1"`` and
    ``headers={"api-key": KEY}`` instead of ``api_key``.
    """

    label = "OpenAI"
    default_base_url = DEFAULT_BASE_URL

    def __init__(
        self,
        model: str,
        *,
        organization: str | None = None,
        project: str | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        self.organization = organization
        self.project = project
        super().__init__(model, **options)

    def caches_by_default(self, official: bool) -> bool:
        """OpenAI caches by itself; ``prompt_cache_key`` only routes, and other servers may refuse the field."""
        return official

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        own = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Organization and project only mean something to OpenAI itself; the SDK reads the same variables.
        organization = self.organization or (os.environ.get("OPENAI_ORG_ID") if official else None)
        project = self.project or (os.environ.get("OPENAI_PROJECT_ID") if official else None)
        if organization:
            own["OpenAI-Organization"] = organization
        if project:
            own["OpenAI-Project"] = project
        return own


class OpenAIChatModel(_OpenAIModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/chat/completions``."""

    prefix = "openai"
    path = "/chat/completions"
    wire = openai_chat
    stream_format = openai_chat_stream


class OpenAIResponsesModel(_OpenAIModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/responses`` (the Responses API)."""

    prefix = "openai-responses"
    path = "/responses"
    wire = openai_responses
    stream_format = openai_responses_stream
