"""Held calls decided from outside the run (``toolslip.durable.inbox``), on SQLite and PostgreSQL.

A paused run's call is decided by someone who only reaches the journal; the decision binds to the call and
arguments shown, is kept once, and the run goes on in the waiting process or in ``toolslip resume``,
running an edited call once, with its edited arguments, and journaling who decided.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from toolslip import Agent, Approval, Dedup, Journal, Toolbox, tool
from toolslip.core.messages import ToolCall
from toolslip.durable.inbox import DecisionRefused, decide, held_calls
from toolslip.testing import ScriptedModel, call

ROOT = Path(__file__).resolve().parents[1]


def _agent(journal: Journal, paid: list[tuple[str, int]], *turns: object) -> Agent:
    @tool(effects="side_effect")
    def pay(to: str, amount: int) -> str:
        """Pay someone."""
        paid.append((to, amount))
        return f"paid {amount} to {to}"

    return Agent(model=ScriptedModel(list(turns)), tools=Toolbox([pay]), hooks=journal.wrap(Dedup(), Approval()))


async def test_an_edited_approval_runs_the_edited_call_once_and_the_run_says_who(journal_at: str) -> None:
    journal, paid = Journal(journal_at), []
    agent = _agent(journal, paid, call("pay", to="bob", amount=20), "done")
    paused = await agent.arun("pay bob", run_id="r1")
    assert paused.stop_reason == "paused" and paid == []
    [held] = held_calls(journal.store.entries("r1"))
    assert (held.tool, dict(held.arguments)) == ("pay", {"to": "bob", "amount": 20})

    async def decide_later() -> None:
        await asyncio.sleep(0.2)
        decide(
            journal.store,
            "r1",
            held.call_id,
            shown=held.hash,
            approved=True,
            by="alice",
            arguments={"to": "bob", "amount": 25},
        )

    deciding = asyncio.create_task(decide_later())
    result = await journal.wait_and_resume(agent, paused, poll=0.05, give_up=30)
    await deciding
    assert (result.stop_reason, paid) == ("completed", [("bob", 25)])
    assert result.messages[1].tool_calls[0].arguments == {"to": "bob", "amount": 25}  # the model sees what ran
    [decision] = [e for e in journal.store.entries("r1") if e.kind == "decision"]
    assert decision.data["by"] == "alice" and decision.data["original"] == {"to": "bob", "amount": 20}
    with pytest.raises(DecisionRefused, match="not waiting"):  # over: nothing is held any more
        decide(journal.store, "r1", held.call_id, shown=held.hash, approved=True)


async def test_a_decision_binds_to_the_call_shown_and_is_taken_once(journal_at: str) -> None:
    journal, paid = Journal(journal_at), []
    await _agent(journal, paid, call("pay", to="bob", amount=20), "done").arun("pay bob", run_id="r2")
    [held] = held_calls(journal.store.entries("r2"))
    with pytest.raises(DecisionRefused, match="not the one shown"):
        decide(journal.store, "r2", held.call_id, shown="0" * 64, approved=True)
    with pytest.raises(DecisionRefused, match="not waiting"):
        decide(journal.store, "r2", "call_99", shown=held.hash, approved=True)
    with pytest.raises(DecisionRefused, match="with an approval"):
        decide(journal.store, "r2", held.call_id, shown=held.hash, approved=False, arguments={"to": "eve", "amount": 1})
    decide(journal.store, "r2", held.call_id, shown=held.hash, approved=False, note="not today", by="bob")
    with pytest.raises(DecisionRefused, match="decided already"):
        decide(journal.store, "r2", held.call_id, shown=held.hash, approved=True, by="mallory")
    result = await journal.resume(_agent(journal, paid, "ok, not paying"), "r2")
    assert paid == [] and result.stop_reason == "completed"
    refusal = result.messages[2].tool_results[0].text
    assert "not today" in refusal and "refused" in refusal  # the reason reached the model


def test_toolslip_resume_applies_a_decision_taken_in_the_inbox(tmp_path: Path) -> None:
    location, payments = str(tmp_path / "runs.sqlite"), tmp_path / "payments.log"
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "CONSOLE_PAYMENTS": str(payments)}
    script = (
        "import sys, asyncio; sys.path.insert(0, 'tests/fixtures/console')\n"
        "from agent import model, pay\n"
        "from toolslip import Agent, Approval, Journal, Toolbox\n"
        "j = Journal(sys.argv[1], meta={'model': 'tests/fixtures/console/agent.py:model',"
        " 'tools_files': ['tests/fixtures/console/agent.py']})\n"
        "agent = Agent(model=model, tools=Toolbox([pay]), hooks=j.wrap(Approval()))\n"
        "print(agent.run('pay bob', run_id='r3').stop_reason)\n"
    )
    run = subprocess.run([sys.executable, "-c", script, location], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.stdout.strip() == "paused", run.stderr
    journal = Journal(location)
    [held] = held_calls(journal.store.entries("r3"))
    decide(
        journal.store,
        "r3",
        held.call_id,
        shown=held.hash,
        approved=True,
        by="carol",
        arguments={"to": "bob", "amount": 7},
    )
    journal.store.close()
    resumed = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "resume", "r3", "--journal", location],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "the tool said: paid 7 EUR to bob" in resumed.stdout
    assert payments.read_text() == "bob 7\n"
    shown = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "show", "r3", "--journal", location],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "decision: call_1 pay approved by carol, edited: amount 20 -> 7" in shown.stdout


def test_a_side_effect_cut_off_by_a_killed_process_waits_in_the_inbox_and_runs_again_when_approved(
    tmp_path: Path,
) -> None:
    location, marker = str(tmp_path / "runs.sqlite"), tmp_path / "paid"
    script = (
        "import os, sys, pathlib\n"
        "from toolslip import Agent, Journal, Toolbox, tool\n"
        "from toolslip.testing import ScriptedModel, call\n"
        "@tool(effects='side_effect')\n"
        "def pay(to: str, amount: int) -> str:\n"
        "    '''Pay someone.'''\n"
        "    pathlib.Path(sys.argv[2]).write_text('maybe')\n"
        "    os._exit(9)  # killed mid-payment: no recorded end\n"
        "j = Journal(sys.argv[1])\n"
        "Agent(model=ScriptedModel([call('pay', to='bob', amount=20), 'done']), tools=Toolbox([pay]),"
        " hooks=j.wrap()).run('pay bob', run_id='cut')\n"
    )
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"}
    killed = subprocess.run([sys.executable, "-c", script, location, str(marker)], env=env, capture_output=True)
    assert killed.returncode == 9 and marker.read_text() == "maybe"
    journal, paid = Journal(location), []
    [held] = held_calls(journal.store.entries("cut"))
    assert held.interrupted and dict(held.arguments) == {"to": "bob", "amount": 20}
    with pytest.raises(DecisionRefused, match="as it was, or not at all"):
        decide(journal.store, "cut", held.call_id, shown=held.hash, approved=True, arguments={"to": "bob", "amount": 1})
    decide(journal.store, "cut", held.call_id, shown=held.hash, approved=True, by="dave")
    agent = _agent(journal, paid, "paid again")
    result = asyncio.run(journal.resume(agent, "cut"))
    assert (result.stop_reason, paid) == ("completed", [("bob", 20)])
    assert [e.data["by"] for e in journal.store.entries("cut") if e.kind == "decision"] == ["dave"]


async def test_a_decision_for_one_run_never_answers_another_run_s_call_of_the_same_id(tmp_path: Path) -> None:
    from toolslip.testing import FunctionModel, last_results

    journal, paid = Journal(tmp_path / "runs.sqlite"), []

    def answer(request: object) -> object:  # numbers its calls afresh in every run, as many models do
        pay = ToolCall(id="call_0", name="pay", arguments={"to": "bob", "amount": 20})
        return "done" if last_results(request) else pay  # type: ignore[arg-type]

    agent = _agent(journal, paid)
    agent = Agent(model=FunctionModel(answer), tools=agent.tools, hooks=agent.hooks)
    first = await agent.arun("pay bob", run_id="a")
    [held] = held_calls(journal.store.entries("a"))
    decide(journal.store, "a", held.call_id, shown=held.hash, approved=True)
    assert (await journal.wait_and_resume(agent, first, give_up=10)).stop_reason == "completed"
    second = await agent.arun("pay bob", run_id="b")  # the same call id: it must be asked about again
    assert second.stop_reason == "paused" and paid == [("bob", 20)]
    assert [h.call_id for h in held_calls(journal.store.entries("b"))] == ["call_0"] == [held.call_id]
