"""A subprocess tool's timeout kills its whole process group, grandchildren included."""

from __future__ import annotations

import time
from pathlib import Path

from toolslip import Agent, Toolbox, tool
from toolslip.process import run_process
from toolslip.testing import ScriptedModel, call


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has stopped running; it only waits to be reaped


def test_timeout_kills_the_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"

    @tool(effects="side_effect", timeout=0.5)
    async def build() -> str:
        """Run the build."""
        done = await run_process(["bash", "-c", f"sleep 30 & echo $! > {pidfile}; wait"])
        return done.output

    started = time.monotonic()
    result = Agent(model=ScriptedModel([call("build"), "gave up"]), tools=Toolbox([build])).run("build it")
    assert time.monotonic() - started < 10
    answer = result.messages[2].tool_results[0]
    assert answer.is_error and "timed out after 0.5 s" in answer.text
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not alive(grandchild), "the background sleep outlived the tool's timeout"


def test_output_and_exit_status_reach_the_model() -> None:
    @tool(effects="read_only")
    async def sh(command: str) -> str:
        """Run a shell command."""
        return (await run_process(["bash", "-c", command], input="piped")).output

    model = ScriptedModel([call("sh", command="cat; echo; echo oops >&2; exit 3"), "ok"])
    result = Agent(model=model, tools=Toolbox([sh])).run("q")
    assert result.messages[2].tool_results[0].text == "piped\noops\n\n[exit status 3]"
