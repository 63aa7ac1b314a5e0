"""argparse types for numbers with a range, so a bad value is a usage error (exit 2) naming the option."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["at_least", "port"]


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
