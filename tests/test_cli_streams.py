"""The CLI's contract beyond its usage errors: a reader that leaves (``| head``), a model string from the
environment, and tools files that import the module beside them, in every command. Real subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolslip.journal import SqliteStore

ROOT = Path(__file__).resolve().parents[1]
TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TOOLSLIP_MODEL"}
WEATHER = str(ROOT / "examples" / "weather.py")


def shell(script: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in bash, with ``$T`` the toolslip command; ``toolslip 2>err | head -c 0`` closes the pipe
    before the command writes anything, so every write after the first meets a reader that has gone."""
    environment = {**ENV, "TOOLSLIP_HOME": str(home), "T": TOOLSLIP, **env}
    return subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, env=environment, cwd=home, timeout=120
    )


@pytest.mark.parametrize(
    "command",
    [
        "runs",
        "show RUN",
        f"lint {WEATHER}",
        f"tools {WEATHER}",
        "injection bank balance",
        f"run {WEATHER} 'Weather in Beijing?' --model scripted:weather",
    ],
)
def test_a_reader_that_leaves_ends_nothing_badly(tmp_path: Path, command: str) -> None:
    first = shell(f"$T run {WEATHER} 'Weather in Beijing?' --model scripted:weather", tmp_path)
    assert first.returncode == 0, first.stderr
    run_id = first.stdout.rsplit("run ", 1)[1].split("]")[0]
    done = shell(f'$T {command.replace("RUN", run_id)} 2>err | head -c 0; echo "${{PIPESTATUS[0]}}"', tmp_path)
    err = (tmp_path / "err").read_text()
    assert not err, err  # quietly: no "Broken pipe", no traceback, no "interrupted"
    assert done.stdout.strip() == "141", (done.stdout, err)  # 128 + SIGPIPE, as a pipe's end stops a program
    if command.startswith("run "):  # the run stopped at once (if it had begun), and its journal says so
        store = SqliteStore(tmp_path / "runs.sqlite", read_only=True)
        assert [r.status for r in store.runs(5)].count("running") == 0
        store.close()


@pytest.mark.slow
def test_a_run_stops_as_soon_as_its_reader_leaves(tmp_path: Path) -> None:
    """Issue 36: ``toolslip run ... | head -2`` decoded on for 78 s after head had exited (192 s here, loaded)."""
    # Many short lines, so head's two come early. (With tools offered, a figure no one gave holds the rest of
    # the answer back for the figure check, providers/local_figures.py; a list's first lines stream.)
    story = "Do not use any tool. List the names of sixty animals, one name per line."
    script = (
        f"( $T run {WEATHER} '{story}' --model local:qwen2.5-coder-0.5b 2>err; echo $? > code; date +%s.%N > ended )"
        " | (head -2 > /dev/null; date +%s.%N > left)"
    )
    shell(script, tmp_path)
    gap = float((tmp_path / "ended").read_text()) - float((tmp_path / "left").read_text())
    assert (tmp_path / "code").read_text().strip() == "141" and not (tmp_path / "err").read_text()
    assert gap < 10, gap  # 0.7 s measured; the next token's write finds the pipe closed
    store = SqliteStore(tmp_path / "runs.sqlite", read_only=True)
    assert store.runs(1)[0].status == "interrupted"  # resumable, like a Ctrl-C'd run
    store.close()


def test_a_bad_model_from_the_environment_is_bad_usage_and_says_where_it_came_from(tmp_path: Path) -> None:
    done = shell(f"$T run {WEATHER} 'Weather?'", tmp_path, TOOLSLIP_MODEL="scripted:weathr")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "toolslip run: TOOLSLIP_MODEL='scripted:weathr' (from the environment): there is no scripted demo "
        "'weathr' (did you mean weather?); choose one of: expenses, weather, smoke\n"
    )


NEIGHBOUR = '''
from toolslip import tool
from helpers import GREETING


@tool(effects="read_only")
def greet(name: str) -> str:
    """Greet someone."""
    return f"{GREETING}, {name}"
'''


def test_a_tools_file_imports_the_module_beside_it_in_every_command(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "helpers.py").write_text('GREETING = "hello"\n')
    (folder / "tools.py").write_text(NEIGHBOUR)
    tools = str(folder / "tools.py")
    for command in (
        f"$T tools {tools}",
        f"$T lint {tools}",
        f"$T run {tools} 'Greet Ann' --model scripted --no-journal",
        f"$T mcp-serve {tools} </dev/null",
    ):
        done = shell(command, tmp_path)  # run from another folder: only the file's own folder has helpers.py
        assert "ModuleNotFoundError" not in done.stderr and "No module named" not in done.stderr, (command, done)
        assert done.returncode in (0, 1) and "Traceback" not in done.stderr, (command, done)
    listed = shell(f"$T tools {tools}", tmp_path)
    assert listed.returncode == 0 and "greet" in listed.stdout


PARALLEL = """[
  {"role": "user", "content": "Weather in Paris and Rome?"},
  {"role": "assistant", "content": null, "tool_calls": [
    {"id": "a", "type": "function", "function": {"name": "weather", "arguments": "{\\"city\\": \\"Paris\\"}"}},
    {"id": "b", "type": "function", "function": {"name": "weather", "arguments": "{\\"city\\": \\"Rome\\"}"}}]},
  {"role": "tool", "tool_call_id": "a", "content": "sunny"},
  {"role": "tool", "tool_call_id": "b", "content": "rain"}]"""


def test_cli_errors_name_the_option_not_a_python_argument(tmp_path: Path) -> None:
    (tmp_path / "parallel.json").write_text(PARALLEL)
    done = shell("$T convert parallel.json --from openai-chat --to openai-functions --what messages", tmp_path)
    assert done.returncode == 1 and "--split-calls" in done.stderr and "split=True" not in done.stderr, done.stderr


def test_a_chat_stops_as_soon_as_its_reader_leaves(tmp_path: Path) -> None:
    """``toolslip chat TOOLS.py | head -1`` with an open stdin: the first answer written after head left
    found the pipe closed, and chat took it for a Ctrl-C'd turn and went on reading questions for no one."""
    chat = subprocess.Popen(
        [TOOLSLIP, "chat", str(ROOT / "examples" / "expenses.py"), "--model", "scripted:expenses"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**ENV, "TOOLSLIP_HOME": str(tmp_path)},
        cwd=tmp_path,
    )
    assert chat.stdin is not None and chat.stdout is not None and chat.stderr is not None
    try:
        said = b""
        while not said.endswith(b"> "):  # the banner and the prompt: chat waits for a question
            said += chat.stdout.read1(1024)
        assert said.startswith(b"model: scripted")
        chat.stdout.close()  # head -1 has its line and leaves
        chat.stdin.write(b"I spent 320 USD. In CNY?\n")
        chat.stdin.flush()  # and stdin stays open, as a terminal's does
        code = chat.wait(timeout=20)
        assert code == 141, code  # 128 + SIGPIPE, as run | head ends
        assert chat.stderr.read() == b""  # quietly
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        chat.stdin.close()
        chat.stderr.close()
