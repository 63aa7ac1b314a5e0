"""Faults the database brings to a PostgreSQL journal, each on a real server: nothing runs twice, one sentence.

A restart or a dropped connection between a tool's execution and its ``tool_end`` entry is ridden out
(the entry is written on a fresh connection, once); a server that stays away, a statement timeout and a
full disk stop the run with one :class:`JournalError` sentence, and ``resume`` goes on from what was
written, putting the call that was cut off to the rerun policy instead of running it again. A crash of
the server loses at most the newest entries that were committed without waiting for the disk, and
nothing runs twice because of it.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from conftest import fresh_postgres
from toolslip import Agent, Toolbox, tool
from toolslip.dedup import Dedup
from toolslip.durable.journal_pg import PostgresStore
from toolslip.errors import JournalError, RunBusy
from toolslip.journal import Journal
from toolslip.testing import FunctionModel, ScriptedModel, call
from toolslip.testing.postgres import PostgresServer

ran: list[str] = []
during: list[Callable[[], Any]] = []  # what the database does to us while `pay` runs


@tool(effects="side_effect")
def pay(to: str) -> str:
    """Pay someone; returns a receipt."""
    ran.append(to)
    for fault in during:
        fault()
    return f"paid {to}"


@tool(effects="read_only")
def balance(to: str) -> str:
    """Someone's balance."""
    ran.append(f"balance of {to}")
    return "12 EUR"


@tool(effects="side_effect")
def export(to: str) -> str:
    """Export a report that does not compress (9 MB)."""
    ran.append(to)
    return base64.b64encode(os.urandom(7_000_000)).decode()


@pytest.fixture(autouse=True)
def clean() -> Iterator[None]:
    ran.clear()
    during.clear()
    yield


def agent(journal: Journal) -> Agent:
    model = ScriptedModel([call("pay", to="ann"), call("pay", to="bob"), "done"])
    return Agent(model=model, tools=Toolbox([pay, export]), hooks=journal.wrap(Dedup()))


def kinds(journal: Journal, run_id: str) -> list[str]:
    return [e.kind for e in journal.store.entries(run_id)]


def resume_leaving_cut_off_calls(url: str, run_id: str, model: ScriptedModel) -> Any:
    """``toolslip resume --rerun-interrupted no`` from another process (its own host name), once the lease expired."""
    store = PostgresStore(url, ttl=0.5, host="resumer")
    journal = Journal(store, approver=lambda request: False)
    deadline = time.monotonic() + 10
    while True:
        try:
            agent = Agent(model=model, tools=Toolbox([pay, export]), hooks=journal.wrap(Dedup()))
            return asyncio.run(journal.resume(agent, run_id)), journal
        except Exception as exc:  # the dead writer's lease has not expired yet
            if "being executed by another process" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_a_server_restart_during_a_tool_call_is_ridden_out(postgres: PostgresServer) -> None:
    journal = Journal(fresh_postgres(postgres))
    during.append(lambda: postgres.restart() if len(ran) == 1 else None)
    result = agent(journal).run("pay", run_id="r")
    assert result.ok and ran == ["ann", "bob"]
    assert kinds(journal, "r") == ["start", "model", "tool_start", "tool_end"] * 1 + [
        "model",
        "tool_start",
        "tool_end",
        "model",
        "finish",
    ]
    journal.store.close()


def test_a_connection_dropped_between_the_tool_and_its_end_entry_is_written_again_once(
    postgres: PostgresServer,
) -> None:
    url = fresh_postgres(postgres)
    journal = Journal(url)

    def drop_every_journal_connection() -> None:
        with psycopg.connect(url, autocommit=True) as admin:
            dropped = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE application_name = '' AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
            ).fetchone()
        assert dropped is not None and dropped[0] >= 1

    during.append(drop_every_journal_connection)
    result = agent(journal).run("pay", run_id="r")
    assert result.ok and ran == ["ann", "bob"]
    entries = journal.store.entries("r")
    assert [e.kind for e in entries].count("tool_end") == 2  # each written once, though sent again
    journal.store.close()


def test_a_server_that_stays_away_stops_the_run_and_resume_does_not_repeat_the_call(postgres: PostgresServer) -> None:
    url = fresh_postgres(postgres)
    journal = Journal(PostgresStore(url, retry_for=0.5, ttl=0.5, host="writer"))
    during.append(lambda: postgres.stop() if len(ran) == 1 else None)
    with pytest.raises(JournalError) as stopped:
        agent(journal).run("pay", run_id="r")
    message = str(stopped.value)
    assert message.startswith("the run journal postgresql://postgres@/postgres?host=")
    assert re.search(
        r"failed while (writing its tool_end entry|renewing its lease) for run r: the database server could "
        r"not be reached for 0.5 s \(",
        message,
    ), message
    assert message.endswith("`toolslip resume r` continues it from what was written") and "\n" not in message
    postgres.start()
    model = ScriptedModel([call("pay", to="ann"), call("pay", to="bob"), "done"])
    result, resumed = resume_leaving_cut_off_calls(url, "r", model)
    assert result.ok and ran == ["ann", "bob"]  # ann's payment was cut off and not run again
    assert "was not run again" in result.messages[2].tool_results[0].text
    journal.store.close()
    resumed.store.close()


def test_a_statement_timeout_stops_the_run_with_one_sentence(postgres: PostgresServer) -> None:
    url = fresh_postgres(postgres)
    journal = Journal(PostgresStore(url, statement_timeout=0.3, retry_for=0.5, ttl=0.5, host="writer"))
    agent(journal)  # the schema exists before the lock below
    released = threading.Event()

    def lock_the_entries() -> None:
        admin = psycopg.connect(url)
        admin.execute("LOCK TABLE toolslip.entries IN ACCESS EXCLUSIVE MODE")
        threading.Thread(target=lambda: (released.wait(10), admin.rollback(), admin.close()), daemon=True).start()

    during.append(lambda: lock_the_entries() if len(ran) == 1 else None)
    with pytest.raises(JournalError, match="the database did not answer within its statement timeout"):
        agent(journal).run("pay", run_id="r")
    released.set()
    model = ScriptedModel([call("pay", to="ann"), call("pay", to="bob"), "done"])
    result, resumed = resume_leaving_cut_off_calls(url, "r", model)
    assert result.ok and ran == ["ann", "bob"]
    journal.store.close()
    resumed.store.close()


@pytest.mark.slow
def test_a_full_disk_stops_the_run_and_resume_goes_on_once_there_is_room() -> None:
    """The server runs under an 8 MB limit on the size of any file it writes (RLIMIT_FSIZE): the 9 MB
    output cannot be stored, as on a full disk; restarted without the limit, the journal goes on."""
    server = PostgresServer(file_size_limit=8_000_000).start()
    try:
        url = server.url()
        journal = Journal(PostgresStore(url, retry_for=0.5, ttl=0.5, host="writer"))
        model = ScriptedModel([call("pay", to="ann"), call("export", to="board"), "done"])
        full = Agent(model=model, tools=Toolbox([pay, export]), hooks=journal.wrap(Dedup()))
        with pytest.raises(JournalError) as stopped:
            full.run("report", run_id="r")
        message = str(stopped.value)
        assert (
            "failed while writing its tool_end entry for run r: the database server is out of disk space" in message
        ), message
        assert "\n" not in message and ran == ["ann", "board"]
        server.file_size_limit = None  # room again
        server.restart()
        model = ScriptedModel([call("pay", to="ann"), call("export", to="board"), "done"])
        result, resumed = resume_leaving_cut_off_calls(url, "r", model)
        assert result.ok and ran == ["ann", "board"]  # the export was cut off and is not run again
        journal.store.close()
        resumed.store.close()
    finally:
        server.remove()


def walwriter(url: str) -> int:
    """The pid of the server's WAL writer, which writes asynchronously committed entries to disk."""
    with psycopg.connect(url, autocommit=True) as admin:
        row = admin.execute("SELECT pid FROM pg_stat_activity WHERE backend_type = 'walwriter'").fetchone()
    assert row is not None
    return int(row[0])


def crashing_on_the_second_request(crash: Callable[[], None], first: str = "pay") -> FunctionModel:
    """Calls ``first`` for ann, then pays bob; the server crashes while it is asked the second time, after
    ann's tool_end."""
    script = [call(first, to="ann"), call("pay", to="bob"), "done"]

    def answer(request: Any) -> Any:
        turn = sum(m.role == "assistant" for m in request.messages)
        if turn == 1:
            crash()
        return script[turn]

    return FunctionModel(answer)


@pytest.fixture
def crashable() -> Iterator[tuple[PostgresServer, Callable[[], None]]]:
    """A server of its own whose WAL writer is stopped (SIGSTOP), so that an asynchronously committed entry
    stays in memory until a later durable commit writes it; and a crash: the WAL writer killed, which makes
    PostgreSQL end every session and recover from what is on disk, as after a power cut. The background
    writer writes no pages (which would write the WAL before them).

    The crash returns only once the postmaster has ended every session: it learns of the death
    asynchronously, and on a loaded machine a run could otherwise finish on its old session before the
    crash reaches it (2 runs in 30 under load), never reaching the re-write of lost entries."""
    server = PostgresServer(settings={"bgwriter_lru_maxpages": "0"}).start()
    writer = walwriter(server.url())
    os.kill(writer, signal.SIGSTOP)

    def crash() -> None:
        os.kill(writer, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while "all server processes terminated; reinitializing" not in server.log():
            assert time.monotonic() < deadline, f"the server did not restart after the crash:\n{server.log()}"
            time.sleep(0.01)

    try:
        yield server, crash
    finally:
        with contextlib.suppress(ProcessLookupError):  # not crashed: let it go on, so that it can be stopped
            os.kill(writer, signal.SIGCONT)
        server.remove()


def run_until_the_server_dies(
    crashable: tuple[PostgresServer, Callable[[], None]], tools: Toolbox, *, first: str
) -> list[str]:
    """Run r with a writer that gives up fast, crash the server at the second model request and keep it
    down until the run has failed; then start it again and return the kinds of the entries on disk."""
    server, crash = crashable
    journal = Journal(PostgresStore(server.url(), retry_for=0.2, ttl=0.5, host="writer"))

    def crash_and_stay_down() -> None:
        crash()
        server.stop("immediate")

    model = crashing_on_the_second_request(crash_and_stay_down, first=first)
    with pytest.raises(JournalError):
        Agent(model=model, tools=tools, hooks=journal.wrap(Dedup())).run("pay", run_id="r")
    journal.store.close()
    server.start()
    reader = PostgresStore(server.url())
    try:
        return [e.kind for e in reader.entries("r")]
    finally:
        reader.close()


def test_a_crash_loses_only_entries_written_after_the_fact_and_resume_repeats_nothing(
    crashable: tuple[PostgresServer, Callable[[], None]],
) -> None:
    """The writer dies with the server: ann's tool_end, committed without waiting for the disk, is gone;
    her payment is a cut-off call, which resume lists and does not run again."""
    url = crashable[0].url()
    on_disk = run_until_the_server_dies(crashable, Toolbox([pay, export]), first="pay")
    assert on_disk == ["start", "model", "tool_start"]  # ann's tool_end was lost
    model = ScriptedModel([call("pay", to="ann"), call("pay", to="bob"), "done"])
    result, resumed = resume_leaving_cut_off_calls(url, "r", model)
    assert result.ok and ran == ["ann", "bob"]  # ann's payment ran once, bob's once
    assert "was not run again" in result.messages[2].tool_results[0].text
    resumed.store.close()


def test_a_crash_under_a_live_run_writes_the_lost_entries_again_before_the_next_tool_runs(
    crashable: tuple[PostgresServer, Callable[[], None]],
) -> None:
    """The writer outlives the crash: its next durable entry (bob's tool_start) finds ann's tool_end missing
    and writes it again first, so the journal holds the whole run, each entry once."""
    server, crash = crashable
    journal = Journal(PostgresStore(server.url(), host="writer"))
    model = crashing_on_the_second_request(crash)
    result = Agent(model=model, tools=Toolbox([pay, export]), hooks=journal.wrap(Dedup())).run("pay", run_id="r")
    assert result.ok and ran == ["ann", "bob"]
    entries = journal.store.entries("r")
    assert [e.kind for e in entries] == ["start", "model", "tool_start", "tool_end"] + [
        "model",
        "tool_start",
        "tool_end",
        "model",
        "finish",
    ]
    assert [e.data["result"]["content"] for e in entries if e.kind == "tool_end"] == ["paid ann", "paid bob"]
    journal.store.close()


def test_the_start_of_a_read_only_call_does_not_wait_for_the_disk_and_resume_runs_it_again(
    crashable: tuple[PostgresServer, Callable[[], None]],
) -> None:
    """Only the start entry was durable when the server crashed: the read-only call left no trace, and
    resume runs it again without asking (running it twice changes nothing), then pays bob once."""
    url = crashable[0].url()
    tools = Toolbox([pay, balance])
    assert run_until_the_server_dies(crashable, tools, first="balance") == ["start"]
    resumer = Journal(PostgresStore(url, ttl=0.5, host="resumer"), approver=lambda request: False)
    model = ScriptedModel([call("balance", to="ann"), call("pay", to="bob"), "done"])
    deadline = time.monotonic() + 10
    while True:
        try:
            result = asyncio.run(resumer.resume(Agent(model=model, tools=tools, hooks=resumer.wrap()), "r"))
            break
        except RunBusy:  # the dead writer's lease has not expired yet
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert result.ok and ran == ["balance of ann", "balance of ann", "bob"]
    resumer.store.close()
