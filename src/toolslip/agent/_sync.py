"""The event loop behind the synchronous entry points (``toolslip.run``, ``Agent.run``).

``asyncio.run`` makes an event loop per call and closes it after, and everything bound to the loop goes
with it: a script calling ``toolslip.run`` in a loop paid for a new loop, a new HTTP session and a new TCP
(and TLS) connection on every call, four times the CPU of the run itself on a short task. Each thread
instead keeps one loop for its synchronous calls, so pooled connections (``providers.http`` keeps one pool
per loop) serve the next call. Per call it still does what ``asyncio.run`` does: the caller's context
variables are copied in, Ctrl-C cancels the run (``asyncio.Runner``), and tasks the run left behind are
cancelled when it returns. The loops are closed at exit, which closes their sessions and connections.
"""

from __future__ import annotations

import asyncio
import atexit
import contextvars
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_sync"]

T = TypeVar("T")

_local = threading.local()
_lock = threading.Lock()
_runners: list[asyncio.Runner] = []
"""Every thread's runner, so that exit can close them."""


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, on this thread's own long-lived loop."""
    runner: asyncio.Runner | None = getattr(_local, "runner", None)
    if runner is None:
        # A loop of our own, not the thread's "current" loop: user code calling get_event_loop() is unaffected.
        runner = _local.runner = asyncio.Runner(loop_factory=asyncio.new_event_loop)
        with _lock:
            _runners.append(runner)
    try:
        return runner.run(coro, context=contextvars.copy_context())
    finally:
        _cancel_leftovers(runner.get_loop())


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks a run left behind and let them finish, as ``asyncio.run`` does at its end."""
    if loop.is_closed() or loop.is_running():
        return
    tasks = asyncio.all_tasks(loop)
    if not tasks:
        return
    for task in tasks:
        task.cancel()
    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))


def _close_all() -> None:
    """At exit: close each idle loop (its HTTP sessions and pooled connections close with it)."""
    with _lock:
        runners, _runners[:] = list(_runners), []
    for runner in runners:
        loop = runner.get_loop()
        if loop.is_running():  # a daemon thread still inside a run: leave it to the interpreter
            continue
        try:
            runner.close()
        except Exception:  # exit must go on; a half-closed loop is only a warning
            pass


def _after_fork() -> None:
    """The child shares the parent's loops' file descriptors: it must make its own, and never close these."""
    global _local, _runners
    _local, _runners = threading.local(), []


atexit.register(_close_all)
os.register_at_fork(after_in_child=_after_fork)
