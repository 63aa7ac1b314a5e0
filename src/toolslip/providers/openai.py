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
from collections.abc import Mapping
from typing import ClassVar

from ..formats import openai_chat, openai_chat_stream, openai_responses, openai_responses_stream
from .http import HttpModel, StreamFormat, WireFormat

__all__ = ["DEFAULT_BASE_URL", "OpenAIChatModel", "OpenAIResponsesModel"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"


class _OpenAIModel(HttpModel):
    """What both OpenAI APIs share: the credential and organisation headers; a subclass names its API.

    ``api_key`` is sent as ``Authorization: Bearer``; leave it ``None`` for local servers that need no
    key. For Azure OpenAI use ``base_url="https://RESOURCE.openai.azure.com/openai/v1"`` and
    ``headers={"api-key": KEY}`` instead of ``api_key``.
    """

    WIRE: ClassVar[WireFormat]
    STREAM: ClassVar[StreamFormat]
    PATH: ClassVar[str]
    PREFIX: ClassVar[str]  # of the default name, as in model strings

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        organization: str | None = None,
        project: str | None = None,
        name: str | None = None,
    ) -> None:
        official = base_url.rstrip("/") == DEFAULT_BASE_URL
        own = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # Organization and project only mean something to OpenAI itself; the SDK reads the same variables.
        organization = organization or (os.environ.get("OPENAI_ORG_ID") if official else None)
        project = project or (os.environ.get("OPENAI_PROJECT_ID") if official else None)
        if organization:
            own["OpenAI-Organization"] = organization
        if project:
            own["OpenAI-Project"] = project
        super().__init__(
            model,
            name=name or f"{self.PREFIX}:{model}",
            wire=self.WIRE,
            stream=self.STREAM,
            path=self.PATH,
            service="OpenAI" if official else f"the OpenAI-compatible server at {base_url}",
            base_url=base_url,
            headers=own,
            extra_headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            secret=api_key,
        )


class OpenAIChatModel(_OpenAIModel):
    """A :class:`~toolslip.model.Model` that POSTs to ``{base_url}/chat/completions``."""

    WIRE: ClassVar[WireFormat] = openai_chat
    STREAM: ClassVar[StreamFormat] = openai_chat_stream
    PATH = "/chat/completions"
    PREFIX = "openai"


class OpenAIResponsesModel(_OpenAIModel):
    """A :class:`~toolslip.model.Model` that POSTs to ``{base_url}/responses`` (the Responses API)."""

    WIRE: ClassVar[WireFormat] = openai_responses
    STREAM: ClassVar[StreamFormat] = openai_responses_stream
    PATH = "/responses"
    PREFIX = "openai-responses"
