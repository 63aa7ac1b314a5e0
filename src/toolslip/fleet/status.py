"""What the journal says about a batch's runs: ``toolslip fleet status`` and a restarted driver read it here.

The fleet keeps no table of its own: a run's state is its journal (its entries and its lease), so what
status shows is what a resume would act on.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import orjson

from ..durable.journal_store import Entry, SqliteStore
from ..durable.stores import LeasedStore
from .task import failures, outcome_of

if TYPE_CHECKING:
    import psycopg

    from ..durable.journal_pg import PostgresStore

__all__ = ["batch_status", "latest_entries"]

_ENTRIES = """
SELECT seq, run_id, at, kind, step, key, data FROM toolslip.entries
WHERE run_id = ANY(%s) AND kind IN ('start', 'resume', 'tool_end', 'finish', 'abort') ORDER BY seq
"""
_PREFIXED = """
SELECT seq, run_id, at, kind, step, key, data FROM toolslip.entries
WHERE starts_with(run_id, %s) AND kind IN ('start', 'resume', 'tool_end', 'finish', 'abort') ORDER BY seq
"""


def latest_entries(
    store: LeasedStore, run_ids: Sequence[str] = (), *, prefix: str | None = None
) -> dict[str, list[Entry]]:
    """The entries that say how far each run got (no model entries), by run id, in one read of a PostgreSQL
    journal (a SQLite one, on one machine, is read run by run)."""
    if isinstance(store, SqliteStore):
        ids = [s.run_id for s in store.runs(1 << 30) if s.run_id.startswith(prefix)] if prefix is not None else run_ids
        return {run_id: entries for run_id in ids if (entries := store.entries(run_id))}

    def read(conn: psycopg.Connection[Any], attempt: int) -> dict[str, list[Entry]]:
        rows = conn.execute(_PREFIXED, (prefix,)) if prefix is not None else conn.execute(_ENTRIES, (list(run_ids),))
        runs: dict[str, list[Entry]] = collections.defaultdict(list)
        for seq, run, at, kind, step, key, data in rows:
            runs[run].append(Entry(seq=seq, run_id=run, at=at, kind=kind, step=step, key=key, data=orjson.loads(data)))
        return dict(runs)

    return cast("PostgresStore", store).retrying("reading the fleet's runs", "", read)


def batch_status(store: LeasedStore, prefix: str, *, attempts: int | None = None) -> dict[str, int]:
    """Runs whose id starts with ``prefix``, counted by state: an outcome, ``running`` (a live lease),
    ``retrying`` (failed, attempts left) or ``interrupted`` (begun, nobody holds it now)."""
    holders, now = store.leases.holders(), time.time()
    counts: collections.Counter[str] = collections.Counter()
    for run_id, entries in latest_entries(store, prefix=prefix).items():
        done = outcome_of(run_id, entries, attempts)
        holder = holders.get(run_id)
        if done is not None:
            counts[done["outcome"]] += 1
        elif holder is not None and holder.alive(now):
            counts["running"] += 1
        elif failures(entries):
            counts["retrying"] += 1
        else:
            counts["interrupted"] += 1
    return dict(counts)
