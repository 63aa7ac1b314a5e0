"""Wire formats: how each provider spells tools, messages, requests and responses.

Each format is one module of pure functions (no I/O, no clients, no pydantic): dicts in, neutral
``toolslip.core.messages`` objects out, and back. Providers send what ``request_to_wire`` builds and read
what ``response_from_wire`` gives; the local server does the reverse. Neither vendor's format is the
internal model; both meet in the neutral transcript.

A round trip within one format gives back the same dict: fields with no neutral slot are kept in the
neutral objects' ``extra``, under the format's name, so they never leak into another format.

    >>> from toolslip.formats import get_format
    >>> body = get_format("anthropic").request_to_wire(request)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from ..core.errors import FormatError
from ..core.messages import Message, ModelResponse, Request, ToolSpec

__all__ = ["FORMATS", "WireFormat", "get_format", "read_declaration"]

FORMATS: dict[str, str] = {
    "anthropic": "anthropic",
    "bedrock": "bedrock",
    "gemini": "gemini",
    "ollama": "ollama",
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


def read_declaration(item: Mapping[str, Any], path: str = "tool") -> tuple[str, ToolSpec]:
    """One function-tool declaration in whichever format spells it so, as (format name, ToolSpec).

    The shapes: OpenAI Chat ``{"type": "function", "function": {...}}`` (``type`` may be left out, as
    Mistral does), the Responses API's flat ``{"type": "function", "name", "parameters"}``, Anthropic's
    ``{"name", "input_schema"}``, legacy ``functions`` entries ``{"name", "parameters"}``, Converse's
    ``{"toolSpec": {...}}`` and Gemini's function declarations (see ``_declarations``; Ollama spells them
    as Chat does). Each format's own reader does the reading (its ``spec_from_wire``). A hosted or server
    tool, or anything else, raises :class:`FormatError` saying what it is.
    """
    from . import anthropic, openai_chat, openai_functions, openai_responses
    from ._declarations import native_declaration

    data = dict(item) if isinstance(item, Mapping) else item
    if not isinstance(data, dict):
        raise FormatError(f"a tool declaration is a JSON object, not {type(item).__name__}", path)
    native = native_declaration(data, path)
    if native is not None:
        return native
    kind = data.get("type")
    if isinstance(data.get("function"), dict):
        spec, name = openai_chat.spec_from_wire(data, path), openai_chat.NAME
    elif "input_schema" in data:
        spec, name = anthropic.spec_from_wire(data, path), anthropic.NAME
    elif kind == "function":
        spec, name = openai_responses.spec_from_wire(data, path), openai_responses.NAME
    elif kind is None and "name" in data:
        spec, name = openai_functions.spec_from_wire(data, path), openai_functions.NAME
    else:
        spec = None
    if spec is None:
        what = f"a {kind!r} tool, which its provider runs" if kind else "no tool declaration toolslip knows"
        raise FormatError(
            f"this is {what}; a function tool is spelled as OpenAI Chat, Responses, Anthropic, legacy "
            "functions, Gemini or Converse declare it (server tools: toolslip.server_tool)",
            path,
        )
    return name, spec


def get_format(name: str) -> WireFormat:
    """The format module called ``name`` (``"openai-chat"``, ``"anthropic"``, ``"openai-responses"``...)."""
    loaded = _LOADED.get(name)
    if loaded is not None:
        return loaded
    module = FORMATS.get(name)
    if module is None:
        known = ", ".join(sorted(FORMATS))
        raise FormatError(f"unknown wire format {name!r}; known formats: {known}")
    loaded = _LOADED[name] = cast(WireFormat, importlib.import_module(f".{module}", __name__))
    return loaded


_LOADED: dict[str, WireFormat] = {}  # a conversion looks up two formats: importlib's lookup is not free


if TYPE_CHECKING:  # mypy proves each module satisfies the protocol
    from . import anthropic as _anthropic
    from . import bedrock as _bedrock
    from . import gemini as _gemini
    from . import ollama as _ollama
    from . import openai_chat as _openai_chat
    from . import openai_functions as _openai_functions
    from . import openai_responses as _openai_responses

    _checked: tuple[WireFormat, ...] = (
        _anthropic,
        _bedrock,
        _gemini,
        _ollama,
        _openai_chat,
        _openai_functions,
        _openai_responses,
    )
