"""One cap on every tool's output for a run: the model reads the cut, the journal keeps the whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolslip import Agent, Toolbox, tool
from toolslip.agent.output_cap import OutputCap
from toolslip.errors import InvalidValue
from toolslip.journal import Journal
from toolslip.testing import ScriptedModel, call


@tool(effects="read_only")
def read_log(name: str) -> str:
    """Read a whole log file."""
    return "".join(f"line {i}\n" for i in range(40_000))


def test_the_model_reads_the_cut_and_the_journal_keeps_the_whole(tmp_path: Path) -> None:
    journal = Journal(str(tmp_path / "runs.sqlite"))
    model = ScriptedModel([call("read_log", name="build"), "done"])
    hooks = [*journal.wrap(), OutputCap(1000, why="; --max-tool-output")]
    result = Agent(model=model, tools=Toolbox([read_log]), hooks=hooks).run("what does the log say?", run_id="r")
    recorded = next(e for e in journal.store.entries("r") if e.kind == "tool_end").data["result"]["content"]
    assert len(recorded) == 428_890 and recorded.startswith("line 0\nline 1\n")
    seen = result.messages[2].tool_results[0].text
    assert seen == recorded[:1000] + "\n[... output truncated: 427890 more characters not shown; --max-tool-output]"


def test_a_cap_below_one_is_refused_in_a_sentence() -> None:
    with pytest.raises(InvalidValue, match="at least 1"):
        OutputCap(0)
