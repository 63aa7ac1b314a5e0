"""Typed answers (``output_type``): the seed's expense question ends in ``Expense(total_cny, per_person_cny)``
through each mode on every wire, and an answer that does not fit gets one retry naming the field, then a
named stop, never an exception.

"Every wire" here: the request and the answer travel through each format's ``request_to_wire`` /
``request_from_wire`` and ``response_to_wire`` / ``response_from_wire`` as JSON text, to the stateless
scripted demo and back (the HTTP transports against ``toolslip serve`` are in test_server_structured.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolslip import Agent, ConfigError, Message, ModelResponse, Request
from toolslip.cli.files import load_tools_file
from toolslip.core.errors import InvalidValue
from toolslip.evals import Outcome, Suite, Task, evaluate
from toolslip.evals.models import ReferenceModel
from toolslip.formats import get_format
from toolslip.model import Model
from toolslip.providers.scripted import ScriptedDemo
from toolslip.testing import ScriptedModel, StreamedModel, call, raw_call

TOOLS = load_tools_file(str(Path(__file__).resolve().parents[1] / "examples" / "expenses.py"))
QUESTION = "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY, and how much each if 4 people split it?"
WIRES = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "ollama", "openai-functions"]


class Expense(BaseModel):
    """What the trip cost, in Chinese yuan."""

    total_cny: float = Field(description="All expenses together, in CNY.")
    per_person_cny: float = Field(description="One person's share, in CNY.")
    note: str | None = None


@dataclasses.dataclass
class OverWire:
    """``inner`` behind wire format ``fmt``: every request and answer is written and read back as JSON."""

    fmt: str
    inner: Model

    @property
    def name(self) -> str:
        return f"{self.fmt}:{self.inner.name}"

    @property
    def wire(self) -> Any:
        return get_format(self.fmt)

    async def complete(self, request: Request) -> ModelResponse:
        wire = self.wire
        body = json.loads(json.dumps(wire.request_to_wire(dataclasses.replace(request, model="m"))))
        response = await self.inner.complete(wire.request_from_wire(body))
        return wire.response_from_wire(json.loads(json.dumps(wire.response_to_wire(response))))


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
@pytest.mark.parametrize("fmt", WIRES)
async def test_the_expense_question_answers_an_expense_through_each_mode_on_every_wire(fmt: str, mode: str) -> None:
    if fmt == "openai-functions" and mode == "native":
        with pytest.raises(ConfigError, match="openai-functions has no structured-output field"):
            Agent(model=OverWire(fmt, ScriptedDemo()), tools=TOOLS, output_type=Expense, output_mode=mode)
        return
    agent = Agent(model=OverWire(fmt, ScriptedDemo()), tools=TOOLS, output_type=Expense, output_mode=mode)
    result = await agent.arun(QUESTION)
    assert result.stop_reason == "completed", result.output_error
    assert result.data == Expense(total_cny=3002.6, per_person_cny=750.65)
    assert result.tool_calls == 4  # fx, fx, calc, calc ran before the answer (the final-answer call is not one)
    assert json.loads(result.output)["per_person_cny"] == 750.65


@pytest.mark.parametrize("fmt", WIRES[:-1])
def test_native_is_the_default_where_the_wire_has_a_field_and_tool_mode_elsewhere(fmt: str) -> None:
    agent = Agent(model=OverWire(fmt, ScriptedDemo()), tools=TOOLS, output_type=Expense)
    assert agent._answer is not None and agent._answer.mode == "native"
    legacy = Agent(model=OverWire("openai-functions", ScriptedDemo()), tools=TOOLS, output_type=Expense)
    assert legacy._answer is not None and legacy._answer.mode == "tool"


def test_native_mode_sends_the_strict_schema_and_the_answer_drops_its_nulls() -> None:
    model = ScriptedModel(['{"total_cny": 3002.6, "per_person_cny": 750.65, "note": null}'])
    result = Agent(model=model, output_type=Expense, output_mode="native").run(QUESTION)
    sent = model.requests[0].output
    assert sent is not None and sent.strict is True and sent.name == "Expense"
    assert sent.schema["required"] == ["total_cny", "per_person_cny", "note"]
    assert sent.schema["additionalProperties"] is False
    assert result.data == Expense(total_cny=3002.6, per_person_cny=750.65)


def test_tool_mode_lets_the_model_call_tools_first_and_closes_the_final_call() -> None:
    model = ScriptedModel(
        [call("fx", amount=320, currency="USD"), call("final_answer", total_cny=2297.6, per_person_cny=574.4)]
    )
    result = Agent(model=model, tools=TOOLS, output_type=Expense, output_mode="tool").run(QUESTION)
    assert result.data == Expense(total_cny=2297.6, per_person_cny=574.4)
    assert [t.name for t in model.requests[0].tools] == ["calc", "fx", "final_answer"]
    last = result.messages[-1]
    assert last.role == "tool" and last.tool_results[0].text == "final answer accepted"  # no dangling call


# --- what can be asked for --------------------------------------------------------------------------------


@dataclasses.dataclass
class Point:
    x: int
    y: int


class Row(TypedDict):
    city: str
    temp: float


SCHEMA = {"type": "object", "properties": {"label": {"enum": ["spam", "ham"]}}, "required": ["label"]}


@pytest.mark.parametrize(
    ("output_type", "answer", "expected"),
    [
        (Point, '{"x": 1, "y": 2}', Point(x=1, y=2)),
        (Row, '{"city": "北京", "temp": 21.5}', {"city": "北京", "temp": 21.5}),
        (list[Point], '{"value": [{"x": 1, "y": 2}]}', [Point(x=1, y=2)]),
        (Point | Expense, '{"value": {"total_cny": 1, "per_person_cny": 1}}', Expense(total_cny=1, per_person_cny=1)),
        (SCHEMA, '{"label": "ham"}', {"label": "ham"}),
    ],
    ids=["dataclass", "typeddict", "list", "union", "json-schema"],
)
@pytest.mark.parametrize("mode", ["native", "prompted"])
def test_each_kind_of_output_type_validates(output_type: Any, answer: str, expected: Any, mode: str) -> None:
    result = Agent(model=ScriptedModel([answer]), output_type=output_type, output_mode=mode).run("?")
    assert result.stop_reason == "completed", result.output_error
    assert result.data == expected


def test_prompted_mode_finds_the_json_in_prose_and_shows_the_schema_in_the_system_prompt() -> None:
    model = ScriptedModel(['Here it is:\n```json\n{"x": 3, "y": 4}\n```'])
    result = Agent(model=model, system="Be brief.", output_type=Point, output_mode="prompted").run("?")
    assert result.data == Point(x=3, y=4)
    system = model.requests[0].messages[0]
    assert system.role == "system" and system.text.startswith("Be brief.") and '"x"' in system.text


# --- answers that do not fit: one retry naming the field, then a named stop -----------------------------


REFUSAL = ModelResponse(message=Message.assistant("I can't help with that."), stop_reason="refusal")


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
@pytest.mark.parametrize(
    ("bad", "stop", "named"),
    [
        ('{"total_cny": 3002.6, "per_person_cny": ', "output_invalid", "not valid JSON"),
        ('{"total_cny": "a lot", "per_person_cny": 750.65}', "output_invalid", "field 'total_cny'"),
        (REFUSAL, "refusal", "refused"),
    ],
    ids=["invalid-json", "wrong-type", "refusal"],
)
def test_a_bad_answer_gets_one_retry_then_the_named_stop(mode: str, bad: Any, stop: str, named: str) -> None:
    turn = bad
    if mode == "tool" and isinstance(bad, str):
        turn = _final_call(bad)
    model = ScriptedModel([turn, turn])
    result = Agent(model=model, output_type=Expense, output_mode=mode).run(QUESTION)  # raises nothing
    assert result.stop_reason == stop
    assert result.data is None and result.output_error is not None and named in result.output_error
    assert len(model.requests) == 2  # exactly one retry
    feedback = model.requests[1].messages[-1]
    assert named in feedback.text or named in "".join(r.text for r in feedback.tool_results)
    assert feedback.role == ("tool" if mode == "tool" and isinstance(bad, str) else "user")


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
def test_the_retry_can_succeed(mode: str) -> None:
    wrong = '{"total_cny": "a lot", "per_person_cny": 750.65}'
    right = '{"total_cny": 3002.6, "per_person_cny": 750.65}'
    turns = [_final_call(wrong), _final_call(right)] if mode == "tool" else [wrong, right]
    result = Agent(model=ScriptedModel(turns), output_type=Expense, output_mode=mode).run(QUESTION)
    assert result.stop_reason == "completed" and result.data == Expense(total_cny=3002.6, per_person_cny=750.65)
    assert result.output_error is None


def test_output_retries_zero_stops_at_the_first_bad_answer() -> None:
    model = ScriptedModel(['{"total_cny": "a lot"}'])
    result = Agent(model=model, output_type=Expense, output_mode="native", output_retries=0).run(QUESTION)
    assert result.stop_reason == "output_invalid" and len(model.requests) == 1
    assert "field 'per_person_cny': Field required" in (result.output_error or "")


def test_an_invalid_final_call_runs_the_turns_other_calls_and_says_what_to_fix() -> None:
    model = ScriptedModel(
        [
            [call("fx", amount=320, currency="USD"), call("final_answer", total_cny="x", per_person_cny=1)],
            call("final_answer", total_cny=2297.6, per_person_cny=574.4),
        ]
    )
    result = Agent(model=model, tools=TOOLS, output_type=Expense, output_mode="tool").run(QUESTION)
    assert result.data == Expense(total_cny=2297.6, per_person_cny=574.4)
    fx_result, final_result = model.requests[1].messages[-1].tool_results
    assert fx_result.text == "320 USD = 2297.6 CNY" and final_result.is_error
    assert "field 'total_cny'" in final_result.text


def test_types_that_cannot_be_an_answer_fail_when_the_agent_is_made() -> None:
    with pytest.raises(ConfigError, match="cannot become a JSON Schema"):
        Agent(model=ScriptedModel([]), output_type=Opaque, output_mode="tool")
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        Agent(model=ScriptedModel([]), output_type={"type": "objekt"}, output_mode="tool")
    with pytest.raises(ConfigError, match="output_mode must be one of"):
        Agent(model=ScriptedModel([]), output_type=Point, output_mode="json")  # type: ignore[arg-type]
    # A tool is not a type (a traceback inside pydantic before), and a dict of data is no schema: with no
    # schema keyword, jsonschema accepted it as a schema that fits anything, and the run answered null.
    for not_a_type in (list(TOOLS)[0], {"USD": 7.18, "JPY": 0.047}):
        with pytest.raises(InvalidValue, match="output_type must be a type"):
            Agent(model=ScriptedModel([]), output_type=not_a_type, output_mode="tool")  # type: ignore[arg-type]


class Opaque:
    """A class pydantic has no schema for."""


def _final_call(arguments: str) -> Any:
    return raw_call("final_answer", arguments)


# --- eval tasks score the value -----------------------------------------------------------------------------


def test_an_eval_task_scores_the_typed_answer() -> None:
    def check(o: Outcome) -> None:
        assert o.data == Expense(total_cny=3002.6, per_person_cny=750.65), o.data

    right = call("final_answer", total_cny=3002.6, per_person_cny=750.65)
    wrong = call("final_answer", total_cny=3002.6, per_person_cny=3002.6)
    suite = Suite(
        name="typed",
        tasks=[
            Task(id="right", prompt=QUESTION, check=check, output_type=Expense, reference=[right]),
            Task(id="wrong", prompt=QUESTION, check=check, output_type=Expense, reference=[wrong]),
        ],
    )
    records = asyncio.run(evaluate(suite, [ReferenceModel()], k=1))
    assert {r.task: r.reward for r in records} == {"right": 1.0, "wrong": 0.0}


def test_a_streamed_answer_is_validated_like_a_whole_one() -> None:
    events: list[Any] = []
    model = StreamedModel(ScriptedModel(['{"total_cny": 3002.6, "per_person_cny": 750.65}']), chunk_size=5)
    agent = Agent(model=model, output_type=Expense, output_mode="native", stream=True)
    result = asyncio.run(agent.arun(QUESTION, on_event=events.append))
    assert result.data == Expense(total_cny=3002.6, per_person_cny=750.65)
    assert sum(type(e).__name__ == "TextDelta" for e in events) > 5  # it did stream
