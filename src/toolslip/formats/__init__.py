"""Wire formats: how each provider spells tools, messages, requests and responses.

Each format is one module of pure functions (no I/O, no clients, no pydantic): dicts in, neutral
``toolslip.messages`` objects out, and back. Providers send what ``request_to_wire`` builds and read
what ``response_from_wire`` gives; the local server does the reverse. Neither vendor's format is the
internal model; both meet in the neutral transcript.

A round trip within one format gives back the same dict: fields with no neutral slot are kept in the
neutral objects' ``extra``, under the format's name, so they never leak into another format.

    >>> from toolslip.formats import get_format
    >>> body = get_format("anthropic").request_to_wire(request)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..errors import FormatError
from ..messages import Message, ModelResponse, Request, ToolSpec

__all__ = ["FORMATS", "WireFormat", "get_format"]

FORMATS: dict[str, str] = {
    "anthropic": "anthropic",
    "openai-chat": "openai_chat",
    "openai-functions": "openai_functions",
    "openai-responses": "openai_responses",
}
"""Format name -> module in this package."""


class WireFormat(Protocol):
    """What every format module provides (checked by mypy against each module)."""

    NAME: str

    def tools_to_wire(self, specs: Iterable[ToolSpec], /) -> list[dict[str, Any]]: ...
    def tools_from_wire(self, items: Sequence[object], /) -> list[ToolSpec]: ...
    def messages_to_wire(self, messages: Iterable[Message], /) -> list[dict[str, Any]]: ...
    def messages_from_wire(self, items: object, /) -> list[Message]: ...
    def request_to_wire(self, request: Request, /) -> dict[str, Any]: ...
    def request_from_wire(self, body: object, /) -> Request: ...
    def response_to_wire(self, response: ModelResponse, /) -> dict[str, Any]: ...
    def response_from_wire(self, data: object, /) -> ModelResponse: ...


def get_format(name: str) -> WireFormat:
    """The format module called ``name`` (``"openai-chat"``, ``"anthropic"``, ``"openai-responses"``...)."""
    module = FORMATS.get(name)
    if module is None:
        known = ", ".join(sorted(FORMATS))
        raise FormatError(f"unknown wire format {name!r}; known formats: {known}")
    return cast(WireFormat, importlib.import_module(f".{module}", __name__))


if TYPE_CHECKING:  # mypy proves each module satisfies the protocol
    from . import anthropic as _anthropic
    from . import openai_chat as _openai_chat
    from . import openai_functions as _openai_functions
    from . import openai_responses as _openai_responses

    _checked: tuple[WireFormat, ...] = (_anthropic, _openai_chat, _openai_functions, _openai_responses)
