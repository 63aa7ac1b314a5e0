"""The run lease: one executor per run, a named refusal for any other, takeover only when it expired.

Real SQLite and a real PostgreSQL server (``journal_at``); the cross-process race with SIGKILL is in
test_cli_resume.py, many machines at once in test_fleet.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from _journals import insert_lease, lease_row
from toolslip import Agent, Toolbox, tool
from toolslip.dedup import Dedup
from toolslip.durable.journal_pg import PostgresStore
from toolslip.durable.journal_store import SqliteStore
from toolslip.durable.stores import LeasedStore, open_store
from toolslip.errors import ProviderError, RunBusy
from toolslip.journal import Journal
from toolslip.lease import _NODE
from toolslip.messages import Request
from toolslip.testing import FunctionModel, Turn, call

ran: list[str] = []
during: list[Callable[[], Any]] = []  # what a test does while `pay` runs


@tool(effects="side_effect")
async def pay(to: str) -> str:
    """Pay someone."""
    for action in during:
        result = action()
        if asyncio.iscoroutine(result):
            await result
    ran.append(to)
    return f"paid {to}"


def setup_function() -> None:
    ran.clear()
    during.clear()


def scripted(*turns: Turn) -> FunctionModel:
    return FunctionModel(lambda request: turns[sum(m.role == "assistant" for m in request.messages)])


def agent(journal: Journal, *turns: Turn) -> Agent:
    return Agent(model=scripted(*turns), tools=Toolbox([pay]), hooks=journal.wrap(Dedup()))


def test_a_second_journal_refuses_a_run_while_the_first_executes_it(journal_at: str) -> None:
    path = journal_at
    first = Journal(path)
    second = Journal(path)
    refusals: list[str] = []

    async def resume_from_elsewhere() -> None:
        with pytest.raises(RunBusy) as refused:
            await second.resume(agent(second, "never asked"), "r")
        refusals.append(str(refused.value))
        assert [s.status for s in second.store.runs()] == ["running"]

    during.append(resume_from_elsewhere)
    result = agent(first, call("pay", to="ann"), "done").run("pay ann", run_id="r")
    assert result.ok and ran == ["ann"]
    assert refusals == [
        f"run r is being executed by another process (pid {os.getpid()} on {os.uname().nodename}, lease renewed 0 s "
        "ago); wait for it to finish or stop that process, then resume it"
    ]
    kinds = [e.kind for e in first.store.entries("r")]
    assert kinds == ["start", "model", "tool_start", "tool_end", "model", "finish"]  # the refused one wrote nothing
    assert lease_row(path, "r") is None  # released at the finish
    assert [s.status for s in first.store.runs()] == ["completed"]


def test_the_same_run_twice_at_once_in_one_process_is_refused(journal_at: str) -> None:
    journal = Journal(journal_at)
    turns = (call("pay", to="ann"), "done")
    during.append(lambda: asyncio.sleep(0.05))  # the first run is still in its call when the second starts

    async def both() -> list[Any]:
        return await asyncio.gather(
            agent(journal, *turns).arun("q", run_id="r"),
            agent(journal, *turns).arun("q", run_id="r"),
            return_exceptions=True,
        )

    outcomes = asyncio.run(both())
    assert sum(isinstance(o, RunBusy) for o in outcomes) == 1 and ran == ["ann"]
    assert "already being executed in this process" in str(next(o for o in outcomes if isinstance(o, RunBusy)))


def store_with_ttl(location: str, ttl: float) -> LeasedStore:
    if location.endswith(".sqlite"):
        return SqliteStore(location, ttl=ttl)
    return PostgresStore(location, ttl=ttl)


def start_a_run(path: str) -> None:
    """A run that started and then its process died: a start entry and a lease row, nothing else."""
    journal = Journal(path)
    with pytest.raises(ProviderError):
        Agent(model=FunctionModel(_fail), tools=Toolbox([pay]), hooks=journal.wrap()).run("q", run_id="r")
    journal.store.close()


def _fail(request: Request) -> Turn:
    raise ProviderError("the service is down")


def test_another_machines_lease_binds_until_it_has_not_been_renewed_for_its_ttl(journal_at: str) -> None:
    path = journal_at
    start_a_run(path)
    insert_lease(path, "r", host="build-7", node="other-boot/pid:[1]", renewed_at=time.time() - 20)
    journal = Journal(path)
    with pytest.raises(RunBusy, match=r"\(pid 1 on build-7, lease renewed 20 s ago\)"):
        asyncio.run(journal.resume(agent(journal, "done"), "r"))
    assert [e.kind for e in journal.store.entries("r")][-1] == "abort"  # nothing written by the refused resume
    insert_lease(path, "r", host="build-7", node="other-boot/pid:[1]", renewed_at=time.time() - 31)
    assert asyncio.run(journal.resume(agent(journal, "done"), "r")).ok  # expired: taken over


def test_a_dead_process_on_this_machine_loses_its_lease_at_once(journal_at: str) -> None:
    path = journal_at
    start_a_run(path)
    store = open_store(path)
    assert store.leases.holders() == {}  # the failed run released its lease
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    insert_lease(path, "r", pid=int(gone.stdout), host=os.uname().nodename, node=_NODE, started="123")
    assert not store.leases.holders()["r"].alive()
    insert_lease(path, "r", pid=os.getpid(), host=os.uname().nodename, node=_NODE, started="1")  # a reused pid
    assert not store.leases.holders()["r"].alive()
    journal = Journal(store)
    assert asyncio.run(journal.resume(agent(journal, "done"), "r")).ok


def test_a_process_whose_lease_was_taken_over_stops_before_its_next_tool_call(journal_at: str) -> None:
    path = journal_at
    journal = Journal(store_with_ttl(path, 0.2))

    def taken_over_while_stopped() -> None:
        if not ran:
            time.sleep(0.15)  # longer than half the ttl: the next tool start renews, and finds it gone
            insert_lease(path, "r", owner="the other process", host="build-7", node="x")

    during.append(taken_over_while_stopped)
    with pytest.raises(RunBusy, match="^run r was taken over by pid 1 on build-7, lease renewed 0 s ago"):
        agent(journal, call("pay", to="ann"), call("pay", to="bob"), "done").run("q", run_id="r")
    assert ran == ["ann"]  # bob's payment never started
    # Nothing more was written into the new holder's run, not even ann's result: to it, ann's call was cut off.
    assert [e.kind for e in journal.store.entries("r")] == ["start", "model", "tool_start"]


def test_the_heartbeat_renews_the_lease_while_a_long_call_runs(journal_at: str) -> None:
    path = journal_at
    journal = Journal(store_with_ttl(path, 0.3))
    renewals: list[float] = []

    def watch() -> None:
        for _ in range(3):
            holder = lease_row(path, "r")
            assert holder is not None
            renewals.append(holder.renewed_at)
            time.sleep(0.25)

    during.append(watch)
    assert agent(journal, call("pay", to="ann"), "done").run("q", run_id="r").ok
    assert renewals == sorted(renewals) and len(set(renewals)) == 3, renewals


def test_runs_lists_failed_and_interrupted_runs_with_what_happened(journal_at: str) -> None:
    path = journal_at
    start_a_run(path)
    journal = Journal(path)

    async def cancelled() -> None:
        task = asyncio.ensure_future(agent(journal, call("pay", to="ann"), "done").arun("q", run_id="c"))
        during.append(lambda: (task.cancel(), asyncio.sleep(0))[1])
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled())
    by_id = {s.run_id: s for s in journal.store.runs()}
    assert (by_id["r"].status, by_id["r"].message) == ("failed", "ProviderError: the service is down")
    assert by_id["c"].status == "interrupted" and "Ctrl-C" in by_id["c"].message
    assert lease_row(path, "c") is None
