"""The Anthropic Messages format against golden JSON written from Anthropic's tool-use docs."""

from __future__ import annotations

import json
from typing import Any

import anthropic.types
import pytest

from _golden import golden
from toolslip.errors import FormatError
from toolslip.formats import anthropic as fmt
from toolslip.messages import (
    Image,
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
    return golden("anthropic", name)


def test_weather_tool_use_carries_an_object() -> None:
    fixture = load("weather")
    request = fmt.request_from_wire(fixture["request"])
    assert (request.settings.tool_choice, request.settings.parallel_tool_calls) == ("auto", False)
    assert request.tools[0].parameters["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    response = fmt.response_from_wire(fixture["response"])
    assert response.message.parts == (
        Text(text="我来查一下北京的天气。"),
        ToolCall(id="toolu_01A09q90qw90lq917835lq9", name="get_weather", arguments={"city": "北京", "unit": "celsius"}),
    )
    assert response.stop_reason == "tool_use"
    followup = fmt.request_from_wire(fixture["followup"])
    assert [m.role for m in followup.messages] == ["user", "assistant", "tool"]
    assert followup.messages[1] == response.message  # the reply goes back into the history unchanged
    assert followup.messages[2].tool_results[0].call_id == "toolu_01A09q90qw90lq917835lq9"


def test_expenses_system_and_usage() -> None:
    fixture = load("expenses")
    request = fmt.request_from_wire(fixture["request"])
    assert request.messages[0] == Message.system(fixture["request"]["system"])
    calls = [c for m in request.messages for c in m.tool_calls]
    assert [c.name for c in calls] == ["fx", "fx", "calc", "calc"]
    assert [r.content for m in request.messages for r in m.tool_results][-1] == "750.65"
    response = fmt.response_from_wire(fixture["response"])
    assert response.usage == Usage(input_tokens=150, output_tokens=31, cache_read_tokens=256, cache_write_tokens=120)
    assert response.message.text == "一共 3002.6 元人民币，4 个人平摊每人 750.65 元。"


def test_parallel_results_errors_and_trailing_text() -> None:
    fixture = load("parallel_error")
    request = fmt.request_from_wire(fixture["request"])
    tool = request.messages[2]
    assert tool.role == "tool"
    assert [(r.call_id, r.is_error) for r in tool.tool_results] == [
        ("toolu_bj", False),
        ("toolu_sh", False),
        ("toolu_ny", True),
    ]
    assert tool.parts[-1] == Text(text="纽约那个失败了就不用再试。")
    assert request.settings == Settings(
        max_tokens=300, tool_choice="required", stop=("\n\nHuman:",), extra={"metadata": {"user_id": "li"}}
    )
    assert request.tools[0].extra == {"anthropic": {"fields": {"cache_control": {"type": "ephemeral"}}}}
    assert len(fmt.response_from_wire(fixture["response"]).message.tool_calls) == 2


def test_thinking_server_tools_and_images_survive_byte_for_byte() -> None:
    fixture = load("thinking_images")
    body = fixture["request"]
    request = fmt.request_from_wire(body)
    system, user, assistant, tool = request.messages
    assert system.text == "You look at pictures and the weather.Long reference material..."
    assert request.extra_tools == (body["tools"][1],)
    assert user.parts[0] == Image(media_type="image/png", data=body["messages"][0]["content"][0]["source"]["data"])
    assert user.parts[1] == Image(
        media_type="image/jpeg",
        url="https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg",
    )
    thinking, redacted, call = assistant.parts
    block = body["messages"][1]["content"][0]
    assert thinking == Reasoning(text=block["thinking"], signature=block["signature"], source="anthropic")
    redacted_block = body["messages"][1]["content"][1]
    assert redacted == Reasoning(encrypted=redacted_block["data"], source="anthropic") and isinstance(call, ToolCall)
    wire_again = fmt.request_to_wire(request)
    assert json.dumps(wire_again["messages"][1]["content"][:2]) == json.dumps(body["messages"][1]["content"][:2])
    assert tool.tool_results[0].content == (
        Text(text="18°C, light rain. Radar:"),
        Image(media_type="image/jpeg", data="/9j/4AAQSkZJRgABAQ=="),
    )
    response = fmt.response_from_wire(fixture["response"])
    assert [type(p).__name__ for p in response.message.parts] == [
        "Reasoning",
        "ProviderPart",
        "ProviderPart",
        "Text",
        "Text",
    ]
    assert response.message.text == "It is raining in Paris; there is a jazz festival tonight."
    assert response.usage.server_tool_use == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert response.usage.cache_read_tokens == 1800


def test_neutral_history_is_spelled_the_anthropic_way() -> None:
    request = Request(
        model="m",
        messages=(
            Message.system("S1"),
            Message.user("Q"),
            Message.assistant("", [ToolCall(id="c1", name="f", arguments=None, raw_arguments="{oops")]),
            Message.tool([ToolResult(call_id="c1", content="bad JSON", is_error=True)]),
            Message.system("S2"),  # later in the conversation: it stays there, as role "system"
            Message(role="user", parts=(Text(text="look"), ProviderPart(format="openai-chat", data={"type": "x"}))),
        ),
        tools=(ToolSpec(name="f", description="does f", parameters={"type": "object"}, strict=True),),
        settings=Settings(tool_choice=UseTool("f"), parallel_tool_calls=False, stop=("END",)),
    )
    assert fmt.request_to_wire(request) == {
        "model": "m",
        "max_tokens": 1024,
        "system": "S1",
        "messages": [
            {"role": "user", "content": "Q"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}]},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "bad JSON", "is_error": True}],
            },
            {"role": "system", "content": "S2"},
            {"role": "user", "content": [{"type": "text", "text": "look"}]},
        ],
        "tools": [{"name": "f", "description": "does f", "input_schema": {"type": "object"}, "strict": True}],
        "tool_choice": {"type": "tool", "name": "f", "disable_parallel_tool_use": True},
        "stop_sequences": ["END"],
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "wire"),
    [
        ("auto", None, {"type": "auto"}),
        ("required", None, {"type": "any"}),
        ("none", False, {"type": "none"}),
        (UseTool("f"), True, {"type": "tool", "name": "f", "disable_parallel_tool_use": False}),
        (None, False, {"type": "auto", "disable_parallel_tool_use": True}),
    ],
)
def test_tool_choice_spellings(choice: Any, parallel: bool | None, wire: dict[str, Any]) -> None:
    request = Request(
        model="m", messages=(Message.user("q"),), settings=Settings(tool_choice=choice, parallel_tool_calls=parallel)
    )
    body = fmt.request_to_wire(request)
    assert body["tool_choice"] == wire
    back = fmt.request_from_wire(body).settings
    assert back.tool_choice == (choice or "auto")
    if wire["type"] != "none":
        assert back.parallel_tool_calls == parallel


@pytest.mark.parametrize(
    "raw", ["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal", "something_new"]
)
def test_stop_reasons_come_back_as_sent(raw: str) -> None:
    wire = load("weather")["final"] | {"stop_reason": raw}
    response = fmt.response_from_wire(wire)
    assert response.stop_reason == (raw if raw != "something_new" else "other")
    assert fmt.response_to_wire(response)["stop_reason"] == raw


def test_a_neutral_response_is_a_valid_message() -> None:
    response = ModelResponse(
        message=Message.assistant("Let me check.", [ToolCall(id="toolu_1", name="f", arguments={"a": 1})]),
        stop_reason="tool_use",
        usage=Usage(input_tokens=5, output_tokens=2, server_tool_use={"web_search_requests": 1}),
        model="scripted",
        id="msg_1",
    )
    sdk = anthropic.types.Message.model_validate(fmt.response_to_wire(response))
    assert sdk.stop_reason == "tool_use" and sdk.content[1].type == "tool_use"
    assert fmt.response_from_wire(sdk).message == response.message


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda b: b["messages"][1]["content"][1].update(input="{}"), "messages[1].content[1].input"),
        (lambda b: b["messages"][2]["content"][0].pop("tool_use_id"), "messages[2].content[0].tool_use_id"),
        (lambda b: b["messages"][0].update(role="tool"), "messages[0].role"),
        (lambda b: b["tools"][0].update(input_schema=[]), "tools[0].input_schema"),
    ],
)
def test_bad_requests_name_the_field(mutate: Any, path: str) -> None:
    body = load("parallel_error")["request"]
    mutate(body)
    with pytest.raises(FormatError) as caught:
        fmt.request_from_wire(body)
    assert caught.value.path == path


def test_the_sdk_habit_of_appending_the_content_blocks_works() -> None:
    """The seed sends ``{"role": "assistant", "content": r1.content}``: a list of SDK block objects."""
    fixture = load("weather")
    blocks = anthropic.types.Message.model_validate(fixture["response"]).content
    messages = fixture["followup"]["messages"]
    body = fixture["followup"] | {"messages": [messages[0], {"role": "assistant", "content": blocks}, messages[2]]}
    assert fmt.request_from_wire(body) == fmt.request_from_wire(fixture["followup"])
    assert fmt.request_to_wire(fmt.request_from_wire(body)) == fixture["followup"]
