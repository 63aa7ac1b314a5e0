"""`toolslip resume`, `runs` and `show`, with approvals answered on a real pseudo-terminal.

The paused run lives in each store in turn (``journal_at``): a SQLite file, or ``--journal postgresql://``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import pexpect
import pytest

from toolslip import Agent
from toolslip._files import import_user_file
from toolslip.approval import Approval
from toolslip.cli import main
from toolslip.cli.durable import add_run_options, hooks_from_args
from toolslip.cli.files import load_tools_file
from toolslip.dedup import Dedup
from toolslip.journal import Journal
from toolslip.repeats import RepeatGuard
from toolslip.serial import SerialSideEffects

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))

BANK = '''
from pathlib import Path
from toolslip import tool
from toolslip.testing import FunctionModel, call

LEDGER = Path(__file__).with_name("ledger")


@tool(effects=["side_effect", "destructive"])
def transfer(to: str, amount: int, memo: str = "") -> str:
    """Send money."""
    with LEDGER.open("a") as f:
        f.write(f"{to} {amount}\\n")
    return f"sent {amount} to {to}"


TURNS = [[call("transfer", to="张三", amount=5, memo="rent\\nfor May"), call("transfer", to="bob", amount=7)], "done"]
MODEL = FunctionModel(lambda request: TURNS[sum(m.role == "assistant" for m in request.messages)])
'''


@pytest.fixture
def paused_run(tmp_path: Path, journal_at: str) -> tuple[str, Path]:
    """A run started through the library that paused with two transfers waiting for approval."""
    bank = tmp_path / "bank.py"
    bank.write_text(BANK)
    journal_path = journal_at
    journal = Journal(journal_path, meta={"model": f"{bank}:MODEL", "tools_file": str(bank)})
    module = import_user_file(str(bank), "model file")
    agent = Agent(model=module.MODEL, tools=load_tools_file(str(bank)), hooks=journal.wrap(Dedup(), Approval()))
    assert agent.run("pay the rent", run_id="run1").stop_reason == "paused"
    journal.store.close()
    return journal_path, tmp_path / "ledger"


def spawn(*args: str, home: Path) -> pexpect.spawn:
    return pexpect.spawn(
        TOOLSLIP, list(args), env={"TOOLSLIP_HOME": str(home), "PATH": "/usr/bin:/bin"}, encoding="utf-8", timeout=20
    )


def test_resume_asks_on_the_terminal_with_full_arguments_approve_and_deny(paused_run: tuple[str, Path]) -> None:
    journal, ledger = paused_run
    child = spawn("resume", "run1", "--journal", str(journal), "--approve", "ask", home=ledger.parent)
    child.expect("Approve transfer")
    child.expect('"to": "张三"')
    child.expect('"memo": "rent\\\\nfor May"')  # in full, escaped, nothing cut
    child.expect(r"Run it\? \[y/N\]")
    child.sendline("y")
    child.expect("Approve transfer")
    child.expect('"to": "bob"')
    child.expect(r"Run it\? \[y/N\]")
    child.sendline("bob was paid in cash")
    child.expect("done")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert ledger.read_text() == "张三 5\n"


def test_resume_can_pause_again_and_be_resumed_later(
    paused_run: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, ledger = paused_run
    assert main(["resume", "run1", "--journal", str(journal), "--approve", "pause"]) == 4
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "run run1 is paused: 1 call waits for a decision"
    assert err[1].startswith("  transfer(to='张三', amount=5, memo='rent\\nfor May')  (call ")  # one line
    call_id = err[1].split("(call ")[1].split(":")[0]
    quoted = shlex.quote(journal)  # a URL's "?" is quoted for the shell
    assert err[2] == f"    approve: toolslip resume run1 --journal {quoted} --decide {call_id}=yes"
    assert err[3] == f"    refuse:  toolslip resume run1 --journal {quoted} --decide {call_id}=no"
    assert main(["resume", "run1", "--journal", str(journal), "--approve", "yes"]) == 0
    assert ledger.read_text() == "张三 5\nbob 7\n"
    assert main(["resume", "run1", "--journal", str(journal)]) == 0  # a completed run is left alone
    assert "already completed" in capsys.readouterr().out
    assert ledger.read_text() == "张三 5\nbob 7\n"


def test_runs_and_show_print_the_journal(paused_run: tuple[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    journal, _ = paused_run
    assert main(["runs", "--journal", str(journal)]) == 0
    line, waiting, size = capsys.readouterr().out.splitlines()
    assert line.startswith("run1 ") and " paused " in line and line.endswith("pay the rent")
    assert waiting == "    1 call waiting for a decision"
    assert size.startswith(f"journal {journal}: ") and size.endswith(" kB on disk")
    assert main(["show", "run1", "--journal", str(journal)]) == 0
    shown = capsys.readouterr().out
    assert 'transfer {"to": "张三", "amount": 5, "memo": "rent\\nfor May"}' in shown
    assert "pending approval: transfer" in shown
    assert main(["show", "run1", "--journal", str(journal), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()  # one JSON object a line; held calls have no tool entries
    assert [json.loads(line)["kind"] for line in lines] == ["start", "model", "finish"]


def test_cli_errors_are_one_sentence(
    tmp_path: Path, paused_run: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    journal, _ = paused_run
    assert main(["show", "nope", "--journal", str(journal)]) == 1
    assert "no run 'nope' in the journal" in capsys.readouterr().err
    assert main(["runs", "--journal", str(tmp_path / "missing.sqlite")]) == 1
    assert "no run journal at" in capsys.readouterr().err
    assert main(["resume", "nope", "--journal", str(journal)]) == 1
    assert "`toolslip runs` lists the runs it holds" in capsys.readouterr().err


def test_run_options_build_the_hooks_in_order(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model")
    add_run_options(parser)
    args = parser.parse_args(["--journal", str(tmp_path / "j.sqlite"), "--approve", "no", "--serial", "--model", "m"])
    replayer, dedup, approval, serial, repeats, recorder = hooks_from_args(args)
    assert isinstance(dedup, Dedup) and isinstance(approval, Approval) and isinstance(serial, SerialSideEffects)
    assert isinstance(repeats, RepeatGuard) and repeats.max_repeats == 0
    assert type(replayer).__name__ == "_Replayer" and type(recorder).__name__ == "_Recorder"
    assert recorder.journal.meta["model"] == "m"  # type: ignore[attr-defined]
    no_journal = hooks_from_args(parser.parse_args(["--no-journal"]))
    assert [type(h) for h in no_journal] == [Dedup, Approval, RepeatGuard]
    assert hooks_from_args(parser.parse_args(["--no-journal", "--max-repeats", "3"]))[-1].max_repeats == 3  # type: ignore[attr-defined]
