"""A total-time limit on each request in flight, kept by one periodic check per transport and event loop.

aiohttp's own total timeout arms a timer and cancels it on every request, about 25 k instructions each
time: a tenth of what a fast loop step costs the client (``benchmarks/loop_overhead.py``). Here a
request costs two dict operations. The check runs every ``period`` seconds while requests are in flight
(and one period after the last one, so back-to-back requests keep one timer instead of arming a new
one each), and cancels the task of every request past its deadline. The request turns that cancellation
into a timeout the way ``asyncio.timeout`` does, with ``Task.uncancel``: when something else cancelled
the task too (Ctrl-C, the caller's own timeout), the cancellation goes on as one.

A deadline fires up to one period late: a tenth of the limit, at most one second.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["Deadlines"]


class Deadlines:
    """The deadlines of the requests one transport has in flight on one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, seconds: float) -> None:
        self._loop = loop
        self._seconds = seconds
        self._period = min(max(seconds / 10, 0.01), 1.0)
        self._due: dict[asyncio.Task[Any], float] = {}
        self._cancelled: set[asyncio.Task[Any]] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._used = False

    def enter(self) -> asyncio.Task[Any] | None:
        """Start the clock for the request the current task is making; its task, for :meth:`leave`."""
        task = asyncio.current_task(self._loop)
        if task is None:  # pragma: no cover - aiohttp itself refuses to run outside a task
            return None
        self._due[task] = self._loop.time() + self._seconds
        self._used = True
        if self._timer is None:
            self._timer = self._loop.call_later(self._period, self._check)
        return task

    def leave(self, task: asyncio.Task[Any] | None) -> None:
        """The request is over, however it ended."""
        if task is not None:
            self._due.pop(task, None)
            self._cancelled.discard(task)

    def timed_out(self, task: asyncio.Task[Any] | None) -> bool:
        """After a ``CancelledError`` in ``task``'s request: whether this check cancelled it and nothing else
        did (the cancellation is then taken back, so the caller can raise a timeout instead)."""
        if task is None or task not in self._cancelled:
            return False
        self._cancelled.discard(task)
        return task.uncancel() == 0

    def _check(self) -> None:
        now = self._loop.time()
        for task, due in list(self._due.items()):
            if due <= now:
                del self._due[task]
                self._cancelled.add(task)
                task.cancel()
        busy, self._used = self._due or self._used, False
        self._timer = self._loop.call_later(self._period, self._check) if busy else None
