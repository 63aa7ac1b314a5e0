"""What a tool returned, as the model will read it: text, image parts, or JSON.

A tool's function may return anything; the model reads text. :func:`serialize_output` makes one spelling
of it (strings as they are, images as image parts, everything else JSON with non-ASCII kept), and
:func:`field_values` finds, in that same spelling, the values an outsider wrote (a tool's
``untrusted_fields``), so the injection guard can tell them apart in the result the model sees.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..core.messages import Image, Text

__all__ = ["ToolOutput", "field_names", "field_values", "serialize_output"]

ToolOutput = str | tuple[Text | Image, ...]


def field_names(fields: Iterable[str]) -> frozenset[str]:
    return frozenset({fields} if isinstance(fields, str) else fields)


def field_values(value: Any, fields: frozenset[str]) -> Iterator[str]:
    """The text of every value under one of ``fields``, as :func:`serialize_output` spells it."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in fields and item not in ("", None):
                yield (
                    json.dumps(item, ensure_ascii=False)[1:-1]
                    if isinstance(item, str)
                    else json.dumps(item, ensure_ascii=False)
                )
            else:
                yield from field_values(item, fields)
    elif isinstance(value, list):
        for item in value:
            yield from field_values(item, fields)


def serialize_output(value: Any) -> ToolOutput:
    """A function's return value as tool-result content.

    Strings pass as they are; images become image parts; everything else is JSON with non-ASCII kept
    (the model reads ``北京`` better than ``\\u5317\\u4eac``).
    """
    if isinstance(value, str):
        return value
    if type(value) is int:  # the commonest other answer, the same text as JSON, without the encoder
        return str(value)
    if isinstance(value, Text | Image):
        return (value,)
    if isinstance(value, list | tuple) and value and all(isinstance(v, Text | Image) for v in value):
        return tuple(value)
    return _ENCODER.encode(value)


def _json_default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)


# json.dumps with options builds an encoder per call; one shared encoder is the same output for less.
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_default)
