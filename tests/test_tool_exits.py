"""``os._exit`` in a tool running in a worker thread fails that call; it no longer ends the CLI (issue 36).

Before, ``toolslip run`` ended at once with the tool's status, 3 ("step limit" to the CLI), and printed
nothing. Real subprocesses: the CLI runs a tools file whose tool calls ``os._exit(3)``, and one whose tool
forks a child that leaves with ``os._exit(7)`` as children do (that one must still be the real exit).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))

TOOLS = '''
import os
from toolslip import tool


@tool(effects="read_only")
def leave(reason: str) -> str:
    """Leave the process.

    Args:
        reason: Why.
    """
    os._exit(3)


@tool(effects="read_only")
def fork_child(reason: str) -> str:
    """Fork a child that exits with status 7, and say what it exited with.

    Args:
        reason: Why.
    """
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return f"child exited with {os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}"
'''


def run(folder: Path) -> subprocess.CompletedProcess[str]:
    (folder / "tools.py").write_text(TOOLS)
    env = {**os.environ, "TOOLSLIP_HOME": str(folder)}
    return subprocess.run(
        [TOOLSLIP, "run", "tools.py", "go", "--model", "scripted", "--no-journal"],
        capture_output=True,
        text=True,
        env=env,
        cwd=folder,
        timeout=120,
    )


def test_os_exit_in_a_threaded_tool_is_that_calls_error_and_the_run_goes_on(tmp_path: Path) -> None:
    done = run(tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "leave called os._exit(3) instead of returning; nothing it returned was kept" in done.stdout
    assert "fork_child(reason='example') → child exited with 7" in done.stdout  # a child's exit is real
    assert "[stop: completed after 2 model calls, 2 tool calls" in done.stdout
