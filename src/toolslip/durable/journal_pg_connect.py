"""The journal's first connection to PostgreSQL, made directly so that a problem is named at once.

A connection pool retries a failing connection until its timeout and then says only that it timed out
("pool initialization incomplete after 10.0 sec"), whatever the cause: a wrong password, a database
that does not exist, nothing listening, a host name that does not resolve. One direct connection first
turns each into one sentence within seconds; a malformed URL (``postgresql://u@[::1/db``) is named as
such instead of a traceback.
"""

from __future__ import annotations

import psycopg

from ..core.errors import ConfigError

__all__ = ["first_line", "probe"]

_PROBE_TIMEOUT = 3
"""Seconds the first connection may take: a server that does not answer by then is named unreachable."""

# libpq's words for the causes a person can fix, and the sentence that names each.
_CAUSES = (
    ("password authentication failed", "wrong password (or user) for it"),
    ("no password supplied", "the server asks for a password and the URL has none"),
    ("does not exist", "{reason}"),
    ("connection refused", "nothing listens there (connection refused: is the server running, on that port?)"),
    ("could not translate host name", "its host name does not resolve (DNS: {reason})"),
    ("name or service not known", "its host name does not resolve (DNS: {reason})"),
    ("timeout expired", f"the server did not answer within {_PROBE_TIMEOUT} s"),
    ("no such file or directory", "there is no server socket in that folder (is the server running?)"),
    ("servname not supported", "its port is not a number"),
)


def probe(url: str, where: str) -> None:
    """Connect once, directly, so that a bad URL or an unreachable server is a :class:`ConfigError` naming
    its cause within seconds; the pool would retry for ``retry_for`` and then say only that it timed out."""
    try:
        psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        why = first_line(exc).partition(" in URI")[0]  # libpq repeats the URL, password and all
        raise ConfigError(f"the run journal URL {where} is malformed: {why}") from None
    try:
        psycopg.connect(url, connect_timeout=_PROBE_TIMEOUT, autocommit=True).close()
    except psycopg.Error as exc:
        raise ConfigError(f"cannot open the run journal {where}: {_cause(exc)}") from None


def _cause(exc: BaseException) -> str:
    reason = " ".join(str(exc).split())  # libpq's message spans lines (one per address it tried)
    reason = reason.rstrip(".").replace("connection failed: ", "")
    lowered = reason.lower()
    for words, sentence in _CAUSES:
        if words in lowered:
            return sentence.format(reason=_last_clause(reason))
    return reason


def _last_clause(reason: str) -> str:
    """libpq's ``connection to server at "h" (::1), port 5432 failed: FATAL:  database "x" does not exist``
    without the address part, which the URL already says."""
    return reason.rpartition(" failed: ")[2].removeprefix("FATAL: ").strip()


def first_line(exc: BaseException) -> str:
    """The first line of a driver error, as a clause."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text.rstrip(".")
