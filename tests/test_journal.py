"""The run journal: what it records, how a resume replays it, and what happens to an unfinished call.

Each test runs against both stores (``journal_at``: a SQLite file, a real PostgreSQL server).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
import pytest

from _journals import refused_change
from toolslip import Agent, Toolbox, tool
from toolslip.approval import Approval, ApprovalRequest, Decision
from toolslip.dedup import Dedup
from toolslip.durable.stores import LeasedStore, open_store
from toolslip.errors import ConfigError
from toolslip.journal import Entry, Journal, RunSummary, default_journal_path
from toolslip.messages import Request
from toolslip.testing import FunctionModel, Turn, call

ran: list[str] = []


@tool(effects=["side_effect"], max_output_chars=300)
def transfer(to: str) -> str:
    """Send money."""
    ran.append(to)
    return f"sent to {to}. " + "receipt " * 50


@tool(effects=["side_effect", "idempotent"])
def put(key: str) -> str:
    """Store."""
    ran.append(f"put {key}")
    return "stored"


TOOLS = Toolbox([transfer, put])


class Crash(BaseException):
    """Stands in for the process dying (the real SIGKILL is in test_journal_kill.py)."""


class CrashingStore:
    """A store that dies just before writing the first entry of kind ``before``."""

    def __init__(self, store: LeasedStore, before: str | None) -> None:
        self.store, self.before = store, before

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def append(
        self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "", **kw: Any
    ) -> None:
        if kind == self.before:
            raise Crash(kind)
        self.store.append(run_id, kind, data, step=step, key=key, **kw)


class CountingModel:
    name = "counting"

    def __init__(self, *turns: Turn) -> None:
        self.turns, self.asked = turns, 0

    async def complete(self, request: Request) -> Any:
        self.asked += 1
        return await FunctionModel(lambda r: self.turns[sum(m.role == "assistant" for m in r.messages)]).complete(
            request
        )


def setup_function() -> None:
    ran.clear()


def crash_then_resume(journal_at: str, before: str, approver: Any = None, *turns: Turn) -> tuple[Any, Journal, Any]:
    model = CountingModel(*(turns or (call("transfer", to="ann"), "done")))
    crashing = Journal(CrashingStore(open_store(journal_at), before))  # type: ignore[arg-type]
    with pytest.raises(Crash):
        Agent(model=model, tools=TOOLS, hooks=crashing.wrap(Dedup())).run("pay ann", run_id="r")
    crashing.store.close()
    journal = Journal(journal_at, approver=approver)
    agent = Agent(model=model, tools=TOOLS, hooks=journal.wrap(Dedup()))
    return asyncio.run(journal.resume(agent, "r")), journal, model


def test_every_model_response_and_tool_execution_is_recorded_before_and_after(journal_at: str) -> None:
    journal = Journal(journal_at, meta={"tools_file": "bank.py"})
    model = CountingModel(call("transfer", to="ann"), "done")
    result = Agent(model=model, tools=TOOLS, hooks=journal.wrap()).run("pay ann", run_id="r")
    entries = journal.store.entries("r")
    assert [e.kind for e in entries] == ["start", "model", "tool_start", "tool_end", "model", "finish"]
    assert entries[0].data["meta"] == {"tools_file": "bank.py"}
    assert entries[2].key == entries[3].key == 'transfer:{"to":"ann"}'
    full = entries[3].data["result"]["content"]
    assert full == "sent to ann. " + "receipt " * 50  # the journal keeps all of it ...
    seen = result.messages[2].tool_results[0].text  # ... the model sees the cut
    assert seen == full[:300] + f"\n[... output truncated: {len(full) - 300} more characters not shown]"
    assert journal.store.runs() == [
        RunSummary(
            run_id="r",
            started_at=entries[0].at,
            updated_at=entries[-1].at,
            status="completed",
            steps=2,
            model="counting",
            prompt="pay ann",
            size=sum(len(orjson.dumps(e.data)) for e in entries),
        )
    ]


def test_resume_replays_recorded_responses_and_results_without_repeating_them(journal_at: str) -> None:
    result, journal, model = crash_then_resume(journal_at, "finish")
    assert result.ok and result.output == "done"
    assert ran == ["ann"] and model.asked == 2  # nothing was asked or run again
    assert [e.kind for e in journal.store.entries("r")][-2:] == ["resume", "finish"]


def test_a_call_recorded_as_finished_is_not_run_again_even_if_the_model_step_after_it_was_lost(journal_at: str) -> None:
    turns = (call("transfer", to="ann"), call("transfer", to="ann"), "done")
    result, _, model = crash_then_resume(journal_at, "model", None, *turns)  # dies writing step 2's response
    assert result.ok and ran == ["ann"]  # step 2 asked the model again; Dedup knew the replayed transfer
    assert result.messages[4].tool_results[0].text.startswith("[duplicate")


def test_unfinished_side_effecting_call_is_asked_about_and_rerun_when_approved(journal_at: str) -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    ran.append("(it may or may not have run before the crash)")
    result, _, _ = crash_then_resume(journal_at, "tool_end", approver)
    assert result.ok and [r.tool for r in asked] == ["transfer"] and "no recorded end" in asked[0].reason
    assert ran.count("ann") == 2  # approved: run again


def test_unfinished_call_declined_is_reported_as_possibly_done_and_dedups_later_calls(journal_at: str) -> None:
    def approver(request: ApprovalRequest) -> Decision:
        return Decision(approved=False, note="the bank shows it")

    turns = (call("transfer", to="ann"), call("transfer", to="ann"), "done")
    result, _, _ = crash_then_resume(journal_at, "tool_end", approver, *turns)
    first, again = result.messages[2].tool_results[0], result.messages[4].tool_results[0]
    assert ran == ["ann"] and result.ok
    assert "was not run again" in first.text and "the bank shows it" in first.text and not first.is_error
    assert again.text.startswith("[duplicate")


def test_unfinished_call_without_an_approver_pauses_the_run_until_decided(journal_at: str) -> None:
    result, journal, model = crash_then_resume(journal_at, "tool_end")
    assert result.stop_reason == "paused" and ran == ["ann"]
    finish = journal.store.entries("r")[-1]
    assert finish.kind == "finish" and [p["tool"] for p in finish.data["pending"]] == ["transfer"]
    call_id = finish.data["pending"][0]["call_id"]
    agent = Agent(model=model, tools=TOOLS, hooks=journal.wrap(Dedup()))
    result = asyncio.run(journal.resume(agent, "r", decisions={call_id: True}))
    assert result.ok and ran == ["ann", "ann"]


def test_unfinished_idempotent_call_runs_again_without_asking(journal_at: str) -> None:
    def approver(request: ApprovalRequest) -> bool:
        raise AssertionError("an idempotent call needs no question")

    result, _, _ = crash_then_resume(journal_at, "tool_end", approver, call("put", key="k"), "done")
    assert result.ok and ran == ["put k", "put k"]


def test_paused_approval_is_recorded_and_resumed_from_the_journal(journal_at: str) -> None:
    journal = Journal(journal_at)
    model = CountingModel([call("put", key="a"), call("transfer", to="bob")], "done")
    agent = Agent(model=model, tools=TOOLS, hooks=journal.wrap(Dedup(), Approval()))
    assert agent.run("q", run_id="r").stop_reason == "paused" and ran == ["put a"]
    pending = journal.store.entries("r")[-1].data["pending"]
    decided = Agent(model=model, tools=TOOLS, hooks=journal.wrap(Dedup(), Approval()))
    result = asyncio.run(journal.resume(decided, "r", {pending[0]["call_id"]: Decision(approved=True)}))
    assert result.ok and ran == ["put a", "bob"] and model.asked == 2


def test_the_journal_is_append_only(journal_at: str) -> None:
    store = open_store(journal_at)
    store.append("r", "start", {"messages": []})
    store.close()
    assert "append-only" in refused_change(journal_at, "UPDATE entries SET kind = 'x'")
    assert "append-only" in refused_change(journal_at, "DELETE FROM entries")
    if journal_at.endswith(".sqlite"):
        db = sqlite3.connect(journal_at)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        db.close()
    else:
        assert "append-only" in refused_change(journal_at, "TRUNCATE entries")


def test_another_store_plugs_in_through_the_interface(tmp_path: Path) -> None:
    class MemoryStore:
        def __init__(self) -> None:
            self.rows: list[Entry] = []

        def append(self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "") -> None:
            self.rows.append(Entry(seq=len(self.rows), run_id=run_id, at=0, kind=kind, step=step, key=key, data=data))

        def entries(self, run_id: str) -> list[Entry]:
            return [e for e in self.rows if e.run_id == run_id]

        def runs(self, limit: int = 50) -> list[RunSummary]:
            return []

        def close(self) -> None:
            pass

    journal = Journal(MemoryStore())
    model = CountingModel(call("transfer", to="ann"), "done")
    agent = Agent(model=model, tools=TOOLS, hooks=journal.wrap())
    agent.run("q", run_id="m")
    assert asyncio.run(journal.resume(agent, "m")).ok and ran == ["ann"] and model.asked == 2


def test_bad_input_gives_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    journal = Journal(tmp_path / "runs.sqlite")
    agent = Agent(model=CountingModel("x"), tools=TOOLS, hooks=journal.wrap())
    with pytest.raises(ConfigError, match="no run 'nope' in the journal"):
        asyncio.run(journal.resume(agent, "nope"))
    with pytest.raises(ConfigError, match="does not carry this journal's hooks"):
        asyncio.run(journal.resume(Agent(model=CountingModel("x"), tools=TOOLS), "nope"))
    (tmp_path / "dir.sqlite").mkdir()
    with pytest.raises(ConfigError, match="cannot open the run journal"):
        Journal(tmp_path / "dir.sqlite")
    monkeypatch.setenv("TOOLSLIP_HOME", str(tmp_path / "home"))
    assert default_journal_path() == tmp_path / "home" / "runs.sqlite"
