"""``toolslip resume`` as people and machines really use it: two at once, no terminal, a live run, Ctrl-C.

Real subprocesses of the installed ``toolslip`` command, a real journal (SQLite; the race and the
non-interactive decisions also on a real PostgreSQL server, named by ``$TOOLSLIP_JOURNAL``), and the
bank's ledger in a file outside the processes as the witness of every transfer. Kill points are inside the
transfer (just before or just after it reaches the ledger), where a crash hurts most.
"""

from __future__ import annotations

import collections
import os
import random
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from toolslip.cli import main
from toolslip.durable.stores import open_store

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))
SEED = int(os.environ.get("TOOLSLIP_KILL_SEED", "0")) or random.randrange(1 << 30)

BANK = '''
import os, signal, time
from pathlib import Path
from toolslip import tool
from toolslip.errors import ProviderError
from toolslip.testing import FunctionModel, call

HERE = Path(__file__).parent
KILL = os.environ.get("BANK_KILL", "")
transfers = 0


@tool(effects=["side_effect", "destructive"])
def transfer(reference: str) -> str:
    """Send money; the bank writes one ledger line per transfer."""
    global transfers
    transfers += 1
    if KILL == f"before:{transfers}":
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(float(os.environ.get("BANK_SLEEP", "0")))
    with (HERE / "ledger").open("a") as f:
        f.write(reference + "\\n")
    if KILL == f"after:{transfers}":
        os.kill(os.getpid(), signal.SIGKILL)
    return f"sent {reference}"


@tool(effects="side_effect")
def hold() -> str:
    """Wait until told to go on."""
    (HERE / "holding").write_text(str(os.getpid()))
    deadline = time.monotonic() + 60
    while not (HERE / "go").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return "went on"


TURNS = [call("transfer", reference=f"r{i}") for i in range(1, 7)] + ["all paid"]
MODEL = FunctionModel(lambda request: TURNS[sum(m.role == "assistant" for m in request.messages)])
HOLDING = FunctionModel(lambda request: [call("hold"), "done"][sum(m.role == "assistant" for m in request.messages)])


def _down(request):
    raise ProviderError("429 Too Many Requests: rate limited")


DOWN = FunctionModel(_down)
'''


def bank(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bank.py").write_text(BANK)
    return folder / "bank.py"


def toolslip(*args: str, home: Path, **env: str) -> subprocess.Popen[str]:
    environment = {**os.environ, "TOOLSLIP_HOME": str(home), **env}
    out = subprocess.PIPE
    return subprocess.Popen(
        [TOOLSLIP, *args], stdin=subprocess.DEVNULL, stdout=out, stderr=out, text=True, env=environment
    )


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def pay_all(folder: Path, *options: str, **env: str) -> tuple[int, str, str]:
    """``toolslip run`` of the six transfers, approving them, with the journal in ``folder``."""
    tools = folder / "bank.py"
    return finished(
        toolslip(
            "run", str(tools), "pay", "--model", f"{tools}:MODEL", "--approve", "yes", *options, home=folder, **env
        )
    )


def only_run(home: Path) -> str:
    store = open_store(os.environ.get("TOOLSLIP_JOURNAL") or str(home / "runs.sqlite"))
    try:
        (run,) = store.runs()
        return run.run_id
    finally:
        store.close()


def journal_facts(home: Path, run_id: str) -> tuple[str, set[str]]:
    """The run's status, and the references of transfers cut off and then not run again."""
    store = open_store(os.environ.get("TOOLSLIP_JOURNAL") or str(home / "runs.sqlite"))
    try:
        (run,) = store.runs()
        entries = store.entries(run_id)
    finally:
        store.close()
    arguments = {  # by step and call id: a model may number its calls afresh in every process
        (e.step, call["id"]): call["arguments"]["reference"]
        for e in entries
        if e.kind == "model"
        for call in (p for p in e.data["response"]["message"]["parts"] if p["kind"] == "tool_call")
    }
    skipped = {
        arguments[e.step, e.data["result"]["call_id"]]
        for e in entries
        if e.kind == "tool_end" and e.data.get("not_rerun")
    }
    return run.status, skipped


def ledger(folder: Path) -> list[str]:
    path = folder / "ledger"
    return path.read_text().split() if path.exists() else []


RESUME = ("--approve", "yes", "--rerun-interrupted", "no")


@pytest.mark.slow
def test_two_resumes_started_at_once_never_run_a_transfer_twice(
    tmp_path: Path, journal_in: Callable[[Path], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four trials with random kill points: the run dies inside a transfer, then two resumes race for it."""
    rng = random.Random(SEED)
    refused = 0
    for trial in range(4):
        where = f"seed {SEED}, trial {trial}"
        folder = tmp_path / f"t{trial}"
        bank(folder)
        monkeypatch.setenv("TOOLSLIP_JOURNAL", journal_in(folder))  # for the children, and only_run
        kill = f"{rng.choice(['before', 'after'])}:{rng.randint(1, 5)}"
        code, _, _ = pay_all(folder, BANK_KILL=kill)
        assert code == -signal.SIGKILL, where
        run_id = only_run(folder)
        victim = rng.choice(["", "", "before:1", "after:1"])  # sometimes one of the two dies as well
        first = toolslip("resume", run_id, *RESUME, home=folder, BANK_SLEEP="0.3", BANK_KILL=victim)
        second = toolslip("resume", run_id, *RESUME, home=folder, BANK_SLEEP="0.3")
        results = {first.pid: finished(first), second.pid: finished(second)}
        refusals = [(pid, err) for pid, (code, _, err) in results.items() if code == 1]
        for pid, err in refusals:  # one sentence that names the process that holds the run
            other = first.pid if pid == second.pid else second.pid
            assert err.startswith(
                f"toolslip resume: run {run_id} is being executed by another process (pid {other} on "
            ), where
            assert err.count("\n") == 1, where
        if not victim:
            done = sum("already completed" in out for code, out, _ in results.values())
            assert len(refusals) == 1 or done == 1, f"{where}: {results}"
        refused += len(refusals)
        for _ in range(3):  # finish whatever a killed resume left
            code, out, err = finished(toolslip("resume", run_id, *RESUME, home=folder))
            if code == 0:
                break
        status, skipped = journal_facts(folder, run_id)
        paid = ledger(folder)
        assert status == "completed", f"{where}: {out} {err}"
        assert max(collections.Counter(paid).values()) == 1, f"{where}: a transfer ran twice: {paid}"
        missing = {f"r{i}" for i in range(1, 7)} - set(paid)
        assert missing <= skipped, f"{where}: {missing} missing but not reported as cut off and not re-run"
    assert refused >= 2, f"seed {SEED}: the two resumes never met"  # at least two of the four trials raced


def test_approve_yes_does_not_rerun_an_interrupted_transfer_and_the_pause_says_how_to_decide(
    tmp_path: Path, journal_in: Callable[[Path], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bank(tmp_path)
    monkeypatch.setenv("TOOLSLIP_JOURNAL", journal_in(tmp_path))
    code, _, _ = pay_all(tmp_path, BANK_KILL="after:2")
    assert code == -signal.SIGKILL and ledger(tmp_path) == [
        "r1",
        "r2",
    ]  # r2 reached the bank, its end was never recorded
    run_id = only_run(tmp_path)

    code, out, err = finished(toolslip("resume", run_id, "--approve", "yes", home=tmp_path))  # no terminal: pause
    assert code == 4 and ledger(tmp_path) == ["r1", "r2"]
    assert "[step 2] transfer(reference='r2') → ✗ waiting for a decision whether to run it again" in out
    lines = err.splitlines()
    assert lines[0] == f"run {run_id} is paused: 1 call waits for a decision"
    assert (
        lines[1].startswith("  transfer(reference='r2')  (call ")
        and "started before the run was interrupted" in lines[1]
    )
    again, skip = lines[2].split(": ", 1)[1].strip(), lines[3].split(": ", 1)[1].strip()
    assert again.startswith(f"toolslip resume {run_id} --decide ") and again.endswith("=yes")
    assert skip == again.removesuffix("=yes") + "=no"

    code, out, err = finished(toolslip(*shlex.split(skip)[1:], "--approve", "yes", home=tmp_path))  # as printed
    assert code == 0, err
    assert ledger(tmp_path) == ["r1", "r2", "r3", "r4", "r5", "r6"]
    assert f"[stop: completed after 7 model calls, 6 tool calls, 1 not re-run; run {run_id}]" in out
    assert "not run again (it may or may not have happened): transfer(reference='r2')" in out
    code, out, _ = finished(toolslip("runs", home=tmp_path))
    assert f"{run_id} " in out and " completed " in out and "    1 not re-run" in out


def test_rerun_interrupted_yes_runs_it_again_and_says_so(tmp_path: Path) -> None:
    bank(tmp_path)
    pay_all(tmp_path, BANK_KILL="after:2")
    run_id = only_run(tmp_path)
    code, out, err = finished(
        toolslip("resume", run_id, "--approve", "yes", "--rerun-interrupted", "yes", home=tmp_path)
    )
    assert code == 0, err
    assert ledger(tmp_path) == ["r1", "r2", "r2", "r3", "r4", "r5", "r6"]  # asked for, and reported
    assert "[step 2] transfer(reference='r2') → sent r2 (re-run after the interruption)" in out
    assert "run again after the interruption: transfer(reference='r2')" in out and ", 1 re-run;" in out
    code, shown, _ = finished(toolslip("show", run_id, home=tmp_path))
    assert shown.count("(run again after the interruption)") == 1


def test_a_live_run_cannot_be_resumed_and_ctrl_c_leaves_it_interrupted(tmp_path: Path) -> None:
    tools = bank(tmp_path)
    run = toolslip("run", str(tools), "hold on", "--model", f"{tools}:HOLDING", "--approve", "yes", home=tmp_path)
    deadline = time.monotonic() + 30
    while not (tmp_path / "holding").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.02)
    run_id = only_run(tmp_path)
    code, out, err = finished(toolslip("resume", run_id, home=tmp_path))
    assert code == 1 and err.count("\n") == 1
    assert err.startswith(f"toolslip resume: run {run_id} is being executed by another process (pid {run.pid} on ")
    code, out, _ = finished(toolslip("runs", home=tmp_path))
    assert " running " in out and f"    pid {run.pid} on " in out
    run.send_signal(signal.SIGINT)
    code, _, err = finished(run)
    assert code == 130 and err == "toolslip run: interrupted\n"
    code, out, _ = finished(toolslip("runs", home=tmp_path))
    assert " interrupted " in out and "Ctrl-C" in out


def test_resume_prints_the_steps_and_its_stop_line_at_the_step_limit(tmp_path: Path) -> None:
    bank(tmp_path)
    code, out, _ = pay_all(tmp_path, "--max-steps", "3")
    assert code == 3 and ledger(tmp_path) == ["r1", "r2"]
    run_id = only_run(tmp_path)
    code, out, _ = finished(toolslip("resume", run_id, "--approve", "yes", "--max-steps", "5", home=tmp_path))
    assert code == 3 and ledger(tmp_path) == ["r1", "r2", "r3", "r4"]
    assert "[step 1] transfer(reference='r1') → sent r1 (replayed)" in out
    assert "[step 4] transfer(reference='r4') → sent r4\n" in out
    assert f"[stop: max_steps after 5 model calls, 4 tool calls; run {run_id}]" in out


def test_a_failed_model_call_is_listed_as_failed_with_its_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tools = bank(tmp_path)
    journal = str(tmp_path / "runs.sqlite")
    assert main(["run", str(tools), "pay", "--model", f"{tools}:DOWN", "--journal", journal]) == 1
    assert "429 Too Many Requests" in capsys.readouterr().err
    assert main(["runs", "--journal", journal]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert " failed " in listed[0] and listed[1] == "    ProviderError: 429 Too Many Requests: rate limited"


def test_ctrl_c_at_the_approval_prompt_ends_the_run_at_once(tmp_path: Path) -> None:
    import pexpect

    tools = bank(tmp_path)
    child = pexpect.spawn(
        TOOLSLIP,
        ["run", str(tools), "pay", "--model", f"{tools}:MODEL"],
        env={**os.environ, "TOOLSLIP_HOME": str(tmp_path)},
        encoding="utf-8",
        timeout=30,
    )
    child.expect(r"Run it\? \[y/N\]")  # the question waits in a thread for a line that will never come
    pressed = time.monotonic()
    child.sendintr()
    child.expect("toolslip run: interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert time.monotonic() - pressed < 2 and child.exitstatus == 130
    assert ledger(tmp_path) == []
