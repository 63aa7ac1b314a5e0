"""A storage fault of the run journal as one sentence: which file, what went wrong, what to do.

The SQLite store wraps its reads and writes in :func:`translated`; whatever SQLite, the file system or
the entry decoder raised (``DatabaseError``, ``OSError``, an undecodable row) leaves the store as one
:class:`~toolslip.core.errors.JournalError`, the type the PostgreSQL store (:mod:`.journal_pg`) raises
for its own faults, so the CLI prints a line, never a traceback, and a library caller catches one type
whatever the backend. The causes are told apart by what the fault *is* (SQLite's result code,
``errno``), not by where it happened:

* the disk (or the database's quota) is full;
* the file is damaged: a page that is not a database page, text that is not UTF-8, an entry that is not JSON;
* the file or its folder is read-only (a read-only mount, a folder without write permission);
* anything else, with the library's own words.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import orjson

from ..core.errors import JournalError

__all__ = ["FAULTS", "fault_sentence", "journal_faults", "read_only_folder", "rollback", "translated"]

FAULTS: tuple[type[BaseException], ...] = (sqlite3.Error, OSError, orjson.JSONDecodeError, UnicodeDecodeError)
"""What SQLite, the file system and the entry decoder raise."""

_FULL_CODES = {"SQLITE_FULL"}
_DAMAGED_CODES = {"SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT_SEQUENCE"}


def read_only_folder(path: Path) -> bool:
    """Whether ``path``'s folder cannot be written: a read-only mount (which binds root too) or permissions."""
    folder = path.parent
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)
    except OSError:
        return False


def _nearly_full(path: Path) -> bool:
    """Whether ``path``'s file system has less room left than one more write of the journal would need."""
    try:
        stats = os.statvfs(path.parent)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 1 << 16


def fault_sentence(where: str, exc: BaseException) -> str:
    """One sentence for ``exc``, raised while the journal at ``where`` (a file) was used."""
    code = getattr(exc, "sqlite_errorname", "") or ""
    number = getattr(exc, "errno", None)
    text = str(exc)
    journal = f"the run journal {where!r}"
    full = code in _FULL_CODES or number in (errno.ENOSPC, errno.EDQUOT)
    # Growing the -shm or -wal file on a full disk is only "disk I/O error" to SQLite.
    if full or code.startswith("SQLITE_IOERR") and _nearly_full(Path(where)):
        return (
            f"{journal} could not be written because its disk is full; free some space there (or pass --journal "
            "with a file on another disk) and try again: everything written before is kept"
        )
    damaged = (
        code in _DAMAGED_CODES
        or isinstance(exc, orjson.JSONDecodeError | UnicodeDecodeError)
        or "decode to UTF-8" in text  # SQLite's text column holding bytes that are not UTF-8
    )
    if damaged:
        return (
            f"{journal} is damaged ({text.splitlines()[0] if text else type(exc).__name__}); move it aside to "
            f"start a new one, or save what can be read with `sqlite3 {where} .recover`"
        )
    path = Path(where)
    read_only = code.startswith("SQLITE_READONLY") or number == errno.EROFS
    refused = code.startswith("SQLITE_CANTOPEN") or number in (errno.EACCES, errno.EPERM)
    if read_only or refused and read_only_folder(path):
        return (
            f"{journal} cannot be written: its folder {str(path.parent)!r} is read-only; make it writable, or pass "
            "--journal with a file in a folder you can write (`toolslip runs` and `show` can still read it)"
        )
    return f"{journal} failed: {text or type(exc).__name__}; check the file and its folder"


def rollback(db: sqlite3.Connection) -> None:
    """End a failed transaction, if SQLite has not ended it already.

    After a full disk (and a few other faults) SQLite rolls the transaction back by itself; a second
    ROLLBACK then fails with "no transaction is active", and that error hid the one that mattered.
    """
    if db.in_transaction:
        db.execute("ROLLBACK")


@contextmanager
def journal_faults(where: str | os.PathLike[str], faults: tuple[type[BaseException], ...] = FAULTS) -> Iterator[None]:
    """Raise :class:`JournalError` with one sentence for any of ``faults`` raised inside the block."""
    try:
        yield
    except faults as exc:
        raise JournalError(fault_sentence(str(where), exc)) from exc


class _HasPath(Protocol):
    path: Path


F = TypeVar("F", bound=Callable[..., Any])


def translated(method: F) -> F:
    """A store method whose faults leave it as :class:`JournalError` naming the store's ``path``."""

    @wraps(method)
    def call(self: _HasPath, *args: Any, **kwargs: Any) -> Any:
        with journal_faults(self.path):
            return method(self, *args, **kwargs)

    return cast(F, call)
