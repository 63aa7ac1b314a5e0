"""The repeated-call guard, driven by scripted models through the real loop."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from toolslip.events import Event, ToolFinished
from toolslip.hooks import Hook, RunContext
from toolslip.loop import Agent
from toolslip.messages import Request
from toolslip.repeats import RepeatGuard
from toolslip.testing import ScriptedModel, call, last_results
from toolslip.tools import Toolbox, tool


def weather_tools() -> tuple[Toolbox, list[str]]:
    """A read-only weather tool that records each real execution."""
    runs: list[str] = []

    @tool(effects="read_only")
    def get_weather(city: str, unit: str = "celsius") -> dict[str, object]:
        """Current weather in a city."""
        runs.append(city)
        return {"city": city, "temp": 28, "unit": unit}

    return Toolbox([get_weather]), runs


async def test_an_identical_call_is_answered_from_the_earlier_result() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", city="北京"), "28 degrees"])
    events: list[Event] = []
    guard = RepeatGuard(max_repeats=1)  # so the third request still shows the repeat's answer
    result = await Agent(model=model, tools=tools, hooks=[guard]).arun("weather?", on_event=events.append)
    assert result.output == "28 degrees"
    assert runs == ["北京"]
    repeated = next(iter(last_results(model.requests[2]).values()))
    assert "not run again" in repeated and '"temp": 28' in repeated
    notes = [e.note for e in events if isinstance(e, ToolFinished)]
    assert notes == ["", "repeated call answered from the earlier result"]


async def test_by_default_the_step_after_the_first_repeat_must_answer() -> None:
    """The weather demo's shape: call, repeat, forced answer: 3 model calls, not 4."""
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", city="北京"), "28 degrees"])
    result = await Agent(model=model, tools=tools, hooks=[RepeatGuard()]).arun("weather?")
    assert [r.settings.tool_choice for r in model.requests] == [None, None, "none"]
    assert result.steps == 3 and result.output == "28 degrees" and runs == ["北京"]
    # The forced request leaves out the repeated call and its remembered answer, and asks for the answer
    # after the one real result; the transcript keeps everything.
    forced = model.requests[2].messages
    assert [m.role for m in forced] == ["user", "assistant", "tool"]
    assert forced[1].tool_calls[0].id == result.messages[1].tool_calls[0].id
    assert forced[2].tool_results[0].text == '{"city": "北京", "temp": 28, "unit": "celsius"}'
    assert forced[2].text == RepeatGuard().answer_prompt
    assert [m.role for m in result.messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert "not run again" in result.messages[4].tool_results[0].text


async def test_a_turn_with_a_new_call_stays_in_the_forced_request() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel(
        [call("get_weather", city="北京"), [call("get_weather", city="北京"), call("get_weather", city="上海")], "done"]
    )
    await Agent(model=model, tools=tools, hooks=[RepeatGuard()]).arun("weather?")
    forced = model.requests[2]
    assert forced.settings.tool_choice == "none" and runs == ["北京", "上海"]
    assert [m.role for m in forced.messages] == ["user", "assistant", "tool", "assistant", "tool"]
    assert [len(m.tool_results) for m in forced.messages if m.role == "tool"] == [1, 2]  # every call keeps its result


async def test_defaults_and_key_order_do_not_hide_a_repeat() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", unit="celsius", city="北京"), "done"])
    await Agent(model=model, tools=tools, hooks=[RepeatGuard()]).arun("weather?")
    assert runs == ["北京"]


async def test_different_arguments_run_again() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", city="上海"), "done"])
    await Agent(model=model, tools=tools, hooks=[RepeatGuard()]).arun("weather?")
    assert runs == ["北京", "上海"]


@pytest.mark.parametrize("max_repeats", [0, 1, 3])
async def test_after_max_repeats_the_next_step_must_answer(max_repeats: int) -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京")] * (max_repeats + 2) + ["answer"])
    guard = RepeatGuard(max_repeats=max_repeats)
    result = await Agent(model=model, tools=tools, hooks=[guard], max_steps=10).arun("weather?")
    choices = [r.settings.tool_choice for r in model.requests]
    assert choices == [None] * (max_repeats + 2) + ["none"]
    assert result.output == "answer" and runs == ["北京"]


async def test_state_is_per_run() -> None:
    tools, runs = weather_tools()
    agent = Agent(
        model=ScriptedModel([call("get_weather", city="北京"), "a"], cycle=True), tools=tools, hooks=[RepeatGuard()]
    )
    await agent.arun("one")
    await agent.arun("two")
    assert runs == ["北京", "北京"]


async def test_failed_calls_are_not_remembered() -> None:
    attempts: list[int] = []

    @tool(effects="read_only")
    def flaky(n: int) -> str:
        """Fails the first time."""
        attempts.append(n)
        if len(attempts) == 1:
            raise RuntimeError("temporary outage")
        return "ok"

    model = ScriptedModel([call("flaky", n=1), call("flaky", n=1), "done"])
    await Agent(model=model, tools=Toolbox([flaky]), hooks=[RepeatGuard()]).arun("go")
    assert attempts == [1, 1]
    assert list(last_results(model.requests[2]).values()) == ["ok"]


async def test_duplicates_in_one_turn_run_once() -> None:
    started = 0

    @tool(effects="read_only")
    async def slow_lookup(key: str) -> str:
        """Slow read."""
        nonlocal started
        started += 1
        await asyncio.sleep(0.01)
        return f"value of {key}"

    model = ScriptedModel([[call("slow_lookup", key="a"), call("slow_lookup", key="a")], "done"])
    await Agent(model=model, tools=Toolbox([slow_lookup]), hooks=[RepeatGuard()]).arun("go")
    results = list(last_results(model.requests[1]).values())
    assert started == 1
    assert results[0] == "value of a" and "not run again" in results[1] and results[1].startswith("value of a")


async def test_exempt_tools_always_run() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", city="北京"), "done"])
    await Agent(model=model, tools=tools, hooks=[RepeatGuard(exempt={"get_weather"})]).arun("weather?")
    assert runs == ["北京", "北京"]


async def test_invalid_arguments_are_left_to_the_loop() -> None:
    tools, runs = weather_tools()
    model = ScriptedModel([call("get_weather", town="x"), call("get_weather", town="x"), "done"])
    await Agent(model=model, tools=tools, hooks=[RepeatGuard()]).arun("weather?")
    results = [next(iter(last_results(r).values())) for r in model.requests[1:]]
    assert all("city" in text and "not run again" not in text for text in results)


def test_negative_max_repeats_is_refused() -> None:
    with pytest.raises(ValueError, match="max_repeats"):
        RepeatGuard(max_repeats=-1)


async def test_a_request_without_tools_keeps_its_tool_choice() -> None:
    """Some APIs reject tool_choice when no tools are sent, so the guard only forces when tools are offered."""

    class NoTools(Hook):
        async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
            return replace(request, tools=())

    tools, _ = weather_tools()
    model = ScriptedModel([call("get_weather", city="北京"), call("get_weather", city="北京"), "done"])
    await Agent(model=model, tools=tools, hooks=[NoTools(), RepeatGuard(max_repeats=0)]).arun("weather?")
    assert [r.settings.tool_choice for r in model.requests] == [None, None, None]
