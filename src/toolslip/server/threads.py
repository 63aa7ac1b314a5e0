"""Anthropic message threads in ``toolslip serve``: the conversation held between turns, keyed by reply id.

The Anthropic SDKs' tool runners (Python 2.x, TypeScript) thread their requests by default (beta
``message-threads-2026-08-12``): the first turn sends ``thread: {"type": "create"}`` with the whole
conversation, ``system`` and ``tools``; each later turn sends ``{"type": "continue", "previous_message_id":
<the last reply's id>}`` with only the new messages, and without ``system`` and ``tools``, which the service
keeps. ``serve`` keeps them the same way, in memory: a turn's whole conversation, its reply included, is
held under the reply's id, and a ``continue`` is answered as the whole conversation it stands for.

What the service answers when it cannot continue, so the SDK recovers as it does there (it replays the
whole history under a new thread): ``thread_not_found`` (404) for an id it does not hold (never seen,
older than an hour, or crowded out), ``thread_already_continued`` (400) for a reply continued before, and
``thread_continue_in_flight`` (400) while another request continues it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import FormatError
from ..formats.anthropic import THREAD_FIELD, read_thread
from .checks import Rejection

__all__ = ["KEPT_FIELDS", "ThreadRefused", "Threads", "Turn"]

KEPT_FIELDS = ("system", "tools")
"""What a thread keeps from the request that creates it; a ``continue`` may not send them again."""


class ThreadRefused(Exception):
    """A ``thread`` the server cannot honour, as the status and error body the service answers with."""

    def __init__(self, status: int, rejection: Rejection) -> None:
        super().__init__(rejection.message)
        self.status, self.rejection = status, rejection


@dataclass
class _Held:
    """One thread at one reply: the whole conversation up to and including it, and what the thread keeps."""

    kept: dict[str, Any]
    messages: list[Any]
    used: float
    state: str = "open"
    """``open``, ``busy`` while a request continues it, ``continued`` once one has."""


@dataclass
class Turn:
    """One threaded request: ``body`` is the whole request it stands for; :meth:`keep` holds its reply."""

    threads: Threads
    body: dict[str, Any]
    continues: str | None = None

    def keep(self, reply_id: str, reply: dict[str, Any]) -> None:
        """Hold the conversation with ``reply`` (a Messages answer body) under ``reply_id``, for the next turn."""
        answer = {"role": "assistant", "content": reply.get("content", [])}
        kept = {k: self.body[k] for k in KEPT_FIELDS if k in self.body}
        self.threads.hold(reply_id, _Held(kept, [*self.body.get("messages", []), answer], self.threads.clock()))
        if self.continues is not None:
            self.threads.settle(self.continues, "continued")
            self.continues = None

    def release(self) -> None:
        """The turn failed: the reply it continued may be continued again."""
        if self.continues is not None:
            self.threads.settle(self.continues, "open")
            self.continues = None


@dataclass
class Threads:
    """The threads one server holds: at most ``limit`` replies, each for ``ttl`` seconds after its last use."""

    ttl: float = 3600.0
    limit: int = 1000
    clock: Callable[[], float] = time.monotonic
    _held: OrderedDict[str, _Held] = field(default_factory=OrderedDict)

    def begin(self, body: dict[str, Any]) -> Turn | None:
        """Take ``thread`` out of ``body``; for a ``continue``, put back the conversation it stands for.

        None for a request without a thread. Raises :class:`ThreadRefused` where the service refuses.
        """
        if THREAD_FIELD not in body:
            return None
        try:
            thread = read_thread(body.pop(THREAD_FIELD))
        except FormatError as exc:
            raise ThreadRefused(400, Rejection(str(exc), THREAD_FIELD)) from None
        if thread is None:
            return None
        if thread["type"] == "create":
            return Turn(self, body)
        previous = thread["previous_message_id"]
        self._forget_old()
        held = self._held.get(previous)
        if held is None:
            raise ThreadRefused(404, _refusal(f"no thread holds a reply {previous!r}", "thread_not_found"))
        if held.state != "open":
            code = "thread_continue_in_flight" if held.state == "busy" else "thread_already_continued"
            raise ThreadRefused(400, _refusal(_WHY[code].format(previous), code))
        again = [k for k in KEPT_FIELDS if k in body]
        if again:
            fields = " and ".join(again)
            raise ThreadRefused(
                400,
                Rejection(
                    f"{fields}: a thread keeps the {fields} it was created with; a continue does not send them",
                    again[0],
                ),
            )
        held.state, held.used = "busy", self.clock()
        self._held.move_to_end(previous)
        whole = {**body, **held.kept, "messages": [*held.messages, *(body.get("messages") or [])]}
        return Turn(self, whole, continues=previous)

    def hold(self, reply_id: str, held: _Held) -> None:
        self._held[reply_id] = held
        self._forget_old()
        while len(self._held) > self.limit:
            self._held.popitem(last=False)

    def settle(self, reply_id: str, state: str) -> None:
        held = self._held.get(reply_id)
        if held is not None:
            held.state = state
            if state == "continued":  # only its refusal is left to say: the conversation lives in the next reply
                held.kept, held.messages = {}, []

    def _forget_old(self) -> None:
        cutoff = self.clock() - self.ttl
        for key in [k for k, h in self._held.items() if h.used < cutoff]:
            del self._held[key]


_WHY = {
    "thread_already_continued": "the reply {!r} was continued already; continue from the thread's latest reply",
    "thread_continue_in_flight": "another request is continuing from {!r}; wait for it and continue from its reply",
}


def _refusal(message: str, code: str) -> Rejection:
    return Rejection(message, THREAD_FIELD, details={"error_code": code})
