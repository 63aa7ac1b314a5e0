"""Store-specific handles for the journal tests, which otherwise run the same against SQLite and PostgreSQL.

A test gets a location (``journal_at``: a SQLite path or a ``postgresql://`` URL) and reaches under the
journal only through these: writing a lease row as another process would, and reading one back.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

import psycopg

from toolslip.durable.lease import Holder
from toolslip.durable.stores import is_postgres_url, open_store


def insert_lease(location: str, run_id: str, **fields: Any) -> None:
    """Write ``run_id``'s lease row directly, as another process (or machine) holding it would."""
    row = {"owner": "someone", "pid": 1, "host": "elsewhere", "node": "", "started": "", "taken_at": time.time()}
    row |= {"renewed_at": time.time(), "ttl": 30.0, **fields}
    if is_postgres_url(location):
        columns = ", ".join(row)
        values = ", ".join("to_timestamp(%s)" if c in ("taken_at", "renewed_at") else "%s" for c in row)
        updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in row)
        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute(
                f"INSERT INTO toolslip.leases (run_id, {columns}) VALUES (%s, {values}) "
                f"ON CONFLICT (run_id) DO UPDATE SET {updates}",
                (run_id, *row.values()),
            )
        return
    db = sqlite3.connect(location)
    db.execute(
        f"INSERT OR REPLACE INTO leases (run_id, {', '.join(row)}) VALUES (?{', ?' * len(row)})",
        (run_id, *row.values()),
    )
    db.commit()
    db.close()


def lease_row(location: str, run_id: str) -> Holder | None:
    store = open_store(location)
    try:
        return store.leases.holders().get(run_id)
    finally:
        store.close()


def refused_change(location: str, statement: str) -> str:
    """The error the database gives for ``statement`` against the entries (it must refuse it)."""
    if is_postgres_url(location):
        with psycopg.connect(location, autocommit=True) as conn:
            try:
                conn.execute(statement.replace("entries", "toolslip.entries"))
            except psycopg.Error as exc:
                return str(exc)
        return "accepted"
    db = sqlite3.connect(location)
    try:
        db.execute(statement)
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.close()
    return "accepted"
