"""Concurrency from effects, the agent-wide cap, output limits, and the provider-side serial option."""

from __future__ import annotations

import asyncio

from toolslip import Agent, Toolbox, tool
from toolslip.effects import Effect, effects_from_mcp_annotations
from toolslip.serial import SerialSideEffects
from toolslip.testing import ScriptedModel, call


def test_a_write_is_a_barrier_between_the_reads_around_it() -> None:
    log: list[str] = []

    @tool(effects="read_only")
    async def read(name: str) -> str:
        """Read."""
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        log.append(f"end {name}")
        return name

    @tool(effects="side_effect")
    async def write(name: str) -> str:
        """Write."""
        log.append(f"start {name}")
        await asyncio.sleep(0.01)
        log.append(f"end {name}")
        return name

    turn = [call("read", name="r1"), call("read", name="r2"), call("write", name="w"), call("read", name="r3")]
    Agent(model=ScriptedModel([turn, "ok"]), tools=Toolbox([read, write])).run("q")
    assert set(log[:2]) == {"start r1", "start r2"}  # the two reads before the write overlap
    assert log[4:] == ["start w", "end w", "start r3", "end r3"]  # the write runs alone, the later read after it


def test_max_concurrency_caps_tool_executions_across_runs_and_event_loops() -> None:
    running = peak = 0

    @tool(effects="read_only")
    async def probe(i: int) -> str:
        """Probe."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return str(i)

    turn = [call("probe", i=i) for i in range(6)]
    agent = Agent(model=ScriptedModel([turn, "ok"], cycle=True), tools=Toolbox([probe]), max_concurrency=2)
    agent.run("first")  # asyncio.run: one event loop ...
    agent.run("second")  # ... and another: the cap must not be bound to the first
    assert peak == 2

    async def two_runs_at_once() -> None:
        await asyncio.gather(agent.arun("a"), agent.arun("b"))

    peak = 0
    asyncio.run(two_runs_at_once())
    assert peak == 2


def test_long_output_is_truncated_with_a_marker_the_model_sees() -> None:
    @tool(effects="read_only", max_output_chars=10)
    def dump() -> str:
        """Dump."""
        return "x" * 25

    model = ScriptedModel([call("dump"), "ok"])
    Agent(model=model, tools=Toolbox([dump])).run("q")
    seen = model.requests[1].messages[-1].tool_results[0].text
    assert seen == "x" * 10 + "\n[... output truncated: 15 more characters not shown]"


def test_serial_side_effects_turns_off_parallel_calls_only_when_a_side_effect_is_offered() -> None:
    @tool(effects="read_only")
    def look() -> str:
        """Look."""
        return "ok"

    @tool(effects=["side_effect"])
    def act() -> str:
        """Act."""
        return "done"

    @tool(effects=["side_effect", "idempotent"])
    def put() -> str:
        """Put."""
        return "put"

    for tools, expected in [([look], None), ([look, put], None), ([look, act], False)]:
        model = ScriptedModel(["ok"])
        Agent(model=model, tools=Toolbox(tools), hooks=[SerialSideEffects()]).run("q")
        assert model.requests[0].settings.parallel_tool_calls is expected


def test_mcp_annotations_map_to_effects_with_mcp_defaults() -> None:
    assert effects_from_mcp_annotations({"readOnlyHint": True}) == {Effect.READ_ONLY}
    assert effects_from_mcp_annotations(None) == {Effect.SIDE_EFFECT, Effect.DESTRUCTIVE, Effect.EGRESS}
    closed = {"destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    assert effects_from_mcp_annotations(closed) == {Effect.SIDE_EFFECT, Effect.IDEMPOTENT}
