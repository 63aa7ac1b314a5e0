"""The OpenAI Chat Completions format against golden JSON written from OpenAI's function-calling docs."""

from __future__ import annotations

from typing import Any

import pytest
from openai.types.chat import ChatCompletion

from _golden import golden
from toolslip.errors import FormatError
from toolslip.formats import openai_chat as fmt
from toolslip.messages import (
    Image,
    Message,
    ModelResponse,
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
    return golden("openai_chat", name)


def test_weather_call_is_parsed_from_its_json_string() -> None:
    fixture = load("weather")
    response = fmt.response_from_wire(fixture["response"])
    assert response.message.tool_calls == [
        ToolCall(
            id="call_weather_1",
            name="get_weather",
            arguments={"city": "北京", "unit": "celsius"},
            raw_arguments='{"city":"北京","unit":"celsius"}',
        )
    ]
    assert (response.stop_reason, response.raw_stop_reason) == ("tool_use", "tool_calls")
    assert response.usage == Usage(input_tokens=112, output_tokens=21)
    request = fmt.request_from_wire(fixture["followup"])
    assert [m.role for m in request.messages] == ["user", "assistant", "tool"]
    result = request.messages[2].tool_results[0]
    assert (result.call_id, result.is_error) == ("call_weather_1", False)
    assert request.tools[0].parameters["required"] == ["city"]
    assert fmt.response_from_wire(fixture["final"]).message.text == "北京现在 28°C，多云，不用带外套。"


def test_expenses_history_has_four_calls_and_cached_tokens_are_split_out() -> None:
    fixture = load("expenses")
    request = fmt.request_from_wire(fixture["request"])
    calls = [c for m in request.messages for c in m.tool_calls]
    assert [(c.name, dict(c.arguments or {})) for c in calls] == [
        ("fx", {"amount": 320, "currency": "USD"}),
        ("fx", {"amount": 15000, "currency": "JPY"}),
        ("calc", {"expr": "2297.6 + 705.0"}),
        ("calc", {"expr": "3002.6 / 4"}),
    ]
    assert request.messages[0] == Message.system(fixture["request"]["messages"][0]["content"])
    assert request.settings.temperature == 0
    usage = fmt.response_from_wire(fixture["response"]).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (402 - 256, 256, 31)


def test_parallel_calls_bad_json_and_consecutive_tool_messages() -> None:
    fixture = load("parallel_error")
    request = fmt.request_from_wire(fixture["request"])
    system, user, assistant, tool = request.messages
    assert system.role == "system" and system.text == "Answer in one sentence."
    assert user.name == "li"
    assert assistant.text == "我来同时查三个城市。"
    bad = assistant.tool_calls[2]
    assert bad.arguments is None and bad.raw_arguments == '{"city": "纽约"'
    assert [r.call_id for r in tool.tool_results] == ["call_bj", "call_sh", "call_ny"]
    assert tool.tool_results[1].content == (Text(text='{"city": "上海", "temp": 31}'),)
    # There is no error field in this format: only the mark toolslip writes (a first text part "Error: ")
    # says it, and the text after the mark comes back without it.
    assert [r.is_error for r in tool.tool_results] == [False, False, True]
    assert tool.tool_results[2].content.startswith("the arguments are not valid JSON")  # type: ignore[union-attr]
    assert request.settings == Settings(
        max_tokens=300, tool_choice="required", parallel_tool_calls=True, stop=("\n\n\n",), extra={"seed": 7}
    )
    assert request.tools[0].strict is True
    response = fmt.response_from_wire(fixture["response"])
    first, _, third = response.message.tool_calls
    assert first.arguments == {"city": "北京", "unit": None}
    assert third.arguments is None and third.raw_arguments == '["纽约"]'  # JSON, but not an object


def test_images_named_tool_choice_and_refusal() -> None:
    fixture = load("images_refusal")
    request = fmt.request_from_wire(fixture["request"])
    user = request.messages[1]
    assert user.parts[1] == Image(
        media_type="image/jpeg",
        url="https://upload.wikimedia.org/wikipedia/commons/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg",
    )
    assert user.parts[2] == Image(
        media_type="image/png", data=fixture["request"]["messages"][1]["content"][2]["image_url"]["url"].split(",")[1]
    )
    assert request.settings.tool_choice == UseTool("describe")
    assert request.settings.parallel_tool_calls is False
    response = fmt.response_from_wire(fixture["response"])
    assert (response.stop_reason, response.raw_stop_reason) == ("refusal", "stop")


def test_neutral_history_is_spelled_the_openai_way() -> None:
    request = Request(
        model="m",
        messages=(
            Message.system("S"),
            Message.user("Q"),
            Message.assistant(
                "",
                [
                    ToolCall(id="c1", name="f", arguments={"x": 1}),
                    # a hook changed the arguments: the stale raw text must not be sent
                    ToolCall(id="c2", name="f", arguments={"x": 3}, raw_arguments='{"x": 2}'),
                ],
            ),
            Message(
                role="tool",
                parts=(
                    ToolResult(call_id="c1", content="boom", is_error=True),
                    ToolResult(call_id="c2", content=(Text(text="ok"), Image(media_type="image/png", data="AAAA"))),
                    Text(text="Now answer."),
                ),
            ),
        ),
        tools=(ToolSpec(name="f", description="", parameters={"type": "object"}),),
        settings=Settings(tool_choice=UseTool("f"), temperature=0.5, extra={"seed": 1}),
        extra_tools=({"type": "custom", "custom": {"name": "grammar"}},),
    )
    assert fmt.request_to_wire(request) == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "Q"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x":1}'}},
                    {"id": "c2", "type": "function", "function": {"name": "f", "arguments": '{"x":3}'}},
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "c1",
                "content": [{"type": "text", "text": "Error: "}, {"type": "text", "text": "boom"}],
            },
            {
                "role": "tool",
                "tool_call_id": "c2",
                "content": [
                    {"type": "text", "text": "ok"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                ],
            },
            {"role": "user", "content": "Now answer."},
        ],
        "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}},
            {"type": "custom", "custom": {"name": "grammar"}},
        ],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "temperature": 0.5,
        "seed": 1,
    }


@pytest.mark.parametrize(
    ("raw", "neutral", "back"),
    [
        ("stop", "end_turn", "stop"),
        ("tool_calls", "tool_use", "tool_calls"),
        ("length", "max_tokens", "length"),
        ("content_filter", "content_filter", "content_filter"),
        ("function_call", "tool_use", "function_call"),
        ("eos_token", "other", "eos_token"),
    ],
)
def test_finish_reasons(raw: str, neutral: str, back: str) -> None:
    wire = load("weather")["final"] | {}
    wire["choices"] = [wire["choices"][0] | {"finish_reason": raw}]
    response = fmt.response_from_wire(wire)
    assert (response.stop_reason, response.raw_stop_reason) == (neutral, raw)
    assert fmt.response_to_wire(response)["choices"][0]["finish_reason"] == back


def test_a_neutral_response_is_a_valid_chat_completion() -> None:
    response = ModelResponse(
        message=Message.assistant("", [ToolCall(id="c", name="f", arguments={"a": "é"})]),
        stop_reason="tool_use",
        usage=Usage(input_tokens=7, output_tokens=3, cache_read_tokens=2),
        model="scripted",
        id="chatcmpl-1",
    )
    wire = fmt.response_to_wire(response)
    sdk = ChatCompletion.model_validate(wire)
    assert sdk.choices[0].finish_reason == "tool_calls"
    assert sdk.usage is not None and (sdk.usage.prompt_tokens, sdk.usage.total_tokens) == (9, 12)
    assert fmt.response_from_wire(sdk).message == Message(
        role="assistant", parts=(ToolCall(id="c", name="f", arguments={"a": "é"}, raw_arguments='{"a":"é"}'),)
    )


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (
            # an object is read (some compatible servers send one); a list is no arguments at all
            lambda b: b["messages"][2]["tool_calls"][0]["function"].update(arguments=[1]),
            "messages[2].tool_calls[0].function.arguments",
        ),
        (lambda b: b["messages"][1].update(role="robot"), "messages[1]"),
        (lambda b: b["messages"].__setitem__(0, "hi"), "messages[0]"),
        (lambda b: b["tools"][0]["function"].update(parameters="{}"), "tools[0].function.parameters"),
        (lambda b: b.update(model=5), "model"),
    ],
)
def test_bad_requests_name_the_field(mutate: Any, path: str) -> None:
    body = load("parallel_error")["request"]
    mutate(body)
    with pytest.raises(FormatError) as caught:
        fmt.request_from_wire(body)
    assert caught.value.path == path
    assert str(caught.value).startswith(f"{path}: expected") or "unknown role" in str(caught.value)


def test_a_response_without_choices_is_rejected() -> None:
    with pytest.raises(FormatError, match="no choices"):
        fmt.response_from_wire({"id": "x", "choices": []})
    with pytest.raises(FormatError, match="response: expected an object, got a string"):
        fmt.response_from_wire("not a response")


def test_the_sdk_habit_of_appending_the_message_object_works() -> None:
    """The seed appends ``r1.choices[0].message`` itself to the history; that object is read like its dict."""
    fixture = load("weather")
    sdk_message = ChatCompletion.model_validate(fixture["response"]).choices[0].message
    body = fixture["followup"] | {
        "messages": [fixture["followup"]["messages"][0], sdk_message, fixture["followup"]["messages"][2]]
    }
    with_object = fmt.request_from_wire(body)
    assert with_object.messages[1].tool_calls == fmt.request_from_wire(fixture["followup"]).messages[1].tool_calls
