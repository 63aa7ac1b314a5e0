"""The command's standard streams: present even when closed by the caller, and quiet when the reader leaves.

* ``toolslip ... <&-`` starts the command with descriptor 0 closed. The next file opened (the journal, a
  tool's pipe) would then *become* standard input, and a child process would read it as its stdin; and
  Python's ``sys.stdin`` is ``None``, which the approver tripped over. The missing descriptors are opened
  on ``/dev/null`` first, and ``sys.stdin`` reads it: no terminal, so the non-interactive policy applies.
* ``toolslip run ... | head -2``: the reader goes away and the next write fails with ``EPIPE``. Nobody reads
  what the command would still print, so it stops at once, as a Ctrl-C stops it (the embedded model within
  a token, the run journaled as interrupted, so ``toolslip resume`` can finish it), but quietly: no line on
  stderr, and exit 141 (128 + SIGPIPE, the status of a program a pipe's end stopped). A run used to decode
  on for 78 s after ``head`` had exited. What is printed meanwhile goes to ``/dev/null``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Any, TextIO, cast

__all__ = ["reader_gone", "standard_streams", "stdout_to_stderr"]

_gone: list[bool] = []
"""Holds True once the reader of stdout went away (a list, so no ``global`` statement is needed)."""


def reader_gone() -> bool:
    """Whether this process stopped because the reader of its stdout went away (see the module docstring)."""
    return bool(_gone)


class _QuietPipe:
    """A text stream whose writes never fail because the reader went away; they go to ``/dev/null`` then."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_gone()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        # Point the descriptor at /dev/null: what is still buffered, and everything after it, is dropped
        # there, including the interpreter's own flush at exit (which would print "Broken pipe" again).
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, self._stream.fileno())
        os.close(null)
        if not _gone:
            _gone.append(True)
            # The Ctrl-C path: asyncio cancels a running run (the journal says interrupted), anything else
            # gets KeyboardInterrupt, and the command's handler ends the process quietly (reader_gone()).
            signal.raise_signal(signal.SIGINT)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _reopen_closed_descriptors() -> None:
    for fd, mode in ((0, os.O_RDONLY), (1, os.O_WRONLY), (2, os.O_WRONLY)):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, mode)  # the lowest free number: the one that was closed
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # it lives as long as the process


@contextlib.contextmanager
def standard_streams() -> Iterator[None]:
    """For the length of one command: closed descriptors on ``/dev/null``, and a stdout that stays quiet."""
    _reopen_closed_descriptors()
    stdout = sys.stdout
    if stdout is None or isinstance(stdout, _QuietPipe):
        yield
        return
    quiet = _QuietPipe(stdout)
    sys.stdout = cast(TextIO, quiet)
    try:
        yield
    finally:
        quiet.flush()  # here, not at exit: the interpreter's own flush would complain of a reader gone
        sys.stdout = stdout


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Descriptor 1 points at stderr inside the block (``run --json``: stdout holds the JSON alone).

    At the descriptor, not ``sys.stdout``: a tool's ``print`` in a worker thread, a tool in a child process
    (which inherits the descriptor) and a C library writing to it all land on stderr alike.
    """
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
