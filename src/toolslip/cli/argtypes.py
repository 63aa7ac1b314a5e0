"""argparse types for numbers with a range, so a bad value is a usage error (exit 2) naming the option, and
the same check for a ``--model`` string (made after the tools file is read, since it may add a provider)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["at_least", "check_model", "fraction", "port", "temperature"]


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def at_least(low: int) -> Callable[[str], int]:
    """An integer type that refuses values below ``low`` (0 or -1 would otherwise mean "no limit" somewhere)."""

    def parse(text: str) -> int:
        value = _whole(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    return parse


def port(text: str) -> int:
    """A TCP port, 0 (a free one) to 65535; the socket layer's own error for others is a traceback."""
    value = _whole(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be between 0 and 65535, got {value}")
    return value


def _number_in(text: str, low: float, high: float) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from {low:g} to {high:g}, got {text!r}") from None
    if not low <= value <= high:
        raise argparse.ArgumentTypeError(f"must be between {low:g} and {high:g}, got {text}")
    return value


def fraction(text: str) -> float:
    """A number from 0 to 1 (a pass rate)."""
    return _number_in(text, 0, 1)


def temperature(text: str) -> float:
    """A sampling temperature, 0 to 2 (the range OpenAI's API accepts; Anthropic's is 0 to 1)."""
    return _number_in(text, 0, 2)


def check_model(spec: str | None) -> None:
    """A malformed ``--model`` is a usage error (:class:`~toolslip.core.errors.InvalidValue`, exit 2) found
    before anything is loaded; a missing API key, found later, is not."""
    from ..providers import check_model_string

    if spec is not None:
        check_model_string(spec)
