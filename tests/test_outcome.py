"""Every tool result says what happened to its call, and the JSON form stays readable both ways."""

from typing import Any

from toolslip import Agent, Toolbox, tool
from toolslip.approval import Approval, Decision
from toolslip.dedup import Dedup
from toolslip.messages import Message, ToolResult, message_from_dict, message_to_dict, part_from_dict, part_to_dict
from toolslip.policy import TaintGate
from toolslip.testing import ScriptedModel, call


def toolbox() -> Toolbox:
    @tool(effects="read_only")
    def page() -> str:
        """A web page."""
        return "hello"

    @tool(effects="read_only")
    def broken() -> str:
        """Always fails."""
        raise ValueError("no")

    @tool(effects="side_effect")
    def pay(amount: float) -> str:
        """Pay."""
        return f"paid {amount}"

    return Toolbox([page, broken, pay])


def outcomes(result: Any) -> list[str | None]:
    return [r.outcome for m in result.messages for r in m.tool_results]


async def test_ran_failed_duplicate_and_not_executed() -> None:
    turns = [call("page"), call("broken"), call("pay", amount=1), call("pay", amount=1), call("page")]
    agent = Agent(model=ScriptedModel(turns), tools=toolbox(), hooks=[Dedup()], max_steps=5)
    result = await agent.arun("go")
    assert outcomes(result) == ["ran", "failed", "ran", "duplicate", "not_executed"]


async def test_refused_by_the_user_refused_by_the_gate_and_held() -> None:
    refuse = Approval(lambda request: Decision(approved=False))
    result = await Agent(model=ScriptedModel([call("pay", amount=1), "ok"]), tools=toolbox(), hooks=[refuse]).arun("x")
    assert outcomes(result) == ["refused"]
    gated = Agent(
        model=ScriptedModel([call("page"), call("pay", amount=9), "ok"]), tools=toolbox(), hooks=[TaintGate()]
    )
    assert outcomes(await gated.arun("x")) == ["ran", "refused"]
    paused = Agent(model=ScriptedModel([call("pay", amount=1), "ok"]), tools=toolbox(), hooks=[Approval()])
    result = await paused.arun("x")
    assert result.stop_reason == "paused" and outcomes(result) == ["held"]


def test_the_json_form_keeps_the_outcome_and_reads_old_transcripts_without_it() -> None:
    result = ToolResult(
        call_id="c1", name="pay", content="x", outcome="refused", untrusted=True, untrusted_spans=("x",)
    )
    assert part_to_dict(result)["outcome"] == "refused"
    back = part_from_dict(part_to_dict(result))
    assert isinstance(back, ToolResult) and back.outcome == "refused" and back.untrusted_spans == ("x",)
    old = {"kind": "tool_result", "call_id": "c1", "content": "x", "is_error": False, "name": "pay", "untrusted": False}
    loaded = part_from_dict(old)
    assert isinstance(loaded, ToolResult) and loaded.outcome is None and loaded.untrusted_spans == ()
    assert part_to_dict(loaded) == old  # a result without the metadata writes exactly what an old one did
    message = Message.tool([result])
    assert message_from_dict(message_to_dict(message)) == message


def test_the_outcome_is_metadata_that_equality_and_wire_round_trips_ignore() -> None:
    from toolslip.formats import anthropic, openai_chat
    from toolslip.messages import Request

    ran = ToolResult(call_id="call_7", name="pay", content="ok", outcome="ran")
    assert ran == ToolResult(call_id="call_7", name="pay", content="ok")
    history = (Message.user("hi"), Message.assistant(calls=[call("pay", amount=1)]), Message.tool([ran]))
    for fmt in (openai_chat, anthropic):
        wire = fmt.request_to_wire(Request(model="m", messages=history))
        assert "outcome" not in repr(wire)
        assert fmt.request_to_wire(fmt.request_from_wire(wire)) == wire
