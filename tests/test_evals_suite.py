"""Suites, trajectory assertions and how one trial is classified, with scripted models."""

from pathlib import Path

import pytest

from toolslip import ConfigError, Message, ModelResponse, ProviderError, Request, tool
from toolslip.evals import Outcome, Suite, Task, at_most_steps, called, load_suite, never_called, run_trial
from toolslip.testing import FunctionModel, ScriptedModel, Turn, call, reply


@tool(effects="read_only")
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _sum_check(o: Outcome) -> None:
    called(o, "add", a=2, b=3)
    assert "5" in o.text, "the answer should say 5"


TASK = Task(id="sum", prompt="2+3?", tools=[add], check=_sum_check)
SUITE = Suite(name="t", tasks=[TASK], max_steps=3)


async def _trial(model: object, task: Task = TASK, suite: Suite = SUITE) -> object:
    return await run_trial(suite, task, model, trial=0, attempt=0, seed=1)  # type: ignore[arg-type]


async def _play(*turns: Turn) -> object:
    return await _trial(ScriptedModel(list(turns)))


async def test_a_right_answer_passes() -> None:
    record = await _play(call("add", a=2, b=3), reply("It is 5."))
    assert (record.reason, record.reward, record.steps, record.tool_calls) == ("pass", 1.0, 2, 1)
    assert [m["role"] for m in record.messages] == ["user", "assistant", "tool", "assistant"]


async def test_failures_are_grouped_by_reason() -> None:
    wrong = await _play(call("add", a=2, b=2), reply("It is 4."))
    assert wrong.reason == "wrong_state"
    assert "expected a call add(a=2, b=3); calls made: add(a=2, b=2)" in wrong.detail
    tool_error = await _play(call("add", a="two", b=3), reply("I could not add."))
    assert (tool_error.reason, tool_error.tool_errors) == ("tool_errors", 1)
    looping = await _trial(ScriptedModel([call("add", a=1, b=1)], cycle=True))
    assert (looping.reason, looping.steps) == ("step_limit", 3)
    refused = await _trial(
        FunctionModel(lambda r: ModelResponse(message=Message.assistant("no"), stop_reason="refusal"))
    )
    assert refused.reason == "stopped"


async def test_provider_errors_and_crashes_are_not_scored() -> None:
    def outage(request: Request) -> Turn:
        raise ProviderError("overloaded", status=529, retryable=True)

    down = await _trial(FunctionModel(outage))
    assert (down.reason, down.scored) == ("provider_error", False)
    assert "status 529" in down.detail
    exhausted = await _play(call("add", a=2, b=3))  # the script ends before the answer
    assert (exhausted.reason, exhausted.scored) == ("crash", False)
    assert "ScriptExhausted" in exhausted.detail
    broken = Task(id="sum", prompt="2+3?", tools=[add], check=lambda o: {}["missing"])
    crashed = await _trial(ScriptedModel([reply("5")]), task=broken)
    assert crashed.reason == "crash" and "KeyError" in crashed.detail


async def test_check_may_return_a_bool_or_a_partial_reward() -> None:
    half = Task(id="sum", prompt="2+3?", tools=[add], check=lambda o: 0.5)
    record = await _trial(ScriptedModel([reply("5")]), task=half)
    assert (record.reward, record.reason, record.detail) == (0.5, "wrong_state", "the check returned 0.5")
    nearly = Task(id="sum", prompt="2+3?", tools=[add], check=lambda o: 1 - 1e-7)
    assert (await _trial(ScriptedModel([reply("5")]), task=nearly)).reason == "pass"


async def test_a_bare_assert_reports_its_line(tmp_path: Path) -> None:
    # pytest rewrites asserts in test files, so the suite lives in a file of its own, as a user's would
    file = tmp_path / "bare.py"
    file.write_text(
        "from toolslip.evals import Task\n\n"
        "def check(o):\n    assert o.steps > 5\n\n"
        "t = Task(id='a', prompt='q', check=check)\n"
    )
    suite = load_suite(str(file))
    record = await _trial(ScriptedModel([reply("5")]), task=suite.tasks[0], suite=suite)
    assert record.detail == "assertion failed at bare.py:4: assert o.steps > 5"


class Counter:
    def __init__(self) -> None:
        self.value = 0

        @tool(effects="side_effect")
        def bump() -> int:
            """Add one to the counter."""
            self.value += 1
            return self.value

        self.tools = [bump]


async def test_each_trial_gets_a_fresh_environment() -> None:
    task = Task(id="bump", prompt="bump once", env=Counter, check=lambda o: o.env.value == 1)
    suite = Suite(name="t", tasks=[task])
    for _ in range(3):  # with shared state the second trial would see 2
        record = await _trial(ScriptedModel([call("bump"), reply("done")]), task=task, suite=suite)
        assert record.reason == "pass"


def test_trajectory_helpers_show_what_the_agent_did() -> None:
    from toolslip.loop import RunResult

    messages = [Message.user("q"), Message.assistant(calls=[call("add", a=1, b=2)]), Message.assistant("3")]
    o = Outcome(result=RunResult(output="3", stop_reason="completed", steps=2, messages=messages))
    assert called(o, "add", a=1).name == "add"
    with pytest.raises(AssertionError, match=r"expected a call sub; calls made: add\(a=1, b=2\)"):
        called(o, "sub")
    with pytest.raises(AssertionError, match="add must not be called"):
        never_called(o, "add")
    never_called(o, "sub")
    at_most_steps(o, 2)
    with pytest.raises(AssertionError, match="took 2 steps, at most 1 allowed"):
        at_most_steps(o, 1)


def test_bad_suites_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="give either tools or env, not both"):
        Task(id="x", prompt="p", tools=[add], env=Counter, check=lambda o: True)
    with pytest.raises(ConfigError, match="two tasks are named 'sum'"):
        Suite(name="s", tasks=[TASK, TASK])
    with pytest.raises(ConfigError, match="does not exist"):
        load_suite(str(tmp_path / "nope.py"))
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ConfigError, match="defines no Suite and no Task"):
        load_suite(str(empty))
    broken = tmp_path / "broken.py"
    broken.write_text("import os\n\nraise RuntimeError('boom')\n")
    with pytest.raises(ConfigError, match=r"broken.py \(line 3\): RuntimeError: boom"):
        load_suite(str(broken))


def test_a_file_of_tasks_becomes_a_suite_named_after_it(tmp_path: Path) -> None:
    file = tmp_path / "mini.py"
    file.write_text(
        "from toolslip.evals import Task\n"
        "a = Task(id='a', prompt='hi', check=lambda o: True)\n"
        "b = Task(id='b', prompt='hi', check=lambda o: True)\n"
    )
    suite = load_suite(str(file))
    assert (suite.name, [t.id for t in suite.tasks], suite.path) == ("mini", ["a", "b"], str(file.resolve()))


def test_the_example_suite_accepts_its_reference_answers() -> None:
    import asyncio

    from toolslip.evals import ReferenceModel, evaluate

    suite = load_suite(str(Path(__file__).parents[1] / "examples" / "suite_expenses.py"))
    records = asyncio.run(evaluate(suite, [ReferenceModel()], k=2))
    assert {(r.task, r.reason) for r in records} == {(t.id, "pass") for t in suite.tasks}
