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

__all__ = [
    "NOT_RECORDABLE",
    "ToolOutput",
    "field_names",
    "field_values",
    "not_recordable",
    "serialize_output",
    "valid_text",
]

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
    """A function's return value as tool-result content; it never raises, since the function has run.

    Strings pass as they are; images become image parts; everything else is JSON with non-ASCII kept
    (the model reads ``北京`` better than ``\\u5317\\u4eac``). Text is made valid UTF-8 (see
    :func:`valid_text`). A value that cannot be written down (nested 100,000 deep, circular, a
    ``model_dump`` that raises) becomes :func:`not_recordable`: the call *ran*, and is never reported as
    failed, so nobody retries a side effect that already happened.
    """
    try:
        output = _serialized(value)
    except Exception as exc:  # RecursionError, ValueError (a cycle), whatever a model_dump raised
        return not_recordable(exc)
    if isinstance(output, str):
        return valid_text(output)
    return tuple(dataclasses.replace(p, text=valid_text(p.text)) if isinstance(p, Text) else p for p in output)


def _serialized(value: Any) -> ToolOutput:
    if isinstance(value, str):
        return value
    if type(value) is int:  # the commonest other answer, the same text as JSON, without the encoder
        return str(value)
    if isinstance(value, Text | Image):
        return (value,)
    if isinstance(value, list | tuple) and value and all(isinstance(v, Text | Image) for v in value):
        return tuple(value)
    return _ENCODER.encode(value)


NOT_RECORDABLE = "ran; output not recordable"
"""How a result whose call ran but whose return value could not be written down begins."""


def not_recordable(exc: BaseException) -> str:
    """The result of a call that ran but whose return value cannot be written down (and so is lost)."""
    why = f"{type(exc).__name__}: {exc}".removesuffix(": ")
    return f"{NOT_RECORDABLE} ({why[:200]}); the call did run, so its effects happened: do not call it again to see it"


def valid_text(text: str) -> str:
    """``text`` as valid UTF-8: each lone surrogate written as its escape (``\\udcff``).

    ``os.listdir`` gives a file name that is not UTF-8 as lone surrogates (``\\udcff``); such a string
    cannot be encoded, so the journal, the terminal and every wire format refused it with a traceback.
    The escape keeps what the tool saw, readable, in text that any of them takes.
    """
    if text.isascii():  # the common case, answered from a flag the string carries
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


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
