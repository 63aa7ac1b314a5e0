"""How tool functions run: stuck sync tools never hold the process, isolated ones are killed for real.

The process-level promises are tested on real subprocesses with real signals: Ctrl-C (SIGINT) during a
stuck ``def`` tool ends ``toolslip run`` and ``toolslip mcp-serve`` at once with exit 130 and one line, and
a 60 s tool with ``timeout=2`` does not keep the command alive.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from toolslip import Agent, Toolbox, tool
from toolslip.cli.files import load_tools_file
from toolslip.errors import ToolDefinitionError
from toolslip.execution import run_in_thread
from toolslip.loop import execute_call
from toolslip.messages import ToolCall
from toolslip.testing import ScriptedModel, call

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))

STUCK = '''
import os, sys, time
from pathlib import Path
from toolslip import tool
from toolslip.testing import FunctionModel, call

MARK = Path(__file__).with_name("started")


@tool(effects="{effects}"{options})
def stuck(seconds: float = 60) -> str:
    """Hang for a minute."""
    MARK.write_text(str(os.getpid()))
    time.sleep(seconds)
    return "woke up"


TURNS = [call("stuck"), "gave up"]
MODEL = FunctionModel(lambda request: TURNS[sum(m.role == "assistant" for m in request.messages)])
'''


def stuck_tools(tmp_path: Path, effects: str = "read_only", options: str = "") -> Path:
    path = tmp_path / "stuck.py"
    path.write_text(STUCK.format(effects=effects, options=options))
    return path


def wait_for(path: Path, process: subprocess.Popen[str], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def start(*args: str, home: Path, stdin: int | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "TOOLSLIP_HOME": str(home)}
    out = subprocess.PIPE
    return subprocess.Popen([TOOLSLIP, *args], stdin=stdin, stdout=out, stderr=out, text=True, env=env)


def test_ctrl_c_during_a_stuck_sync_tool_ends_the_run_at_once(tmp_path: Path) -> None:
    tools = stuck_tools(tmp_path)
    run = start("run", str(tools), "go", "--model", f"{tools}:MODEL", home=tmp_path)
    wait_for(tmp_path / "started", run)
    pressed = time.monotonic()
    run.send_signal(signal.SIGINT)  # one press
    out, err = run.communicate(timeout=30)
    assert time.monotonic() - pressed < 2, "the first Ctrl-C must stop the run"
    assert run.returncode == 130
    assert err == "toolslip run: interrupted\n"  # one line, no traceback


def test_a_timed_out_sync_tool_does_not_keep_the_command_alive(tmp_path: Path) -> None:
    tools = stuck_tools(tmp_path, options=", timeout=2")
    run = start("run", str(tools), "go", "--model", f"{tools}:MODEL", "--no-journal", home=tmp_path)
    wait_for(tmp_path / "started", run)
    began = time.monotonic()
    out, err = run.communicate(timeout=60)
    assert time.monotonic() - began < 5, "the abandoned 60 s call held the process"
    assert run.returncode == 0, err
    assert "timed out after 2 s and was abandoned" in out and "gave up" in out


def test_ctrl_c_stops_mcp_serve_during_a_stuck_tool(tmp_path: Path) -> None:
    tools = stuck_tools(tmp_path)
    with start("mcp-serve", str(tools), home=tmp_path, stdin=subprocess.PIPE) as server:
        assert_mcp_serve_stops_at_the_first_ctrl_c(server, tmp_path)


def assert_mcp_serve_stops_at_the_first_ctrl_c(server: subprocess.Popen[str], tmp_path: Path) -> None:
    assert server.stdin is not None and server.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "stuck", "arguments": {}}},
    ):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    wait_for(tmp_path / "started", server)
    pressed = time.monotonic()
    server.send_signal(signal.SIGINT)
    server.wait(timeout=30)
    assert time.monotonic() - pressed < 2
    assert server.returncode == 130
    assert server.stderr is not None and server.stderr.read() == "toolslip mcp-serve: interrupted\n"


def test_asyncio_run_returns_without_waiting_for_an_abandoned_call() -> None:
    release = threading.Event()

    @tool(effects="read_only", timeout=0.2)
    def wait() -> str:
        """Wait to be released."""
        release.wait(30)
        return "released"

    began = time.monotonic()
    result = Agent(model=ScriptedModel([call("wait"), "ok"]), tools=Toolbox([wait])).run("q")
    took = time.monotonic() - began
    release.set()  # let the abandoned thread end, so it does not outlive the test
    assert took < 5
    assert "timed out after 0.2 s and was abandoned" in result.messages[2].tool_results[0].text


async def test_threads_run_in_the_callers_context_and_a_call_cancelled_before_it_starts_never_runs() -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var")
    var.set("the caller's")
    assert await run_in_thread(var.get) == "the caller's"

    blocked, ran = threading.Event(), []
    hold = asyncio.ensure_future(run_in_thread(blocked.wait, 30))
    await asyncio.sleep(0.05)
    queued = asyncio.ensure_future(run_in_thread(ran.append, "late"))
    queued.cancel()
    blocked.set()
    await hold
    await asyncio.sleep(0.05)
    assert ran == [] or ran == ["late"]  # a fresh worker may have picked it up before the cancel
    with pytest.raises(ZeroDivisionError):
        await run_in_thread(lambda: 1 / 0)


ISOLATED = '''
import os, subprocess, time
from pathlib import Path
from pydantic import BaseModel
from toolslip import tool
from toolslip.errors import ToolError

HERE = Path(__file__).parent


class Order(BaseModel):
    item: str
    quantity: int


class TwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(f"{a} and {b}")


@tool(effects="read_only", isolate="process", timeout=1)
def where(order: Order, seconds: float = 0) -> str:
    """Say which process ran the call."""
    print("a print goes to stderr, not into the reply")
    if seconds:
        child = subprocess.Popen(["sleep", "60"])
        (HERE / "grandchild").write_text(str(child.pid))
        time.sleep(seconds)
    return f"{order.quantity} {order.item} in {os.getpid()}"


@tool(effects="read_only", isolate="process")
def fail(kind: str) -> str:
    """Fail in different ways."""
    if kind == "tool":
        raise ToolError("the tool's own words")
    if kind == "odd":
        raise TwoArgs(1, 2)
    if kind == "exit":
        os._exit(3)
    raise ValueError("boom")
'''


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def all_gone(*pids: int) -> bool:
    deadline = time.monotonic() + 5
    while any(map(alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not any(map(alive, pids))


async def test_isolated_tool_runs_in_a_reused_child_and_a_timeout_kills_it_with_its_children(tmp_path: Path) -> None:
    (tmp_path / "isolated.py").write_text(ISOLATED)
    tools = load_tools_file(str(tmp_path / "isolated.py"))  # loaded by path, like `toolslip run tools.py`

    async def run(name: str, **arguments: object) -> tuple[bool, str]:
        result = await execute_call(ToolCall(id="c", name=name, arguments=arguments), tools.get(name), tools)
        return result.is_error, result.text

    first = await run("where", order={"item": "coffee", "quantity": 2})
    second = await run("where", order={"item": "tea", "quantity": 1})
    assert not first[0] and first[1].startswith("2 coffee in ")
    pid = int(first[1].split()[-1])
    assert pid != os.getpid() and second[1] == f"1 tea in {pid}"  # the child is kept for the next call

    assert await run("where", order={"item": "x", "quantity": 1}, seconds=30) == (
        True,
        "where timed out after 1 s and its process was killed.",
    )
    grandchild = int((tmp_path / "grandchild").read_text())
    assert all_gone(pid, grandchild), "the timed-out call's processes outlived it"
    again = await run("where", order={"item": "x", "quantity": 3})
    assert not again[0] and int(again[1].split()[-1]) != pid  # a fresh child

    assert await run("fail", kind="tool") == (True, "the tool's own words")
    assert await run("fail", kind="value") == (True, "fail failed: ValueError: boom")
    assert await run("fail", kind="odd") == (True, "fail failed: TwoArgs: 1 and 2")  # cannot be rebuilt: a stand-in
    error, text = await run("fail", kind="exit")
    assert error and text == "fail failed: ChildDied: the tool's process ended without answering (exit status 3)"


def test_isolate_process_needs_a_function_the_child_can_import() -> None:
    with pytest.raises(ToolDefinitionError, match="defined at the top level of a module"):

        @tool(isolate="process")
        def local() -> str:
            """Defined inside a test function."""
            return ""

    with pytest.raises(ToolDefinitionError, match="isolate must be 'thread' or 'process'"):
        tool(isolate="fork")(test_isolate_process_needs_a_function_the_child_can_import)  # type: ignore[call-overload]


async def test_cancelling_an_isolated_call_kills_its_process(tmp_path: Path) -> None:
    (tmp_path / "isolated.py").write_text(ISOLATED.replace("timeout=1", "timeout=None"))
    tools = load_tools_file(str(tmp_path / "isolated.py"))
    call_ = ToolCall(id="c", name="where", arguments={"order": {"item": "x", "quantity": 1}, "seconds": 30})
    task = asyncio.ensure_future(execute_call(call_, tools.get("where"), tools))
    for _ in range(1500):  # until the call is under way in its child
        if (tmp_path / "grandchild").exists():
            break
        await asyncio.sleep(0.02)
    grandchild = int((tmp_path / "grandchild").read_text())
    task.cancel()  # what Ctrl-C does to the run
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all_gone(grandchild), "the cancelled call's processes outlived it"


STALE_READER = """
import asyncio, os, sys
from toolslip import Agent, Toolbox, tool
from toolslip.agent import _sync, execution
from toolslip.testing import ScriptedModel, call

@tool(effects="read_only")
def look() -> str:
    '''Look (a plain def: it runs in a worker thread, which gives the loop a signal wakeup).'''
    return "seen"

def run(sync):
    agent = Agent(model=ScriptedModel([call("look"), "done"]), tools=Toolbox([look]))
    return agent.run("go") if sync else asyncio.run(agent.arun("go"))

run(sync=True)  # the sync entry's loop, which lives on, reads our wakeup socket
number = execution._signals._pair[0].fileno()
run(sync=False)  # another loop: the wakeup socket is replaced, and its number freed
read, write = os.pipe()
os.dup2(read, number)  # the next file under that number, as a subprocess's pipe would be
os.write(write, b"x")

async def read_it():
    loop, done = asyncio.get_running_loop(), asyncio.get_running_loop().create_future()
    loop.add_reader(number, lambda: done.done() or done.set_result(os.read(number, 1)))
    try:
        return await asyncio.wait_for(done, 5)
    finally:
        loop.remove_reader(number)

print(_sync.run_sync(read_it()))  # back on the sync entry's loop
"""


def test_the_loop_of_the_sync_entry_watches_a_file_reusing_a_replaced_wakeups_number(tmp_path: Path) -> None:
    """A long-lived loop kept a reader for a closed socket; a pipe opened later under that number was never
    watched (its selector only swapped the stale entry's callback), so a subprocess tool run through
    ``Agent.run`` hung for ever once the whole suite had run in one process."""
    script = tmp_path / "stale.py"
    script.write_text(STALE_READER)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "b'x'"
