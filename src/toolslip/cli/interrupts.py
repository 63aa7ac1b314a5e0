"""Ctrl-C held back while the command imports code, and delivered as soon as that is done.

A KeyboardInterrupt raised in the middle of a C extension's import (orjson, sqlite3, pydantic-core when a
tools file first uses ``@tool``) leaves the extension half made: the interpreter then crashed, panicked or
hung in its final garbage collection on the way out. While code is being loaded, a Ctrl-C is only noted;
it is raised when the loading is over, so the command still stops at the first press, cleanly.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["ctrl_c_held"]


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Note a Ctrl-C inside the block and raise it (KeyboardInterrupt) when the block ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt
