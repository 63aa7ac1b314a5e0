"""``os._exit`` called by a tool in a worker thread fails that call instead of ending the whole process.

A plain ``def`` tool runs in one of toolslip's threads, in the process of the run itself. ``os._exit(3)`` there
ended the CLI at once with status 3, which the CLI uses for "step limit", and printed nothing: no stop line,
no journal entry, no word of which tool did it. ``sys.exit`` raises in the tool's thread and is reported as
the tool's error (:meth:`toolslip.agent.tools.Tool.invoke`); ``os._exit`` runs no Python code after it, so
the only place to catch it is the call itself. While a tool's call runs in a worker thread, ``os._exit`` in
*that thread of this process* raises :class:`ExitCalled` there instead; everywhere else (the main thread,
other threads, a child forked by the tool, ``isolate="process"`` children) it is the real one.
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

__all__ = ["ExitCalled", "exits_raise"]

T = TypeVar("T")

_real_exit = os._exit
_inside = threading.local()
"""``pid``: the process whose tool call this thread is running (a forked child has another pid)."""


class ExitCalled(SystemExit):
    """A tool called ``os._exit(code)`` in its worker thread; raised there instead of ending the process."""


def _exit(status: int) -> NoReturn:
    if getattr(_inside, "pid", None) == os.getpid():
        raise ExitCalled(status)
    _real_exit(status)


def exits_raise(fn: Callable[..., T]) -> Callable[..., T]:
    """``fn``, during whose calls ``os._exit`` in the calling thread raises :class:`ExitCalled`."""
    if os._exit is not _exit:  # installed on first use: importing toolslip changes nothing
        os._exit = _exit

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> T:
        _inside.pid = os.getpid()
        try:
            return fn(*args, **kwargs)
        finally:
            _inside.pid = None

    return call
