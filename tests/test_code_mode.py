"""Code mode: the model answers with a program; each call it makes goes through the loop's own path.

The programs run in the real sandbox (pydantic-monty's worker process); the model is scripted.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from toolslip import Agent, RunContext, Toolbox, tool
from toolslip.core.events import Event, ToolFinished, ToolStarted
from toolslip.core.messages import ToolResult
from toolslip.testing import ScriptedModel, StreamedModel, call, reply

pytest.importorskip("pydantic_monty")


@tool(effects="read_only", trusted_output=True)
def rate(currency: str) -> float:
    """How many CNY one unit of ``currency`` buys.

    Args:
        currency: ISO code, e.g. USD.
    """
    return {"USD": 7.18, "JPY": 0.047}[currency]


NOTES: list[str] = []


@tool
def save_note(text: str) -> str:
    """Save a note for the user."""
    NOTES.append(text)
    return "saved"


@tool(effects="read_only", trusted_output=True)
def broken(x: int) -> int:
    """Always fails."""
    raise ValueError(f"no data for {x}")


TOOLS = Toolbox([rate, save_note, broken])

SEED = """total = 320 * rate("USD") + 15000 * rate(currency="JPY")
print("total", round(total, 2))
round(total / 4, 2)"""


def program(code: str) -> object:
    return call("run_python", code=code)


def run(turns: list[object], tools: Toolbox = TOOLS, **kwargs: object) -> tuple[object, ScriptedModel, list[Event]]:
    model = ScriptedModel(list(turns))  # type: ignore[arg-type]
    events: list[Event] = []
    kwargs.setdefault("mode", "code")
    result = Agent(model=model, tools=tools, **kwargs).run("q", on_event=events.append)  # type: ignore[arg-type]
    return result, model, events


def results(result: object) -> list[ToolResult]:
    return [p for m in result.messages for p in m.tool_results]  # type: ignore[attr-defined]


def test_the_model_is_offered_one_program_tool_listing_the_tools_as_python() -> None:
    # debug=True checks every request in every wire format: the program call and its result pair up.
    result, model, _ = run([program(SEED), reply("3002.6 in total, 750.65 each")], debug=True)
    (offered,) = model.requests[0].tools
    assert offered.name == "run_python"
    assert (
        'def rate(currency: str) -> float:\n    """How many CNY one unit of ``currency`` buys.' in offered.description
    )
    assert "currency: ISO code, e.g. USD." in offered.description
    assert "def save_note(text: str) -> str:" in offered.description
    assert results(result)[0].content == "total 3002.6\nResult: 750.65"
    assert result.output == "3002.6 in total, 750.65 each"  # type: ignore[attr-defined]


def test_each_inner_call_is_a_tool_call_with_events_and_a_deterministic_id() -> None:
    NOTES.clear()
    code = 'r = rate("USD")\nsave_note("rate " + str(r))\nr'
    result, _, events = run([program(code), reply("ok")])
    started = [e.call for e in events if isinstance(e, ToolStarted)]
    outer = started[0].id
    assert [(c.id, c.name, dict(c.arguments or {})) for c in started] == [
        (outer, "run_python", {"code": code}),
        (f"{outer}/0", "rate", {"currency": "USD"}),
        (f"{outer}/1", "save_note", {"text": "rate 7.18"}),
    ]
    finished = [e.result.content for e in events if isinstance(e, ToolFinished)]
    assert finished == ["7.18", "saved", "Result: 7.18"]
    assert NOTES == ["rate 7.18"]


def test_a_failed_call_raises_at_the_call_and_the_program_may_catch_it() -> None:
    code = "try:\n    broken(3)\nexcept RuntimeError as e:\n    print('caught:', e)\n'after'"
    result, _, _ = run([program(code), reply("ok")])
    assert results(result)[0].content == "caught: broken: broken failed: ValueError: no data for 3\nResult: after"


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("x = (", "SyntaxError"),
        ("1/0", "ZeroDivisionError"),
        ("undefined_tool(1)", "NameError"),
        ("broken(1)", "RuntimeError: broken: broken failed: ValueError: no data for 1"),
        ("open('/etc/passwd').read()", "PermissionError"),
        ("import socket", "ModuleNotFoundError"),
        ("import os\nos.listdir('/')", "PermissionError"),
        ("while True:\n    pass", "TimeoutError"),
        ("x = [0] * 10**9", "MemoryError: memory limit exceeded"),
        ("rate('USD', 'JPY')", "TypeError: rate() takes 1 positional arguments but 2 were given"),
    ],
)
def test_a_failing_program_goes_back_as_an_error_the_model_can_correct(code: str, expected: str) -> None:
    from toolslip.code import CodeMode, SandboxLimits

    mode = CodeMode(SandboxLimits(seconds=0.5))
    result, model, _ = run([program(code), program("rate('USD')"), reply("7.18")], mode=mode)
    first, second = results(result)
    assert first.is_error and "The program failed" in first.text and expected in first.text, first.text
    assert not second.is_error and second.text == "Result: 7.18"
    assert result.output == "7.18"  # type: ignore[attr-defined]


def test_the_error_names_the_calls_that_ran_and_what_they_gave_so_the_model_does_not_repeat_them() -> None:
    NOTES.clear()
    result, _, _ = run([program("save_note('a')\nx = rate('USD')\nbroken(3)"), reply("ok")])
    text = results(result)[0].text
    assert (
        "no data for 3" in text and "do not repeat them):\n- save_note: saved\n- rate: 7.18\n- broken: failed" in text
    )
    assert NOTES == ["a"]


def test_the_step_limit_counts_programs() -> None:
    result, _, _ = run([program("rate('USD')"), program("rate('JPY')"), program("rate('USD')")], max_steps=2)
    assert result.stop_reason == "max_steps" and result.steps == 2  # type: ignore[attr-defined]


def test_gathered_read_only_calls_run_concurrently_and_writes_run_alone() -> None:
    spans: list[tuple[str, float, float]] = []

    @tool(effects="read_only", trusted_output=True)
    async def slow_read(key: str) -> str:
        """Read slowly."""
        start = time.perf_counter()
        await asyncio.sleep(0.3)
        spans.append((key, start, time.perf_counter()))
        return key

    @tool
    async def slow_write(key: str) -> str:
        """Write slowly."""
        start = time.perf_counter()
        await asyncio.sleep(0.2)
        spans.append((key, start, time.perf_counter()))
        return "ok"

    code = (
        "import asyncio\n"
        "a, b, c = await asyncio.gather(slow_read('a'), slow_read('b'), slow_read('c'))\n"
        "w1, w2 = await asyncio.gather(slow_write('w1'), slow_write('w2'))\n"
        "a + b + c"
    )
    result, _, _ = run([program(code), reply("ok")], tools=Toolbox([slow_read, slow_write]))
    assert results(result)[0].text == "Result: abc"
    by = {k: (s, e) for k, s, e in spans}
    reads = [by[k] for k in "abc"]
    assert max(s for s, _ in reads) < min(e for _, e in reads)  # all three overlapped
    assert by["w2"][0] >= by["w1"][1]  # the second write started after the first ended


def test_code_mode_streams_like_tool_mode() -> None:
    model = StreamedModel(ScriptedModel([program(SEED), reply("750.65 each")]), chunk_size=4)
    events: list[Event] = []
    result = Agent(model=model, tools=TOOLS, mode="code", stream=True).run("q", on_event=events.append)
    assert result.output == "750.65 each"
    assert results(result)[0].text == "total 3002.6\nResult: 750.65"


def test_a_program_in_a_markdown_fence_runs() -> None:
    result, _, _ = run([program("```python\nrate('JPY')\n```"), reply("ok")])
    assert results(result)[0].text == "Result: 0.047"


def test_an_unknown_mode_is_one_clear_sentence() -> None:
    from toolslip import ConfigError

    with pytest.raises(ConfigError, match="mode must be 'tool' or 'code', got 'python'"):
        Agent(model=ScriptedModel([]), tools=TOOLS, mode="python")  # type: ignore[arg-type]


def test_a_tool_called_from_a_program_gets_the_run_context_made_for_its_inner_call() -> None:
    seen: list[tuple[object, str]] = []

    @tool(effects="read_only")
    def my_orders(ctx: RunContext[str], limit: int) -> list[str]:
        """The asking user's orders."""
        assert ctx.call is not None
        seen.append((ctx.deps, ctx.call.id))
        return [f"{ctx.deps}-{n}" for n in range(limit)]

    model = ScriptedModel([program("len(my_orders(2)) + len(my_orders(limit=1))"), reply("3")])
    result = Agent(model=model, tools=Toolbox([my_orders]), mode="code").run("q", deps="ada")
    outer = result.messages[1].tool_calls[0].id
    assert seen == [("ada", f"{outer}/0"), ("ada", f"{outer}/1")]
    assert "ctx" not in model.requests[0].tools[0].description
    assert results(result)[0].text == "Result: 3"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic", "gemini"])
async def test_code_mode_runs_over_every_wire_through_toolslip_serve(protocol: str, stream: bool) -> None:
    """The program is one tool call's argument: each wire carries it, streamed or not, with the official
    transports talking to ``toolslip serve`` over loopback."""
    from toolslip.providers import resolve_model
    from toolslip.providers.anthropic import AnthropicModel
    from toolslip.server import serve
    from toolslip.testing import FunctionModel, last_results

    def script(request: object) -> object:
        done = list(last_results(request).values())  # type: ignore[arg-type]
        return reply(f"each pays {done[0].split()[-1]}") if done else program(SEED)

    async with serve(FunctionModel(script)) as url:  # type: ignore[arg-type]
        model = (
            AnthropicModel("claude", base_url=url, api_key="sk-ant-local")
            if protocol == "anthropic"
            else resolve_model(f"{protocol}:m@{url}" + ("" if protocol == "gemini" else "/v1"))
        )
        agent = Agent(model=model, tools=TOOLS, mode="code", stream=stream)
        result = await agent.arun("320 USD and 15000 JPY in CNY, split by 4?")
        await model.aclose()  # type: ignore[attr-defined]
    assert results(result)[0].text == "total 3002.6\nResult: 750.65"
    assert result.output == "each pays 750.65"


def test_a_program_run_again_after_a_fix_gets_its_repeated_calls_values_without_the_guards_note() -> None:
    from toolslip import RepeatGuard

    failing = 'usd = rate("USD")\nprint(usd / undefined_name)'
    fixed = 'usd = rate("USD")\nprint(round(usd * 320, 2))'
    result, _, events = run([program(failing), program(fixed), reply("2297.6 CNY")], hooks=[RepeatGuard()])
    outputs = [e.result.text for e in events if isinstance(e, ToolFinished) and e.call.name == "run_python"]
    assert "NameError" in outputs[0]
    assert outputs[1] == "2297.6"  # the remembered 7.18 reached the program as a number, with no note in it


_ONE_PROGRAM = """
import toolslip
from toolslip.testing import ScriptedModel, call, reply
model = ScriptedModel([call("run_python", code="print(1 + 2)"), reply("3")])
print(toolslip.run(model, "1 + 2?", [], mode="code").output)
"""


def test_a_process_that_ran_a_program_exits_cleanly() -> None:
    """The sandbox pool's objects, left to the collector at interpreter exit, aborted the process (SIGABRT, exit
    134) after the right output: 4 of 30 runs of the docs' code-mode example, against 0 of 30 once collected when
    the program ends (run interleaved). Thirty runs of this test failed 3 times in 3 on the old code."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    codes = [
        subprocess.run([sys.executable, "-c", _ONE_PROGRAM], env=env, capture_output=True, timeout=120).returncode
        for _ in range(30)
    ]
    assert codes == [0] * 30
