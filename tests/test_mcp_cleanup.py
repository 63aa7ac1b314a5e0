"""Killing the agent mid-call leaves no MCP server process behind.

An agent process starts ``toolslip mcp-serve`` over stdio, reports the pids of its whole process tree,
and has the scripted model call a tool that sleeps for a minute. The test kills the agent while the call
runs (SIGKILL: no cleanup code runs at all; SIGINT: Ctrl-C, the cleanup path) and then checks, through
psutil, that every server process is gone.
"""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

SLOW_TOOLS = Path(__file__).parent / "mcp_servers" / "slow_tools.py"

AGENT = """
import asyncio, json, sys
import psutil
import toolslip.mcp as tm
from toolslip import Agent
from toolslip.testing import ScriptedModel, call

async def main():
    async with tm.stdio(sys.executable, "-m", "toolslip.cli", "mcp-serve", sys.argv[1],
                        env={"TOOLSLIP_TEST_MARKS": sys.argv[2]}) as tools:
        tree = [p.pid for p in psutil.Process().children(recursive=True)]
        print(json.dumps(tree), flush=True)
        model = ScriptedModel([call(sys.argv[3], seconds=60), "done"])
        await Agent(model=model, tools=tools).arun("wait")

asyncio.run(main())
"""


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE  # exited, waiting to be reaped
    except psutil.NoSuchProcess:
        return True


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT])
@pytest.mark.parametrize("tool", ["slow", "slow_sync"])  # an async call the server can cancel; a blocking one
def test_killing_the_agent_mid_call_leaves_no_server(tmp_path, signum, tool):
    marks = tmp_path / "marks"
    agent = subprocess.Popen(
        [sys.executable, "-c", AGENT, str(SLOW_TOOLS), str(marks), tool], stdout=subprocess.PIPE, text=True
    )
    try:
        tree = json.loads(agent.stdout.readline())
        assert tree  # the guard and the server it started
        deadline = time.monotonic() + 30
        while not (marks.exists() and "started" in marks.read_text()):
            assert time.monotonic() < deadline, "the slow call never started"
            time.sleep(0.05)
        assert all(not _gone(pid) for pid in tree)
        agent.send_signal(signum)
        agent.wait(timeout=30)
        deadline = time.monotonic() + 15
        while not all(_gone(pid) for pid in tree):
            assert time.monotonic() < deadline, f"left behind: {[p for p in tree if not _gone(p)]}"
            time.sleep(0.05)
        assert "finished" not in marks.read_text()
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        agent.stdout.close()
