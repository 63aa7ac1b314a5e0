"""Held calls decided from outside the run: the inbox a console or an application answers.

A run with no approver at hand pauses on a call that needs a decision (approval asked, the gate asked, a
side effect cut off by an interruption): its ``finish`` entry lists the pending calls. Anyone who can reach
the journal may then decide one — approve it, deny it with a reason the model reads, or approve it with
edited arguments — and the run goes on wherever it is owned: a process waiting in
:meth:`Journal.wait_and_resume <toolslip.durable.journal.Journal.wait_and_resume>`,
``toolslip resume``, or a fleet worker, all through :meth:`Journal.resume
<toolslip.durable.journal.Journal.resume>`.

A decision is bound to what the decider was shown: :func:`call_hash` of the run, the step, the call and its
arguments. It is kept in a ``decisions`` table beside the journal's entries (one row per held call: a
second decision is refused, whoever comes first wins), not in the entries, which only the run's lease
holder writes. The process that resumes the run writes it into the run's own log as a ``decision`` entry
(who decided, what was edited) before acting on it, so ``toolslip show`` and replays see it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ..core.errors import ConfigError
from ..core.messages import ModelResponse, ToolCall
from .journal_store import Entry, JournalStore

__all__ = [
    "DecisionRefused",
    "HeldCall",
    "call_hash",
    "decide",
    "decision_for",
    "describe_decision",
    "edit_response",
    "has_inbox",
    "held_calls",
    "inbox_decisions",
]

_SIDE_EFFECTS = {"side_effect", "egress", "destructive"}


class DecisionRefused(ConfigError):
    """The call is not waiting for this decision: decided already, changed since it was shown, or gone."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HeldCall:
    """One call a paused or interrupted run waits on."""

    run_id: str
    step: int
    call_id: str
    tool: str
    arguments: Mapping[str, Any]
    reason: str = ""
    interrupted: bool = False
    """Cut off by an interruption: approving runs it again (it may have happened once); no edits."""
    asked: bool = False
    """Asked about by the running process, which waits for the answer: approve or deny, no edits."""

    @property
    def editable(self) -> bool:
        return not (self.interrupted or self.asked)

    @property
    def hash(self) -> str:
        return call_hash(self.run_id, self.step, self.call_id, self.tool, self.arguments)


def call_hash(run_id: str, step: int, call_id: str, tool: str, arguments: Mapping[str, Any]) -> str:
    """What a decision is bound to: the exact call and arguments shown (SHA-256 of their canonical JSON)."""
    shown = {"run": run_id, "step": step, "call": call_id, "tool": tool, "arguments": arguments}
    return hashlib.sha256(orjson.dumps(shown, option=orjson.OPT_SORT_KEYS)).hexdigest()


def held_calls(entries: Sequence[Entry], *, running: bool = False) -> list[HeldCall]:
    """The calls the run waits on: pending ones of its last pause, or side effects cut off by an interruption.

    ``running``: a live process holds the run, so a call with no recorded end is being executed, not cut off.
    """
    own = [e for e in entries if e.kind not in ("decision", "ask")]
    if not own:
        return []
    last = own[-1]
    if last.kind == "finish":
        return [
            HeldCall(
                run_id=last.run_id,
                step=last.step,
                call_id=p["call_id"],
                tool=p["tool"],
                arguments=p.get("arguments") or {},
                reason=p.get("reason", ""),
                interrupted=bool(p.get("interrupted")),
            )
            for p in last.data.get("pending", ())
        ]
    if running:
        return _asked(entries)
    return _cut_off(own)


def _asked(entries: Sequence[Entry]) -> list[HeldCall]:
    """Calls a running run asks about and waits on (``Journal.inbox_approver``): an ``ask`` with no decision."""
    answered = {(e.step, e.data.get("call_id")) for e in entries if e.kind == "decision"}
    return [
        HeldCall(
            run_id=e.run_id,
            step=e.step,
            call_id=e.data["call_id"],
            tool=e.data["tool"],
            arguments=e.data.get("arguments") or {},
            reason=e.data.get("reason", ""),
            asked=True,
        )
        for e in entries
        if e.kind == "ask" and (e.step, e.data["call_id"]) not in answered
    ]


def _arguments(part: Mapping[str, Any]) -> Any:
    """A journaled call's arguments (a long one is kept as the text the model wrote: see the journal)."""
    return orjson.loads(part["raw_arguments"]) if part.get("arguments_from_raw") else part.get("arguments")


def _cut_off(entries: Sequence[Entry]) -> list[HeldCall]:
    """Side-effecting calls of an interrupted run that started and have no recorded end."""
    ended = {(e.step, e.data["result"]["call_id"]) for e in entries if e.kind == "tool_end"}
    calls: dict[tuple[int, str], Any] = {}
    for entry in entries:
        if entry.kind == "model":
            for part in entry.data["response"]["message"].get("parts", ()):
                if part.get("kind") == "tool_call":
                    calls[entry.step, part["id"]] = _arguments(part)
    held = []
    for entry in entries:
        where = (entry.step, entry.data.get("call", {}).get("id", ""))
        if entry.kind == "tool_start" and where not in ended and _SIDE_EFFECTS & set(entry.data.get("effects", ())):
            found = calls.get(where)
            held.append(
                HeldCall(
                    run_id=entry.run_id,
                    step=entry.step,
                    call_id=where[1],
                    tool=entry.data["call"]["name"],
                    arguments=found or {},
                    reason="it started before the run was interrupted and has no recorded end",
                    interrupted=True,
                )
            )
    return held


def decide(
    store: JournalStore,
    run_id: str,
    call_id: str,
    *,
    shown: str,
    approved: bool,
    note: str = "",
    by: str = "",
    arguments: Mapping[str, Any] | None = None,
    running: bool = False,
) -> HeldCall:
    """Record a decision about one held call of ``run_id``; raises :class:`DecisionRefused` when the call is
    not held any more, ``shown`` (its :func:`call_hash`) no longer matches it, or it was decided already.

    ``arguments`` approves the call with these arguments instead of the model's (not for a call cut off by an
    interruption: what may already have happened is run again as it was, or not at all).
    """
    held = {h.call_id: h for h in held_calls(store.entries(run_id), running=running)}
    call = held.get(call_id)
    if call is None:
        raise DecisionRefused(f"run {run_id} is not waiting on a call {call_id!r}; it may have been decided already")
    if call.hash != shown:
        raise DecisionRefused(f"call {call_id} of run {run_id} is not the one shown; reload and decide again")
    if arguments is not None and call.interrupted:
        raise DecisionRefused("a call cut off by an interruption is run again as it was, or not at all")
    if arguments is not None and call.asked:
        raise DecisionRefused("the run asking about this call waits for a yes or no; it cannot take edits")
    if arguments is not None and not approved:
        raise DecisionRefused("edited arguments come with an approval, not a denial")
    data: dict[str, Any] = {"call_id": call_id, "tool": call.tool, "approved": approved, "note": note, "by": by}
    data |= {"shown": shown, "at": time.time()}
    if arguments is not None and dict(arguments) != dict(call.arguments):
        data["arguments"], data["original"] = dict(arguments), dict(call.arguments)
    if not _box(store).put(run_id, call.step, call_id, shown, data):
        raise DecisionRefused(f"call {call_id} of run {run_id} was decided already")
    return call


def decision_for(store: JournalStore, run_id: str, step: int, call_id: str, shown: str) -> dict[str, Any] | None:
    """The inbox's decision about one call as shown (:func:`call_hash`), if one was made yet."""
    found = _box(store).get(run_id) if has_inbox(store) else []
    return next((d for d in found if (d["step"], d["call_id"], d["shown"]) == (step, call_id, shown)), None)


def inbox_decisions(store: JournalStore, run_id: str, entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """Decisions waiting in the inbox for calls the run holds now (each with its ``step``)."""
    if not has_inbox(store):
        return []
    held = {(h.step, h.call_id): h.hash for h in held_calls(entries)}
    return [d for d in _box(store).get(run_id) if held.get((d["step"], d["call_id"])) == d["shown"]]


def edit_response(response: ModelResponse, edits: Mapping[str, Mapping[str, Any]]) -> ModelResponse:
    """``response`` with the arguments of the calls in ``edits`` (call id -> arguments) replaced."""
    import dataclasses

    parts = tuple(
        dataclasses.replace(p, arguments=dict(edits[p.id]), raw_arguments=orjson.dumps(edits[p.id]).decode())
        if isinstance(p, ToolCall) and p.id in edits
        else p
        for p in response.message.parts
    )
    return dataclasses.replace(response, message=dataclasses.replace(response.message, parts=parts))


def describe_decision(data: Mapping[str, Any]) -> str:
    """``call_1 pay approved by alice, edited: amount 20 -> 25`` (a decision taken from the inbox)."""
    who = f" by {data['by']}" if data.get("by") else ""
    line = f"{data.get('call_id')} {data.get('tool')} {'approved' if data.get('approved') else 'denied'}{who}"
    if data.get("note"):
        line += f": {data['note']}"
    original, edited = data.get("original") or {}, data.get("arguments")
    if edited is not None:
        changes = [
            f"{k} {_shown(original, k)} -> {_shown(edited, k)}"
            for k in sorted({*original, *edited})
            if original.get(k) != edited.get(k) or (k in original) != (k in edited)
        ]
        line += f", edited: {'; '.join(changes)}"
    return line


def _shown(arguments: Mapping[str, Any], name: str) -> str:
    return orjson.dumps(arguments[name]).decode() if name in arguments else "(none)"


# --- where decisions wait: a table beside the entries -------------------------------------------------


class _SqliteBox:
    _SCHEMA = """CREATE TABLE IF NOT EXISTS decisions (
        run_id TEXT NOT NULL, step INTEGER NOT NULL, call_id TEXT NOT NULL, shown TEXT NOT NULL,
        data BLOB NOT NULL, PRIMARY KEY (run_id, step, call_id))"""

    def __init__(self, path: Any) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=30000")
        self.db.execute(self._SCHEMA)

    def put(self, run_id: str, step: int, call_id: str, shown: str, data: Mapping[str, Any]) -> bool:
        row = (run_id, step, call_id, shown, orjson.dumps(data))
        return bool(self.db.execute("INSERT OR IGNORE INTO decisions VALUES (?, ?, ?, ?, ?)", row).rowcount)

    def get(self, run_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT step, data FROM decisions WHERE run_id = ?", (run_id,)).fetchall()
        return [{**orjson.loads(data), "step": step} for step, data in rows]


class _PostgresBox:
    _SCHEMA = """CREATE TABLE IF NOT EXISTS toolslip.decisions (
        run_id text NOT NULL, step integer NOT NULL, call_id text NOT NULL, shown text NOT NULL,
        data bytea NOT NULL, PRIMARY KEY (run_id, step, call_id))"""

    def __init__(self, store: Any) -> None:
        self.store = store
        with store.pool.connection() as conn:
            conn.execute("CREATE SCHEMA IF NOT EXISTS toolslip")
            conn.execute(self._SCHEMA)

    def put(self, run_id: str, step: int, call_id: str, shown: str, data: Mapping[str, Any]) -> bool:
        with self.store.pool.connection() as conn:
            cursor = conn.execute(
                "INSERT INTO toolslip.decisions VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (run_id, step, call_id, shown, orjson.dumps(data)),
            )
            return bool(cursor.rowcount)

    def get(self, run_id: str) -> list[dict[str, Any]]:
        with self.store.pool.connection() as conn:
            rows = conn.execute("SELECT step, data FROM toolslip.decisions WHERE run_id = %s", (run_id,)).fetchall()
        return [{**orjson.loads(bytes(data)), "step": step} for step, data in rows]


_BOXES: weakref.WeakKeyDictionary[Any, _SqliteBox | _PostgresBox] = weakref.WeakKeyDictionary()


def has_inbox(store: JournalStore) -> bool:
    """Whether ``store`` keeps an inbox: the built-in SQLite and PostgreSQL stores do."""
    return hasattr(store, "pool") or hasattr(store, "path")


def _box(store: JournalStore) -> _SqliteBox | _PostgresBox:
    """The decisions table of ``store``'s database (a SQLite file, or PostgreSQL's ``toolslip`` schema)."""
    box = _BOXES.get(store)
    if box is None:
        if not has_inbox(store):
            raise ConfigError("held calls are decided in a SQLite or PostgreSQL journal; this store keeps no inbox")
        box = _BOXES[store] = _PostgresBox(store) if hasattr(store, "pool") else _SqliteBox(store.path)  # type: ignore[attr-defined]  # has_inbox: it has one
    return box
