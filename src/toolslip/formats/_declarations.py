"""Telling Gemini's and Converse's spellings of one tool declaration from the others (for ``read_declaration``).

A Converse declaration is ``{"toolSpec": {...}}``. A Gemini declaration is ``{name, description,
parameters}`` like a legacy OpenAI function, so it is told apart by what only Gemini writes:
``parametersJsonSchema``, or a schema whose ``type`` is upper case (``OBJECT``) or the proto enum's number.
A whole Gemini ``tools`` entry holding exactly one declaration is read too. Ollama declares tools as
OpenAI Chat does, so its declarations read as Chat's.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import FormatError
from ..core.messages import ToolSpec
from . import bedrock, gemini
from ._gemini_media import camel


def native_declaration(data: dict[str, Any], path: str) -> tuple[str, ToolSpec] | None:
    """(format, spec) for a Gemini or Converse declaration; ``None`` for any other spelling."""
    if data.keys() == {"toolSpec"}:
        spec = bedrock.spec_from_wire(data, path)
        if spec is None:
            raise FormatError("a toolSpec needs a name and inputSchema {json: ...}", f"{path}.toolSpec")
        return bedrock.NAME, spec
    entry, _ = camel(data)
    if "functionDeclarations" in entry:
        declarations = entry["functionDeclarations"]
        if not isinstance(declarations, list) or len(declarations) != 1:
            count = len(declarations) if isinstance(declarations, list) else 0
            raise FormatError(f"this Gemini tools entry holds {count} declarations; give one at a time", path)
        return gemini.NAME, gemini.spec_from_wire(declarations[0], f"{path}.functionDeclarations[0]")
    if "parametersJsonSchema" in entry or _gemini_type(entry.get("parameters")):
        return gemini.NAME, gemini.spec_from_wire(data, path)
    return None


def _gemini_type(schema: object) -> bool:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return type(kind) is int or (isinstance(kind, str) and kind.isupper())
