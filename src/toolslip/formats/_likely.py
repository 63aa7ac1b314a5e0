"""Which wire format a body looks like, for the error of a conversion given the wrong source format.

Read with the wrong format, data fails far from the mistake: OpenAI Chat tools read as Anthropic are
"anthropic tool declaration 'function' cannot be expressed". When a conversion fails, the format the data
looks like (its tool declarations' shape, or what :func:`~toolslip.formats.checker.evident_format` sees in
a body or message list) is named first, but only when that format reads the data without an error: a guess
that would fail too is no help.
"""

from __future__ import annotations

from collections.abc import Callable

from ..core.errors import FormatError
from . import read_declaration

__all__ = ["misread"]

_SAME_TOOLS = {"openai-chat", "ollama"}
"""Ollama declares tools as Chat does: a Chat-shaped declaration says nothing against ``ollama``."""


def misread(exc: FormatError, data: object, source: str, kind: str, reads: Callable[[str], object]) -> FormatError:
    """``exc``, led by the format ``data`` looks like when that is not ``source`` and ``reads(format)``
    (the conversion of ``data`` from that format to itself) raises no FormatError."""
    likely = _likely(data, kind)
    if likely is None or likely == source or {likely, source} == _SAME_TOOLS:
        return exc
    try:
        reads(likely)
    except FormatError:
        return exc
    said = f"give {likely} as its format (--from {likely}); read as {source}: {exc}"
    hinted = type(exc)(f"this looks like {likely} data, not {source}: {said}")
    hinted.path = exc.path  # where the reading failed, as before
    return hinted


def _likely(data: object, kind: str) -> str | None:
    if kind == "tools":
        first = data[0] if isinstance(data, list) and data else None
        if not isinstance(first, dict):
            return None
        try:
            return read_declaration(first)[0]
        except FormatError:
            return None
    from .checker import evident_format

    return evident_format(data)
