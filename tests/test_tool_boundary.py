"""What a tool does at its edge is contained there: odd strings, ``sys.exit``, output that cannot be written
down, prints under ``--json``, a closed stdin, and a Ctrl-C as the command ends.

Every case runs the real ``toolslip`` command in a subprocess on a tools file written here, with the
tool in a worker thread and in a child process (``isolate="process"``), and with the real SQLite journal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from toolslip.journal import SqliteStore

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))

TOOLS = '''
import os, sys
from pathlib import Path
from toolslip import tool
from toolslip.testing import FunctionModel, call

HERE = Path(__file__).parent
ODD = os.fsdecode(b"caf\\xe9.txt")  # a file name that is not UTF-8, as os.listdir gives it


def _ledger(line):
    with (HERE / "ledger").open("a") as f:
        f.write(line + "\\n")


@tool(effects="read_only")
def listing() -> str:
    """List the folder."""
    return "files: " + ODD


@tool(effects="read_only", isolate="process")
def listing_apart() -> dict:
    """List the folder, in a child process."""
    return {"files": [ODD]}


@tool(effects="side_effect")
def leave() -> str:
    """Exit."""
    _ledger("leave")
    sys.exit(5)


@tool(effects="side_effect", isolate="process")
def leave_apart() -> str:
    """Exit, in a child process."""
    _ledger("leave_apart")
    sys.exit(5)


@tool(effects="side_effect")
def deep(depth: int) -> dict:
    """Make something, and return a very deep receipt."""
    _ledger(f"deep {depth}")
    receipt = {}
    for _ in range(depth):
        receipt = {"inner": receipt}
    return receipt


@tool(effects="read_only")
def chatty() -> str:
    """Print, then answer."""
    print("noise from a thread")
    return "quiet answer"


@tool(effects="read_only", isolate="process")
def chatty_apart() -> str:
    """Print in a child process, then answer."""
    print("noise from a child")
    return "quiet answer"


@tool(effects="side_effect", isolate="process")
def pay(to: str) -> str:
    """Pay someone."""
    _ledger(f"pay {to}")
    return f"paid {to}"


def _script(*turns):
    # As a real API does, a request with tool_choice "none" (the repeat guard's forced answer, sent without
    # the turns of repeated calls) gets the text answer, the script's last turn.
    def turn(request):
        if request.settings.tool_choice == "none":
            return turns[-1]
        return turns[sum(m.role == "assistant" for m in request.messages)]

    return FunctionModel(turn)


ODD_NAMES = _script([call("listing"), call("listing_apart")], call("pay", to="ann"), "done")
EXITS = _script([call("leave"), call("leave_apart")], "still here")
DEEP = _script(call("deep", depth=100_000), call("deep", depth=100_000), "made")
CHATTY = _script([call("chatty"), call("chatty_apart")], "done")
PAY = _script(call("pay", to="bob"), "paid")
'''


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    return tmp_path


def toolslip(folder: Path, *args: str, stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLSLIP_HOME": str(folder / "home")}
    return subprocess.run(
        [TOOLSLIP, *args], stdin=stdin, capture_output=True, text=True, env=env, cwd=folder, timeout=120
    )


def run(folder: Path, model: str, *options: str) -> subprocess.CompletedProcess[str]:
    return toolslip(folder, "run", "tools.py", "go", "--model", f"tools.py:{model}", *options)


def ledger(folder: Path) -> list[str]:
    file = folder / "ledger"
    return file.read_text().splitlines() if file.exists() else []


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr and "Exception" not in done.stderr, done.stderr


def test_a_lone_surrogate_in_output_is_kept_as_its_escape_in_both_isolations_and_on_resume(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = run(folder, "ODD_NAMES")  # no terminal: the payment pauses the run, after both listings
    no_traceback(done)
    assert done.returncode == 4 and "is paused" in done.stderr
    assert done.stdout.count("caf\\udce9.txt") == 2  # thread and process, each written as its escape
    run_id = done.stdout.rsplit("run ", 1)[1].split("]")[0]
    shown = toolslip(folder, "show", run_id)
    no_traceback(shown)
    assert shown.returncode == 0 and shown.stdout.count("caf\\udce9.txt") == 2
    resumed = toolslip(folder, "resume", run_id, "--approve", "yes")
    no_traceback(resumed)
    assert resumed.returncode == 0 and resumed.stdout.rstrip().endswith(f"; run {run_id}]")
    assert ledger(folder) == ["pay ann"]


def test_sys_exit_in_a_tool_is_an_error_result_and_the_run_goes_on(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = run(folder, "EXITS", "--approve", "yes", "--json")
    assert done.returncode == 0, done.stderr
    transcript = json.loads(done.stdout)
    results = [p for m in transcript["messages"] for p in m["parts"] if p["kind"] == "tool_result"]
    assert [(r["is_error"], r["content"]) for r in results] == [
        (True, "leave called sys.exit(5) instead of returning; nothing it returned was kept"),
        (True, "leave_apart called sys.exit(5) instead of returning; nothing it returned was kept"),
    ]
    assert transcript["output"] == "still here" and sorted(ledger(folder)) == ["leave", "leave_apart"]


def test_output_that_cannot_be_written_down_is_recorded_as_ran_and_dedup_answers_the_repeat(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = run(folder, "DEEP", "--approve", "yes")
    no_traceback(done)
    assert done.returncode == 0 and ledger(folder) == ["deep 100000"]  # the repeat did not make a second one
    store = SqliteStore(folder / "home" / "runs.sqlite")
    ends = [e.data for e in store.entries(store.runs(1)[0].run_id) if e.kind == "tool_end"]
    store.close()
    first, repeat = ends
    assert first["executed"] and not first["result"]["is_error"] and first["result"]["outcome"] == "ran"
    assert first["result"]["content"].startswith("ran; output not recordable (RecursionError: ")
    assert repeat.get("duplicate_of") is True


def test_run_json_keeps_stdout_json_when_tools_print(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = run(folder, "CHATTY", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == "done"  # nothing else on stdout
    assert "noise from a thread" in done.stderr and "noise from a child" in done.stderr


@pytest.mark.parametrize("approve", [[], ["--approve", "ask"]])
def test_a_closed_stdin_is_no_terminal(tmp_path: Path, approve: list[str]) -> None:
    folder = _folder(tmp_path)
    command = [TOOLSLIP, "run", "tools.py", "go", "--model", "tools.py:PAY", *approve]
    env = {**os.environ, "TOOLSLIP_HOME": str(folder / "home")}
    done = subprocess.run(
        ["bash", "-c", 'exec "$@" <&-', "bash", *command], capture_output=True, text=True, env=env, cwd=folder
    )
    no_traceback(done)
    assert ledger(folder) == []
    if approve:  # asked, and nobody can answer: refused, in one line of the run's output
        assert done.returncode == 0 and "pay(to='bob') → ✗ " in done.stdout and ", 1 refused;" in done.stdout
    else:  # the policy without a terminal: pause, and say how to decide
        assert done.returncode == 4 and "is paused" in done.stderr


def test_ctrl_c_as_a_run_with_a_process_tool_ends_prints_no_traceback(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    env = {**os.environ, "TOOLSLIP_HOME": str(folder / "home")}
    seen = []
    for attempt in range(20):
        child = pexpect.spawn(
            TOOLSLIP,
            ["run", "tools.py", "go", "--model", "tools.py:PAY", "--approve", "yes", "--no-journal"],
            cwd=str(folder),
            env=env,
            encoding="utf-8",
            timeout=60,
        )
        child.expect(r"\[stop: ")
        time.sleep(attempt % 5 * 0.04)  # 0 to 160 ms after the run's last line
        child.sendintr()
        child.expect(pexpect.EOF)
        seen.append(child.before or "")
        child.close()
    assert not [s for s in seen if "Traceback" in s or "Exception ignored" in s], seen
