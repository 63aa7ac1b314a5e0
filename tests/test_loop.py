import asyncio
import threading

import pytest

import toolslip
from toolslip import Agent, Message, ModelResponse, Request, Toolbox, ToolCall, tool
from toolslip.errors import ScriptExhausted
from toolslip.events import ToolFinished
from toolslip.hooks import Hook, RunContext, ToolAnswer
from toolslip.messages import ToolResult, Usage
from toolslip.testing import FunctionModel, ScriptedModel, call, raw_call


@tool(effects="read_only")
def fx(amount: float, currency: str) -> str:
    """Convert to CNY."""
    rate = {"USD": 7.18, "JPY": 0.047}[currency]
    return f"{amount:g} {currency} = {round(amount * rate, 2)} CNY"


@tool(effects="read_only")
def calc(expr: str) -> str:
    """Arithmetic."""
    return str(round(eval(expr, {"__builtins__": {}}), 10))  # test-only; inputs are scripted


EXPENSES = [
    call("fx", amount=320, currency="USD"),
    call("fx", amount=15000, currency="JPY"),
    call("calc", expr="2297.6 + 705.0"),
    call("calc", expr="3002.6 / 4"),
    "3002.6 CNY in total, 750.65 CNY each.",
]


def test_expenses_round_trip_follows_the_seed_rules() -> None:
    model = ScriptedModel(list(EXPENSES))
    result = toolslip.run(model, "320 USD and 15000 JPY in CNY, split by 4?", [fx, calc], system="Be exact.")
    assert result.ok and result.stop_reason == "completed"
    assert result.output == "3002.6 CNY in total, 750.65 CNY each."
    assert (result.steps, result.tool_calls, len(model.requests)) == (5, 4, 5)
    # tools are offered on every step, not only the first
    assert all([t.name for t in r.tools] == ["fx", "calc"] for r in model.requests)
    # every request: system first, then each tool call message immediately followed by its results
    for request in model.requests:
        messages = request.messages
        assert messages[0] == Message.system("Be exact.")
        for i, m in enumerate(messages):
            if m.role == "assistant" and m.tool_calls:
                following = messages[i + 1]
                assert following.role == "tool"
                assert [r.call_id for r in following.tool_results] == [c.id for c in m.tool_calls]
    results = [r.text for m in result.messages for r in m.tool_results]
    assert results == ["320 USD = 2297.6 CNY", "15000 JPY = 705.0 CNY", "3002.6", "750.65"]


def test_malformed_json_comes_back_as_error_and_the_run_recovers() -> None:
    model = ScriptedModel(
        [raw_call("fx", '{"amount": 320, "currency": "USD"'), call("fx", amount=320, currency="USD"), "2297.6"]
    )
    result = toolslip.run(model, "q", [fx])
    first = result.messages[2].tool_results[0]
    assert first.is_error and "not a JSON object" in first.text and "line 1" in first.text
    # the model saw the error in its next request
    assert model.requests[1].messages[-1].tool_results[0].is_error
    assert result.messages[4].tool_results[0].text == "320 USD = 2297.6 CNY"
    assert result.ok and result.output == "2297.6"


def test_every_failure_kind_becomes_an_error_result() -> None:
    @tool(effects="read_only")
    def boom() -> str:
        """Fails."""
        raise RuntimeError("disk on fire")

    @tool(effects="read_only", timeout=0.05)
    async def slow() -> str:
        """Sleeps."""
        await asyncio.sleep(5)
        return "never"

    turns = [
        [call("nope"), raw_call("fx", "[1, 2]"), call("fx", amount="lots", currency="USD"), call("boom"), call("slow")],
        "sorry",
    ]
    result = toolslip.run(ScriptedModel(turns), "q", [fx, boom, slow])
    texts = [r.text for r in result.messages[2].tool_results]
    assert all(r.is_error for r in result.messages[2].tool_results)
    assert "unknown tool 'nope'" in texts[0] and "fx, boom, slow" in texts[0]
    assert "got a JSON list, not an object" in texts[1]
    assert "argument 'amount'" in texts[2] and "'lots'" in texts[2]
    assert texts[3] == "boom failed: RuntimeError: disk on fire"
    assert "timed out after 0.05 s" in texts[4]


def test_step_limit_is_a_named_stop_and_leaves_no_call_unanswered() -> None:
    model = ScriptedModel([call("fx", amount=1, currency="USD")] * 5)
    result = toolslip.run(model, "q", [fx], max_steps=3)
    assert result.stop_reason == "max_steps" and not result.ok and result.steps == 3
    last = result.messages[-1]
    assert last.role == "tool" and last.tool_results[0].is_error
    assert "step limit of 3" in last.tool_results[0].text
    assert result.tool_calls == 2  # the third turn's call was answered, not executed


def test_read_only_calls_of_one_turn_run_concurrently() -> None:
    barrier = threading.Barrier(2, timeout=5)  # both sync tools must be inside at the same time

    @tool(effects="read_only")
    def left() -> str:
        """L."""
        barrier.wait()
        return "l"

    @tool(effects="read_only")
    def right() -> str:
        """R."""
        barrier.wait()
        return "r"

    result = toolslip.run(ScriptedModel([[call("left"), call("right")], "done"]), "q", [left, right])
    assert [r.text for r in result.messages[2].tool_results] == ["l", "r"]


def test_side_effecting_calls_run_alone_in_emitted_order() -> None:
    log: list[str] = []
    running = 0
    peak = 0

    @tool(effects="side_effect")
    async def pay(to: str) -> str:
        """Pay."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        log.append(to)
        running -= 1
        return f"paid {to}"

    turns = [[call("pay", to="a"), call("pay", to="b"), call("pay", to="c")], "ok"]
    result = toolslip.run(ScriptedModel(turns), "q", [pay])
    assert log == ["a", "b", "c"] and peak == 1
    assert [r.text for r in result.messages[2].tool_results] == ["paid a", "paid b", "paid c"]


def test_model_stop_reasons_map_to_run_stop_reasons() -> None:
    def answer(stop: str) -> FunctionModel:
        message = Message.assistant("partial")
        return FunctionModel(lambda r: ModelResponse(message=message, stop_reason=stop, usage=Usage(input_tokens=3)))  # type: ignore[arg-type]

    assert toolslip.run(answer("max_tokens"), "q").stop_reason == "max_tokens"
    assert toolslip.run(answer("refusal"), "q").stop_reason == "refusal"
    assert toolslip.run(answer("content_filter"), "q").stop_reason == "refusal"
    assert toolslip.run(answer("end_turn"), "q").usage.input_tokens == 3


def test_pause_turn_is_sent_back_and_counts_as_a_step() -> None:
    paused = ModelResponse(message=Message.assistant("searching"), stop_reason="pause_turn")
    model = ScriptedModel([paused, "found it"])
    result = toolslip.run(model, "q")
    assert result.output == "found it" and result.steps == 2
    assert model.requests[1].messages[-1] == paused.message


def test_hooks_can_answer_calls_and_reshape_requests() -> None:
    class Deny(Hook):
        async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
            return request.with_messages([*request.messages, Message.user("(reminder)")])

        async def before_tool(self, ctx: RunContext, call: ToolCall, tool: toolslip.Tool | None) -> ToolAnswer | None:
            if call.name == "fx":
                return ToolAnswer(result=ToolResult(call_id=call.id, content="denied", is_error=True), note="denied")
            return None

    model = ScriptedModel([call("fx", amount=1, currency="USD"), "ok"])
    events: list[object] = []
    agent = Agent(model=model, tools=Toolbox([fx]), hooks=[Deny()])
    result = asyncio.run(agent.arun("q", on_event=events.append))
    assert result.messages[2].tool_results[0].text == "denied"
    assert model.requests[0].messages[-1] == Message.user("(reminder)")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].note == "denied"


async def test_iter_streams_events_in_order() -> None:
    agent = Agent(model=ScriptedModel([call("fx", amount=2, currency="USD"), "done"]), tools=Toolbox([fx]))
    kinds = [type(e).__name__ async for e in agent.iter("q")]
    assert kinds == [
        "ModelCalled",
        "ModelResponded",
        "ToolStarted",
        "ToolFinished",
        "ModelCalled",
        "ModelResponded",
        "RunFinished",
    ]


async def test_iter_raises_the_model_error() -> None:
    agent = Agent(model=ScriptedModel([]), tools=Toolbox([fx]))
    with pytest.raises(ScriptExhausted):
        async for _ in agent.iter("q"):
            pass


def test_an_agent_takes_a_plain_list_of_tools_and_functions() -> None:
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    model = ScriptedModel([call("fx", amount=320, currency="USD"), call("shout", text="hi"), "done"])
    agent = Agent(model=model, tools=[fx, shout])  # type: ignore[arg-type]  # what pydantic-ai users write
    result = agent.run("go")
    assert [r.text for m in result.messages for r in m.tool_results] == ["320 USD = 2297.6 CNY", "HI"]
    assert [t.name for t in model.requests[0].tools] == ["fx", "shout"]


def test_max_steps_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_steps"):
        Agent(model=ScriptedModel([]), max_steps=0)


async def test_tool_error_becomes_an_error_result_with_the_tools_own_content() -> None:
    from toolslip import Image, Text, ToolError

    @tool(effects="read_only")
    def lookup(city: str) -> str:
        """Look a city up."""
        raise ToolError((Text(text=f"no data for {city}; try Beijing"), Image(media_type="image/png", data="AA==")))

    agent = Agent(model=ScriptedModel([call("lookup", city="Atlantis"), "sorry"]), tools=Toolbox([lookup]))
    result = await agent.arun("q")
    [res] = result.messages[2].tool_results
    assert res.is_error and res.untrusted
    assert res.content == (Text(text="no data for Atlantis; try Beijing"), Image(media_type="image/png", data="AA=="))
