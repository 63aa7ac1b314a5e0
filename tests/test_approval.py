"""Approval: approve, deny, rules per tool and per effect, pause and resume later from saved state."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolslip import Agent, Message, ModelResponse, Toolbox, ToolCall, tool
from toolslip.approval import Approval, ApprovalRequest, Decision, PausedRun, resume_paused
from toolslip.errors import ConfigError
from toolslip.hooks import RunContext
from toolslip.testing import FunctionModel, Turn, call
from toolslip.tools import Tool

log: list[str] = []


@tool(effects=["side_effect", "destructive"])
def transfer(to: str, amount: int) -> str:
    """Send money."""
    log.append(f"transfer {to} {amount}")
    return f"sent {amount} to {to}"


@tool(effects="read_only")
def balance() -> int:
    """Balance."""
    log.append("balance")
    return 100


@tool(effects=["egress", "idempotent"])
def notify(text: str) -> str:
    """Tell the accountant."""
    log.append(f"notify {text}")
    return "notified"


TOOLS = Toolbox([transfer, balance, notify])


def scripted(*turns: Turn) -> FunctionModel:
    """Answers by position in the transcript, so a resumed run gets the same script."""
    return FunctionModel(lambda request: turns[sum(m.role == "assistant" for m in request.messages)])


def setup_function() -> None:
    log.clear()


def test_approved_call_runs_and_the_approver_sees_the_whole_call() -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    model = scripted([call("transfer", to="张三", amount=5), call("balance")], "done")
    result = Agent(model=model, tools=TOOLS, hooks=[Approval(approver)]).run("pay", run_id="r1")
    assert result.ok and log == ["transfer 张三 5", "balance"]
    assert [(r.tool, dict(r.arguments), r.run_id) for r in asked] == [("transfer", {"to": "张三", "amount": 5}, "r1")]


def test_denied_call_tells_the_model_the_user_refused_and_the_run_goes_on() -> None:
    async def approver(request: ApprovalRequest) -> Decision:
        await asyncio.sleep(0)
        return Decision(approved=False, note="use the savings account")

    model = scripted(call("transfer", to="bob", amount=5), "ok, I did not pay")
    result = Agent(model=model, tools=TOOLS, hooks=[Approval(approver)]).run("pay")
    refusal = result.messages[2].tool_results[0]
    assert result.ok and result.output == "ok, I did not pay" and log == []
    assert refusal.is_error and "refused" in refusal.text and "use the savings account" in refusal.text


def test_rules_per_tool_per_effect_and_by_function() -> None:
    asked: list[str] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(f"{request.tool} {dict(request.arguments)}")
        return True

    def big(tool: Tool, arguments: Mapping[str, Any], ctx: RunContext) -> bool:
        return int(arguments["amount"]) > 100

    turns = [
        call("transfer", to="a", amount=5),
        call("transfer", to="b", amount=500),
        call("notify", text="hi"),
        call("balance"),
        "done",
    ]
    approval = Approval(approver, tools={"transfer": big}, effects={"egress": "always"})
    Agent(model=scripted(*turns), tools=TOOLS, hooks=[approval]).run("q")
    assert asked == ["transfer {'to': 'b', 'amount': 500}", "notify {'text': 'hi'}"]

    asked.clear()  # the default asks for side-effecting tools only; "never" by name overrides it
    Agent(model=scripted(*turns), tools=TOOLS, hooks=[Approval(approver)]).run("q")
    assert asked == ["transfer {'to': 'a', 'amount': 5}", "transfer {'to': 'b', 'amount': 500}"]
    asked.clear()
    Agent(model=scripted(*turns), tools=TOOLS, hooks=[Approval(approver, tools={"transfer": "never"})]).run("q")
    assert asked == []


def pause_then_save(approval: Approval) -> tuple[Agent, dict[str, Any]]:
    turn = [call("balance"), call("transfer", to="bob", amount=5), call("notify", text="paid bob"), call("balance")]
    agent = Agent(model=scripted(turn, "all done"), tools=TOOLS, hooks=[approval])
    result = agent.run("pay bob", run_id="p1")
    assert result.stop_reason == "paused"
    assert log == ["balance", "balance"]  # reads ran; the transfer waits and the notify waits behind it
    paused = approval.paused("p1")
    assert paused is not None and [r.tool for r in paused.pending] == ["transfer"]
    return agent, json.loads(json.dumps(paused.to_dict()))  # what a caller would store


def test_pause_serialize_and_resume_later_with_an_approval() -> None:
    approval = Approval()  # nobody to ask now
    agent, saved = pause_then_save(approval)
    paused = PausedRun.from_dict(saved)
    result = asyncio.run(resume_paused(agent, paused, {paused.pending[0].call_id: True}))
    assert result.ok and result.output == "all done" and result.run_id == "p1"
    assert log == ["balance", "balance", "transfer bob 5", "notify paid bob"]  # reads replayed, not re-run
    texts = [r.text for r in result.messages[2].tool_results]
    assert texts == ["100", "sent 5 to bob", "notified", "100"]


def test_pause_and_resume_with_a_denial() -> None:
    approval = Approval()
    agent, saved = pause_then_save(approval)
    paused = PausedRun.from_dict(saved)
    decision = Decision(approved=False, note="not this month")
    result = asyncio.run(resume_paused(agent, paused, {paused.pending[0].call_id: decision}))
    assert result.ok and log == ["balance", "balance", "notify paid bob"]
    assert "not this month" in result.messages[2].tool_results[1].text


def test_resume_without_a_decision_pauses_again() -> None:
    approval = Approval()
    agent, saved = pause_then_save(approval)
    result = asyncio.run(resume_paused(agent, PausedRun.from_dict(saved)))
    assert result.stop_reason == "paused" and log == ["balance", "balance"]


def test_request_round_trips_through_json() -> None:
    request = ApprovalRequest(tool="t", arguments={"a": [1]}, call_id="c", run_id="r", reason="why")
    assert ApprovalRequest.from_dict(json.loads(json.dumps(request.to_dict()))) == request


def test_a_rule_that_is_not_a_rule_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="rule for tool 'transfer' must be 'always', 'never' or a function"):
        Approval(tools={"transfer": "sometimes"})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="unknown effect 'network'"):
        Approval(effects={"network": "always"})


def test_a_decision_is_used_once_even_when_the_model_reuses_call_ids() -> None:
    def turn(to: str) -> ModelResponse:  # a model that numbers its calls afresh every turn
        slip = ToolCall(id="call_0", name="transfer", arguments={"to": to, "amount": 1})
        return ModelResponse(message=Message.assistant(calls=[slip]), stop_reason="tool_use")

    approval = Approval()
    agent = Agent(model=scripted(turn("ann"), turn("bob"), "done"), tools=TOOLS, hooks=[approval])
    assert agent.run("q", run_id="ids").stop_reason == "paused"
    paused = approval.paused("ids")
    assert paused is not None
    result = asyncio.run(resume_paused(agent, paused, {"call_0": True}))
    assert result.stop_reason == "paused" and log == ["transfer ann 1"]  # bob's call_0 waits for its own yes
