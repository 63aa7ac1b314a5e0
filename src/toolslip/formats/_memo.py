"""Per-message memoisation of wire encodings, for loops that resend a growing history.

An agent loop sends the whole transcript on every step, so without a memo step K re-encodes K earlier
messages that have not changed. Messages are frozen, so an encoding stays valid for the life of the
message object; it is looked up by identity (``id`` plus an ``is`` check, because a ``Message`` holding
dict arguments is not hashable). The memo keeps the newest ``size`` messages alive, no more.

The cached dicts are shared by every body built from the same message: callers must not mutate the
``messages`` entries of a body in place (build a new dict instead). toolslip's own code never does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from ..messages import Message

__all__ = ["MessageMemo"]

T = TypeVar("T")


class MessageMemo(Generic[T]):
    """``memo(message)`` is ``encode(message)``, computed once per message object."""

    def __init__(self, encode: Callable[[Message], T], size: int = 4096) -> None:
        self._encode = encode
        self._size = size
        self._cache: dict[int, tuple[Message, T]] = {}

    def __call__(self, message: Message) -> T:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        value = self._encode(message)
        if len(self._cache) >= self._size:
            del self._cache[next(iter(self._cache))]  # the oldest entry: dicts keep insertion order
        self._cache[id(message)] = (message, value)
        return value

    def clear(self) -> None:
        self._cache.clear()
