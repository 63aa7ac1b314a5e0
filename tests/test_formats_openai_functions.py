"""Legacy function calling (June 2023) against golden JSON from OpenAI's function-calling announcement."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from _golden import golden
from toolslip.errors import CannotExpress, FormatError
from toolslip.formats import openai_functions as fmt
from toolslip.messages import Message, ModelResponse, Request, Settings, ToolCall, ToolResult, ToolSpec, UseTool

PARALLEL = (
    Message.user("Weather in Paris and Rome?"),
    Message.assistant(
        "", [ToolCall(id="a", name="w", arguments={"c": "Paris"}), ToolCall(id="b", name="w", arguments={"c": "Rome"})]
    ),
    Message.tool([ToolResult(call_id="b", content="sun"), ToolResult(call_id="a", content="rain")]),
)


def load(name: str) -> dict[str, Any]:
    return golden("openai_functions", name)


def test_calls_get_deterministic_ids_and_results_pair_by_name() -> None:
    fixture = load("expenses")
    first = fmt.request_from_wire(fixture["request"])
    again = fmt.request_from_wire(fixture["request"])
    calls = [c for m in first.messages for c in m.tool_calls]
    results = [r for m in first.messages for r in m.tool_results]
    assert [c.id for c in calls] == [c.id for m in again.messages for c in m.tool_calls]
    assert len({c.id for c in calls}) == 3 and all(c.id.startswith("call_") for c in calls)
    assert [r.call_id for r in results] == [c.id for c in calls]
    assert [r.name for r in results] == ["fx", "fx", "calc"]
    assert first.settings.tool_choice == UseTool("calc")
    assert [t.name for t in first.tools] == ["fx", "calc"]


def test_response_reads_function_call() -> None:
    wire = load("weather")["response"]
    response = fmt.response_from_wire(ChatCompletion.model_validate(wire))
    assert response.stop_reason == "tool_use"
    assert response.message.tool_calls[0].arguments == {"location": "Boston, MA"}
    assert fmt.response_to_wire(response) == wire


def test_parallel_calls_are_refused_unless_split() -> None:
    with pytest.raises(
        CannotExpress, match=r"messages\[1\]\.tool_calls: 2 calls in one assistant message.*--split-calls"
    ):
        fmt.messages_to_wire(PARALLEL)
    wire = fmt.messages_to_wire(PARALLEL, split=True)
    assert [(m["role"], m.get("name"), m.get("content")) for m in wire] == [
        ("user", None, "Weather in Paris and Rome?"),
        ("assistant", None, None),
        ("function", "w", "rain"),  # each call followed by its own result, in call order
        ("assistant", None, None),
        ("function", "w", "sun"),
    ]
    back = fmt.messages_from_wire(wire)
    assert [r.content for m in back for r in m.tool_results] == ["rain", "sun"]


def test_what_legacy_cannot_say_raises() -> None:
    request = Request(model="m", messages=(Message.user("x"),), settings=Settings(tool_choice="required"))
    with pytest.raises(CannotExpress, match='tool_choice: legacy function calling has no "required"'):
        fmt.request_to_wire(request)
    two = ModelResponse(message=PARALLEL[1], stop_reason="tool_use")
    with pytest.raises(CannotExpress, match="2 calls in one response"):
        fmt.response_to_wire(two)
    with pytest.raises(FormatError, match=r"messages\[0\]: a result of 'w' with no earlier call"):
        fmt.messages_from_wire([{"role": "function", "name": "w", "content": "x"}])


def test_strict_has_no_spelling_and_is_left_out() -> None:
    spec = ToolSpec(name="w", description="d", parameters={"type": "object"}, strict=True)
    assert fmt.tools_to_wire([spec]) == [{"name": "w", "description": "d", "parameters": {"type": "object"}}]


def test_a_replys_call_keeps_its_id_in_the_next_request() -> None:
    fixture = load("weather")
    reply = fmt.response_from_wire(fixture["response"])
    followup = fmt.request_from_wire(fixture["followup"])
    assert followup.messages[1].tool_calls[0].id == reply.message.tool_calls[0].id
    assert followup.messages[2].tool_results[0].call_id == reply.message.tool_calls[0].id
    twice = [{"role": "assistant", "content": None, "function_call": {"name": "w", "arguments": "{}"}}] * 2
    first, second = (m.tool_calls[0].id for m in fmt.messages_from_wire(twice))
    assert first != second  # the same call made again gets its own id
