"""What an operator reads about a fleet's runs must be what the journal holds, and said in one sentence.

* ``runs`` and ``show`` count the cut-off calls left undone across every resume: a resume that declines a
  call and is itself killed used to lose it (the count came from the last ``finish`` entry only);
* a run whose first entry failed is said to be gone, not "resume continues it" followed by "no run";
* every journal URL or connection problem is one sentence naming its cause, within a couple of seconds
  (it was 10.5 s of "pool initialization incomplete", and a 28-line traceback for a malformed IPv6 URL).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import fresh_postgres
from toolslip.cli import main
from toolslip.durable.journal_store import SqliteStore
from toolslip.fleet import unreachable_journal
from toolslip.testing.postgres import PostgresServer

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import asyncio, os, signal, sys
from pathlib import Path
from toolslip import Agent, Toolbox, tool
from toolslip.durable.journal import Journal
from toolslip.testing import FunctionModel, call

folder = Path(sys.argv[1])
journal = Journal(folder / "runs.sqlite", approver=lambda request: False)  # never re-run a cut-off call


@tool(effects="side_effect")
def pay(what: str) -> str:
    \"\"\"Pay; the first time each payment is made, the process dies inside the tool.\"\"\"
    marker = folder / what
    if not marker.exists():
        marker.touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return f"paid {what}"


def script(request):
    return [call("pay", what="a"), call("pay", what="b"), "done"][sum(m.role == "assistant" for m in request.messages)]


agent = Agent(model=FunctionModel(script), tools=Toolbox([pay]), hooks=journal.wrap())
if sys.argv[2] == "run":
    agent.run("pay a and b", run_id="r")
else:
    print(asyncio.run(journal.resume(agent, "r")).stop_reason)
"""


def test_calls_left_undone_by_a_resume_that_was_itself_killed_still_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "pay.py"
    script.write_text(SCRIPT)
    steps = [
        subprocess.run([sys.executable, str(script), str(tmp_path), phase], capture_output=True, text=True)
        for phase in ("run", "resume", "resume")
    ]
    assert [s.returncode for s in steps] == [-9, -9, 0], [s.stderr[-500:] for s in steps]  # killed in a, in b
    assert steps[-1].stdout.strip() == "completed"
    journal = str(tmp_path / "runs.sqlite")
    assert main(["runs", "--journal", journal]) == 0
    assert "2 not re-run" in capsys.readouterr().out  # a's by the killed resume, b's by the last
    assert main(["show", "r", "--journal", journal]) == 0
    assert capsys.readouterr().out.count("(not run again: it may have happened)") == 2


def test_a_run_whose_first_entry_failed_is_said_to_be_gone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "runs.sqlite"
    store = SqliteStore(journal)
    error = "JournalError: the run journal failed while writing its start entry for run r: the disk is full"
    store.append("r", "abort", {"status": "failed", "error": error})  # what on_error leaves when start failed
    store.close()
    assert main(["resume", "r", "--journal", str(journal), "--rerun-interrupted", "no"]) == 1
    said = capsys.readouterr().err
    assert "run 'r' never started" in said and "run it again" in said and "no run" not in said, said


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("postgresql://u@[::1/db", "is malformed: end of string reached when looking for matching"),
        ("postgresql://postgres@127.0.0.1:1/db", "nothing listens there (connection refused"),
        ("postgresql://postgres@no-such-host.invalid/db", "its host name does not resolve (DNS"),
        ("postgresql://x:secret@host:port/db", "its port is not a number"),
        ("/no-such-db", 'database "no-such-db" does not exist'),
        ("/postgres?host=/nonexistent", "there is no server socket in that folder"),
    ],
)
def test_a_journal_url_problem_is_one_sentence_naming_its_cause_at_once(
    postgres: PostgresServer, url: str, cause: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if url.startswith("/"):  # on the test's server: a database or a socket folder that is not there
        url = (
            fresh_postgres(postgres).replace("/postgres?", url.split("?")[0] + "?")
            if "?" not in url
            else (f"postgresql://postgres@{url}")
        )
    started = time.monotonic()
    assert main(["runs", "--journal", url]) == 1
    took = time.monotonic() - started
    said = capsys.readouterr().err
    assert cause in said, said
    assert said.count("\n") == 1 and "secret" not in said and "Traceback" not in said, said
    assert took < 2.5, f"{took:.1f} s to say {said!r}"


def test_fleet_submit_names_what_is_wrong_before_starting_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tools.py").write_text("from toolslip import tool\n\n@tool\ndef noop() -> str:\n    return 'ok'\n")
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('"one"\n{"text": "two"}\n')
    argv = ["fleet", "submit", str(prompts), str(tmp_path / "tools.py"), "--model", "scripted"]
    assert main([*argv, "--journal", str(tmp_path / "runs.sqlite"), "--address", "ray://head:10001"]) == 2
    assert capsys.readouterr().err == (
        f"toolslip fleet: the journal {tmp_path / 'runs.sqlite'} is a SQLite file on this machine, and the Ray "
        "Client at ray://head:10001 runs the driver on the cluster's head: pass --journal postgresql://... that "
        "every node reaches (a SQLite file serves a Ray whose nodes are all on this machine)\n"
    )
    for journal in ("postgresql://u@[::1/db", str(tmp_path / "runs.sqlite")):  # a Ray on this machine takes SQLite
        assert main([*argv, "--journal", journal]) == 1
        said = capsys.readouterr().err
        assert said.endswith('p.jsonl:2 is neither a JSON string nor an object with a "prompt" string\n'), said


def test_a_sqlite_journal_serves_a_cluster_only_while_ray_says_every_node_is_on_this_machine() -> None:
    # the shape of ray.nodes(): several raylets on this machine, then one joined from another machine
    here = [{"NodeManagerAddress": "10.0.0.5", "Alive": True}, {"NodeManagerAddress": "10.0.0.5", "Alive": True}]
    gone = {"NodeManagerAddress": "10.0.0.9", "Alive": False}  # a dead node of another machine runs nothing
    assert unreachable_journal("/tmp/runs.sqlite", "auto", [*here, gone], "10.0.0.5") == ""
    assert unreachable_journal("/tmp/runs.sqlite", None, (), "") == ""  # before joining a local Ray: nothing known
    away = unreachable_journal("/tmp/runs.sqlite", "auto", [*here, {**gone, "Alive": True}], "10.0.0.5")
    assert "the cluster has nodes on other machines (10.0.0.9)" in away and "pass --journal postgresql://" in away
    assert "Ray Client" in unreachable_journal("/tmp/runs.sqlite", "ray://head:10001")
    assert unreachable_journal("postgresql://u@db/runs", "ray://head:10001", [{**gone, "Alive": True}], "x") == ""


@pytest.mark.slow
def test_fleet_submit_on_one_machine_needs_no_database_server(tmp_path: Path) -> None:
    # a newcomer's first batch: no --journal, no --address, no PostgreSQL: a local Ray over the usual SQLite journal
    prompts = tmp_path / "p.jsonl"
    prompts.write_text('"What is the weather in Beijing?"\n"What is the weather in Paris?"\n')
    env = {**os.environ, "TOOLSLIP_HOME": str(tmp_path / "home"), "TOOLSLIP_JOURNAL": ""}
    cli = [sys.executable, "-m", "toolslip.cli", "fleet"]
    submit = [*cli, "submit", str(prompts), str(ROOT / "examples" / "weather.py"), "--model", "scripted"]
    done = subprocess.run(submit, capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(o["run_id"] for o in outcomes) == ["p-00001", "p-00002"]
    assert {o["outcome"] for o in outcomes} == {"completed"}
    assert (tmp_path / "home" / "runs.sqlite").is_file()
    status = subprocess.run([*cli, "status", "p"], capture_output=True, text=True, env=env, timeout=60)
    assert status.stdout.startswith("batch p: 2 runs in the journal: 2 completed"), status.stdout + status.stderr


KEYED = """
import asyncio, os, signal, sqlite3, sys
from pathlib import Path
from toolslip import Agent, RunContext, Toolbox, tool
from toolslip.durable.journal import Journal
from toolslip.testing import FunctionModel, call

folder = Path(sys.argv[1])
journal = Journal(folder / "runs.sqlite", approver=lambda request: True)  # DO re-run a cut-off call
bank = sqlite3.connect(folder / "bank.sqlite", isolation_level=None, check_same_thread=False)
bank.execute("CREATE TABLE IF NOT EXISTS ledger (key TEXT PRIMARY KEY, what TEXT)")
bank.execute("CREATE TABLE IF NOT EXISTS executions (key TEXT)")


@tool(effects="side_effect")
def pay(ctx: RunContext, what: str) -> str:
    \"\"\"Pay; the bank honours the idempotency key. The first execution dies after the bank wrote it.\"\"\"
    bank.execute("INSERT INTO executions VALUES (?)", (ctx.idempotency_key,))
    bank.execute("INSERT OR IGNORE INTO ledger VALUES (?, ?)", (ctx.idempotency_key, what))
    if sys.argv[2] == "run":
        os.kill(os.getpid(), signal.SIGKILL)
    return f"paid {what}"


def script(request):
    return [call("pay", what="rent"), "done"][sum(m.role == "assistant" for m in request.messages)]


agent = Agent(model=FunctionModel(script), tools=Toolbox([pay]), hooks=journal.wrap())
if sys.argv[2] == "run":
    agent.run("pay the rent", run_id="r")
else:
    print(asyncio.run(journal.resume(agent, "r")).stop_reason)
"""


def test_a_rerun_policy_with_a_ledger_that_honours_the_key_pays_once(tmp_path: Path) -> None:
    script = tmp_path / "pay.py"
    script.write_text(KEYED)
    steps = [
        subprocess.run([sys.executable, str(script), str(tmp_path), phase], capture_output=True, text=True)
        for phase in ("run", "resume")
    ]
    assert [s.returncode for s in steps] == [-9, 0], [s.stderr[-500:] for s in steps]
    bank = sqlite3.connect(tmp_path / "bank.sqlite")
    executions = [key for (key,) in bank.execute("SELECT key FROM executions")]
    ledger = bank.execute("SELECT key, what FROM ledger").fetchall()
    bank.close()
    assert len(executions) == 2 and executions[0] == executions[1], executions  # run again, with the same key
    assert ledger == [(executions[0], "rent")]
