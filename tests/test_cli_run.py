"""`toolslip run` as a user meets it: a real subprocess, real files, exit codes and one-sentence errors."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "I spent 320 USD and 15000 JPY. Total in CNY, and per person for 4?"


def toolslip(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TOOLSLIP_MODEL"}
    env["TOOLSLIP_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "toolslip.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def test_expenses_prints_each_step_the_answer_and_the_stop(tmp_path: Path) -> None:
    done = toolslip("run", "examples/expenses.py", QUESTION, "--model", "scripted:expenses", home=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "SCRIPTED" in lines[0]  # a scripted model must never pass for a real one
    assert "[step 1] fx(amount=320, currency='USD') → 320 USD = 2297.6 CNY" in lines
    assert "[step 4] calc(expr='3002.6 / 4') → 750.65" in lines
    assert "3002.6" in done.stdout and "750.65" in done.stdout
    assert lines[-1].startswith("[stop: completed after 5 model calls, 4 tool calls; run ")


def test_json_prints_a_transcript_that_reads_back(tmp_path: Path) -> None:
    from toolslip.messages import message_from_dict

    done = toolslip("run", "examples/expenses.py", QUESTION, "--model", "scripted:expenses", "--json", home=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    messages = [message_from_dict(m) for m in data["messages"]]
    assert [m.role for m in messages] == ["user", *["assistant", "tool"] * 4, "assistant"]
    assert data["stop_reason"] == "completed" and "750.65" in data["output"]


def test_step_limit_has_its_own_exit_code(tmp_path: Path) -> None:
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", "scripted:expenses", "--max-steps", "2", home=tmp_path
    )
    assert done.returncode == 3
    assert "[stop: max_steps after 2 model calls" in done.stdout


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["examples/missing.py", "q"], 1, "tools file 'examples/missing.py' does not exist"),
        (["README.md", "q"], 1, "is not a Python file"),
        (["examples/weather.py", "q", "--model", "nonsense:x"], 2, "unknown model provider 'nonsense'"),
        (["examples/weather.py", "q", "--model", "openai:gpt-4o-mini"], 1, "OPENAI_API_KEY is not set"),
        (["q"], 2, "no tools: give a tools file before the question"),
        (["examples/weather.py", "q", "--max-steps", "0"], 2, "argument --max-steps: must be at least 1, got 0"),
    ],
)
def test_bad_input_gets_one_sentence_and_no_traceback(tmp_path: Path, args: list[str], code: int, message: str) -> None:
    done = toolslip("run", *args, home=tmp_path)
    assert done.returncode == code  # 2: the command line is wrong; 1: something it names is
    assert message in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_broken_tools_file_names_its_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(
        "from toolslip import tool\n\n\n@tool\ndef f(x: int) -> int:\n    return 1 / 0\n\nraise RuntimeError('oops')\n"
    )
    done = toolslip("run", str(broken), "q", "--model", "scripted", home=tmp_path)
    assert done.returncode == 1
    assert "line 8" in done.stderr and "RuntimeError: oops" in done.stderr and "Traceback" not in done.stderr
