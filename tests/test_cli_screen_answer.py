"""``toolslip run`` with the embedded model: the answer on the screen is the answer in the journal, byte for byte.

Issue 36: ``make run`` (the weather question) showed ``(The weather in Beijing ...`` while the journal held
``The weather in Beijing ...``: the model's first pass after the tool result streamed a ``(`` and then a call
it had already made. The run goes through a real terminal (pexpect) and its output through a terminal
emulator (pyte), so the escape codes that replace provisional text count as a user would see them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pexpect
import pyte
import pytest

pytestmark = pytest.mark.slow

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))
WEATHER = str(Path(__file__).resolve().parents[1] / "examples" / "weather.py")
_PYTHONPATH = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def test_the_answer_on_the_screen_is_the_journals(tmp_path: Path) -> None:
    journal = str(tmp_path / "runs.sqlite")
    env = {"TOOLSLIP_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(Path.home()), **_PYTHONPATH}
    question = "What's the weather in Beijing?"
    child = pexpect.spawn(
        TOOLSLIP,
        ["run", WEATHER, question, "--model", "local:qwen2.5-coder-0.5b", "--journal", journal],
        env={**env, "COLUMNS": "200", "LINES": "40"},
        dimensions=(40, 200),
        encoding="utf-8",
        timeout=240,
    )
    child.expect(pexpect.EOF)
    child.close()
    screen = pyte.Screen(200, 40)
    pyte.Stream(screen).feed(child.before or "")
    lines = [line.rstrip() for line in screen.display if line.strip()]
    assert child.exitstatus == 0, lines
    stop = next(i for i, line in enumerate(lines) if line.startswith("[stop:"))
    last_step = max(i for i, line in enumerate(lines[:stop]) if line.startswith("[step "))
    shown = "\n".join(lines[last_step + 1 : stop])
    run_id = re.search(r"run ([0-9a-f]{32})", lines[stop])
    assert run_id, lines
    entries = subprocess.run(
        [TOOLSLIP, "show", run_id.group(1), "--journal", journal, "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    finish = [json.loads(line) for line in entries.splitlines() if '"finish"' in line][-1]
    held = finish["data"]["output"] if "data" in finish else finish["output"]
    assert shown == held and "28" in held, (lines, held)
