"""Memoised wire encodings, for loops that resend a growing history on every step.

An agent loop sends the whole transcript on every step, so without a memo step K re-encodes K earlier
messages that have not changed, and even a per-message lookup is K Python calls per step. Two memos:

- :class:`MessageMemo`: one message's encoding, computed once per message object.
- :class:`HistoryMemo`: a whole history's encoding. When a history is an earlier one plus new messages at
  its end (object for object: checked by identity, in C), only the new messages are encoded; the rest is
  one list copy. Other histories fall back to the per-message memo.
- :class:`RecentMemo`: the encoding of the last few objects seen (the tool list, which the loop offers
  unchanged on every step), held strongly: at most ``size`` of them.

Memory is tied to the messages, not to the process: messages are frozen, so an encoding stays valid for
the life of the message object, and the memos hold only weak references to the messages they are keyed
by. An entry goes when its message is collected, so a finished run's transcript takes its encodings with
it and nothing is kept alive across runs. ``entries()`` says how many encodings are alive.

The cached dicts are shared by every body built from the same message: callers must not mutate the
``messages`` entries of a body in place (build a new dict instead). toolslip's own code never does.
The lists returned are new, so appending to a body's ``messages`` list is safe.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterable
from operator import is_
from typing import Any, Generic, TypeVar

from ..core.messages import Message

__all__ = ["HistoryMemo", "MessageMemo", "RecentMemo"]

T = TypeVar("T")
Json = dict[str, Any]
LOOKBACK = 8
"""How many messages from the end a history may have gained (or had replaced) and still extend an earlier one."""


class MessageMemo(Generic[T]):
    """``memo(message)`` is ``encode(message)``, computed once per live message object."""

    def __init__(self, encode: Callable[[Message], T]) -> None:
        self._encode = encode
        self._cache: dict[int, tuple[weakref.ref[Message], T]] = {}

    def __call__(self, message: Message) -> T:
        hit = self._cache.get(id(message))
        if hit is not None and hit[0]() is message:
            return hit[1]
        value = self._encode(message)
        key = id(message)
        cache = self._cache
        # The entry goes with its message; the identity check skips a newer entry under a reused id.
        self._cache[key] = (weakref.ref(message, _forgetter(cache, key)), value)
        return value

    def entries(self) -> int:
        return len(self._cache)

    def clear(self) -> None:
        self._cache.clear()


class HistoryMemo:
    """``memo(messages)`` is the concatenation of ``encode(m)`` for each message, extended rather than rebuilt.

    One entry per history, keyed by its last message: extending a history replaces its entry, so a run
    holds one entry whatever its length. An entry holds the earlier messages strongly and the last one
    weakly, so it lives exactly as long as the last message does (which holds the run's transcript anyway).
    """

    def __init__(self, encode: Callable[[Message], list[Json]]) -> None:
        self._encode = encode
        self._one = MessageMemo(encode)
        # The entry's list is its own: it is extended in place when its history grows, and only copies leave.
        self._cache: dict[int, tuple[weakref.ref[Message], tuple[Message, ...], list[Json]]] = {}

    def __call__(self, messages: Iterable[Message]) -> list[Json]:
        history = messages if type(messages) is tuple else tuple(messages)
        if not history:
            return []
        cache, count = self._cache, len(history)
        out: list[Json] | None = None
        start = 0
        for end in range(count - 1, max(count - 1 - LOOKBACK, -1), -1):
            hit = cache.get(id(history[end]))
            if hit is None:
                continue
            last, earlier, wire = hit
            if last() is history[end] and len(earlier) == end and all(map(is_, earlier, history)):
                # This history replaces the entry. Taking it out is the claim on its list: another thread
                # extending the same history at the same moment finds it gone and encodes afresh.
                if cache.pop(id(history[end]), None) is hit:
                    out, start = wire, end + 1
                break
        # Extending: the new messages are encoded once and kept in this entry only. Otherwise this history
        # shares no tail with a cached one (a hook rewrote it): the per-message memo saves what it can.
        encode: Callable[[Message], list[Json]] = self._encode
        if out is None:
            out, encode = [], self._one
        for message in history[start:]:
            out.extend(encode(message))
        key = id(history[-1])
        cache[key] = (weakref.ref(history[-1], _forgetter(cache, key)), history[:-1], out)
        return out.copy()

    def entries(self) -> int:
        """Live encodings: histories plus single messages."""
        return len(self._cache) + self._one.entries()

    def clear(self) -> None:
        self._cache.clear()
        self._one.clear()


class RecentMemo(Generic[T]):
    """``memo(value)`` is ``encode(value)``, kept for the last ``size`` objects seen (by identity)."""

    def __init__(self, encode: Callable[[Any], T], size: int = 64) -> None:
        self._encode = encode
        self._size = size
        self._cache: dict[int, tuple[Any, T]] = {}

    def __call__(self, value: Any) -> T:
        hit = self._cache.get(id(value))
        if hit is not None and hit[0] is value:
            return hit[1]
        out = self._encode(value)
        if len(self._cache) >= self._size:
            with contextlib.suppress(RuntimeError, StopIteration, KeyError):  # another thread got there first
                del self._cache[next(iter(self._cache))]  # the oldest: dicts keep insertion order
        self._cache[id(value)] = (value, out)  # held, so its id cannot be reused while it is here
        return out

    def entries(self) -> int:
        return len(self._cache)


def _forgetter(cache: dict[int, Any], key: int) -> Callable[[weakref.ref[Message]], None]:
    """The weak reference's callback: drop ``cache[key]`` if it is still the entry of the collected message.

    A closure, not a module function: callbacks also fire while the interpreter shuts down and empties modules.
    """

    def forget(ref: weakref.ref[Message]) -> None:
        if cache.get(key, (None,))[0] is ref:
            cache.pop(key, None)

    return forget
