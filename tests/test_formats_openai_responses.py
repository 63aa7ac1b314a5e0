"""The OpenAI Responses format against golden JSON written from OpenAI's function-calling and tools docs."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.responses import Response

from _golden import golden
from toolslip.errors import CannotExpress, FormatError
from toolslip.formats import openai_responses as fmt
from toolslip.messages import (
    Message,
    ModelResponse,
    ProviderPart,
    Reasoning,
    Request,
    Settings,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UseTool,
)


def load(name: str) -> dict[str, Any]:
    return golden("openai_responses", name)


def test_weather_call_output_and_instructions() -> None:
    fixture = load("weather")
    request = fmt.request_from_wire(fixture["request"])
    assert request.messages[0] == Message.system("你是一个严谨的助手。")  # instructions
    assert request.tools[0].strict is True and request.settings.parallel_tool_calls is False
    response = fmt.response_from_wire(fixture["response"])
    assert response.message.parts == (
        ToolCall(
            id="call_12345xyz",
            name="get_weather",
            arguments={"location": "Paris, France"},
            raw_arguments='{"location":"Paris, France"}',
        ),
    )
    assert response.stop_reason == "tool_use"
    followup = fmt.request_from_wire(fixture["followup"])
    assert [m.role for m in followup.messages] == ["user", "assistant", "tool"]
    assert followup.messages[2].parts == (ToolResult(call_id="call_12345xyz", content="14°C, light rain"),)
    final = fmt.response_from_wire(fixture["final"])
    assert (final.stop_reason, final.message.text) == ("end_turn", "It is 14°C with light rain in Paris.")
    assert final.usage == Usage(input_tokens=202, output_tokens=12, cache_read_tokens=128)


def test_hosted_items_and_reasoning_are_kept_verbatim() -> None:
    fixture = load("hosted_reasoning")
    request = fmt.request_from_wire(fixture["request"])
    assert [t.get("type") for t in request.extra_tools] == ["web_search_preview", "mcp"]
    assert request.settings.extra == {
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
        "store": False,
    }
    followup = fmt.request_from_wire(fixture["followup"])
    assistant = followup.messages[2]
    kinds = [p.data["type"] if isinstance(p, ProviderPart) else p.kind for p in assistant.parts]
    assert kinds == [
        "reasoning",
        "mcp_list_tools",
        "mcp_call",
        "web_search_call",
        "text",
        "text",
        "tool_call",
        "tool_call",
    ]
    item = fixture["followup"]["input"][2]
    summary, encrypted = item["summary"][0]["text"], item["encrypted_content"]
    assert assistant.parts[0] == Reasoning(text=summary, summary=True, encrypted=encrypted, source="openai-responses")
    assert assistant.tool_calls[1].arguments is None  # "not json" kept raw, so the loop can answer with an error
    assert followup.messages[3].tool_results[1].content == (Text(text="Error: the arguments are not JSON"),)
    assert followup.messages[0].role == "system"  # a developer message
    assert followup.settings.tool_choice == UseTool("save_note")
    assert followup.tools[0].strict is None  # strict: false is the neutral default


def test_incomplete_response_stops_for_max_tokens() -> None:
    response = fmt.response_from_wire(load("hosted_reasoning")["response"])
    assert (response.stop_reason, response.raw_stop_reason) == ("max_tokens", "max_output_tokens")
    assert response.usage.cache_read_tokens == 1024


def test_written_responses_validate_against_the_sdk() -> None:
    response = ModelResponse(
        message=Message.assistant("Checking.", [ToolCall(id="c1", name="fx", arguments={"a": 1})]),
        stop_reason="tool_use",
        usage=Usage(input_tokens=3, output_tokens=4, cache_read_tokens=2, cache_write_tokens=1),
        model="gpt-4.1",
        id="resp_1",
    )
    wire = fmt.response_to_wire(response)
    sdk = Response.model_validate(wire)
    assert sdk.output_text == "Checking." and sdk.usage is not None and sdk.usage.input_tokens == 6
    back = fmt.response_from_wire(sdk)
    assert (back.message.parts[0], back.stop_reason, back.usage) == (Text(text="Checking."), "tool_use", response.usage)
    truncated = fmt.response_to_wire(ModelResponse(message=Message.assistant("Par"), stop_reason="max_tokens"))
    assert (truncated["status"], truncated["incomplete_details"]) == ("incomplete", {"reason": "max_output_tokens"})


def test_strict_defaults_to_true_here_so_neutral_none_is_written_false() -> None:
    spec = ToolSpec(name="fx", description="", parameters={"type": "object"})
    assert fmt.tools_to_wire([spec])[0]["strict"] is False
    assert fmt.tools_from_wire([{"type": "function", "name": "fx", "parameters": {"type": "object"}}])[0].strict is True


def test_stop_sequences_cannot_be_expressed() -> None:
    request = Request(model="m", messages=(Message.user("hi"),), settings=Settings(stop=("END",)))
    with pytest.raises(CannotExpress, match="stop: the Responses API has no stop sequences"):
        fmt.request_to_wire(request)


def test_trailing_text_next_to_results_becomes_a_user_message() -> None:
    tool = Message(role="tool", parts=(ToolResult(call_id="c", content="ok"), Text(text="thanks")))
    assert fmt.messages_to_wire([tool]) == [
        {"type": "function_call_output", "call_id": "c", "output": "ok"},
        {"role": "user", "content": "thanks"},
    ]


def test_bad_items_name_their_path() -> None:
    with pytest.raises(FormatError, match=r"input\[1\]\.arguments: expected a string, got an object"):
        fmt.messages_from_wire(
            [{"role": "user", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]
        )
    with pytest.raises(FormatError, match=r"input\[0\]: unknown role 'robot'"):
        fmt.messages_from_wire([{"type": "message", "role": "robot", "content": "x"}])
