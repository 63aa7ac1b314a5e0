"""Which store a journal location names, and what every leased store offers.

A location is a SQLite file path or a ``postgresql://`` URL; with none given, ``$TOOLSLIP_JOURNAL`` and
then ``$TOOLSLIP_HOME/runs.sqlite`` (``~/.toolslip/runs.sqlite``). Both stores are a :class:`LeasedStore`:
a :class:`~toolslip.durable.journal_store.JournalStore` whose runs are executed under a lease, with the
size and pruning that ``toolslip runs`` shows and does. psycopg is imported only when a PostgreSQL
journal is opened (the optional extra ``toolslip[postgres]``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from ..core.errors import ConfigError
from .journal_store import JournalStore, PruneReport, SqliteStore, default_journal_path
from .lease import Lease, LeaseKeeper

__all__ = ["LeasedStore", "default_location", "is_postgres_url", "open_store"]


class LeasedStore(JournalStore, Protocol):
    """A store whose runs are executed under a lease: :class:`SqliteStore` and ``PostgresStore``."""

    @property
    def leases(self) -> LeaseKeeper: ...

    @property
    def path(self) -> str | os.PathLike[str]:
        """Where the journal is, as messages show it."""

    def append(
        self,
        run_id: str,
        kind: str,
        data: Mapping[str, Any],
        *,
        step: int = 0,
        key: str = "",
        lease: Lease | None = None,
    ) -> None: ...

    def file_size(self) -> int: ...

    def prune(self, *, before: float | None = None, keep: int | None = None) -> PruneReport: ...


def is_postgres_url(location: object) -> bool:
    """Whether ``location`` names a PostgreSQL database rather than a SQLite file."""
    return isinstance(location, str) and location.startswith(("postgresql://", "postgres://"))


def default_location() -> str | Path:
    """``$TOOLSLIP_JOURNAL`` (a path or a ``postgresql://`` URL), else ``$TOOLSLIP_HOME/runs.sqlite``."""
    return os.environ.get("TOOLSLIP_JOURNAL") or default_journal_path()


def open_store(
    location: str | os.PathLike[str] | None = None, *, existing: bool = False, read_only: bool = False
) -> LeasedStore:
    """The store at ``location`` (the default one if ``None``); ``existing``: a missing SQLite file is an error;
    ``read_only``: only read, so a SQLite journal in a read-only folder can be read too."""
    location = location or default_location()
    if is_postgres_url(location):
        try:
            from .journal_pg import PostgresStore  # psycopg is loaded only for a PostgreSQL journal
        except ModuleNotFoundError as exc:
            if exc.name not in ("psycopg", "psycopg_pool"):
                raise
            raise ConfigError(
                "a postgresql:// journal needs psycopg and psycopg_pool: pip install 'toolslip[postgres]'"
            ) from None
        return PostgresStore(str(location))
    file = Path(location)
    if existing and not file.is_file() and not file.is_dir():
        raise ConfigError(f"no run journal at {str(file)!r}; runs are recorded there by `toolslip run`")
    return SqliteStore(file, read_only=read_only)
