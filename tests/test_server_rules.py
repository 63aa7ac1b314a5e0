"""``toolslip serve`` refuses what the services refuse: one request per rule, through the official SDKs.

Each case is a request the real service answers with 400; ``serve`` must answer the same way, so the SDK
raises its own ``BadRequestError`` carrying the service's message (and, for OpenAI, its ``param`` and
``code``). Nothing reaches the model. The messages are the services' own words (see docs/providers.md for
where each comes from). The last tests check that the near misses are *accepted*: a validator stricter
than the service is as wrong as a lenient one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anthropic
import openai
import pytest

from toolslip import Request
from toolslip.server import serve
from toolslip.testing import FunctionModel

USER = [{"role": "user", "content": "hi"}]
FN = {"type": "object", "properties": {}}


def chat_tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": FN}}


ASKED_WEATHER = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "w", "arguments": "{}"}}],
}

CHAT = [
    pytest.param({"messages": USER}, "you must provide a model parameter", None, None, id="no model"),
    pytest.param(
        {"model": "m", "messages": []},
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "messages",
        "empty_array",
        id="empty messages",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "tools": []},
        "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
        "tools",
        "empty_array",
        id="empty tools",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "tools": [chat_tool("a b")]},
        "Invalid 'tools[0].function.name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "tools[0].function.name",
        "invalid_value",
        id="tool name with a space",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "tools": [chat_tool("查询天气")]},
        "Invalid 'tools[0].function.name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "tools[0].function.name",
        "invalid_value",
        id="tool name in Chinese",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "tools": [chat_tool("x" * 65)]},
        "Invalid 'tools[0].function.name': string too long. "
        "Expected a string with maximum length 64, but got a string with length 65 instead.",
        "tools[0].function.name",
        "string_above_max_length",
        id="tool name of 65 characters",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "n": 0},
        "Invalid 'n': integer below minimum value. Expected a value >= 1, but got 0 instead.",
        "n",
        "integer_below_min_value",
        id="n 0",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "n": 129},
        "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 129 instead.",
        "n",
        "integer_above_max_value",
        id="n 129",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "max_tokens": 0},
        "Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got 0 instead.",
        "max_tokens",
        "integer_below_min_value",
        id="max_tokens 0",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "temperature": 2.5},
        "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 2.5 instead.",
        "temperature",
        "decimal_above_max_value",
        id="temperature 2.5",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "tool_choice": "required"},
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        "tool_choice",
        None,
        id="tool_choice without tools",
    ),
    pytest.param(
        {"model": "m", "messages": USER, "stream_options": {"include_usage": True}},
        "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
        "stream_options",
        None,
        id="stream_options without stream",
    ),
    pytest.param(
        {"model": "m", "messages": [*USER, {"role": "tool", "tool_call_id": "call_1", "content": "22"}]},
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
        "messages.[1].role",
        None,
        id="a result without its call",
    ),
    pytest.param(
        {"model": "m", "messages": [*USER, ASKED_WEATHER, {"role": "user", "content": "and?"}]},
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
        "messages.[1].role",
        None,
        id="a call without its result",
    ),
]


def never_called(request: Request) -> str:
    raise AssertionError("a refused request reached the model")


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(FunctionModel(never_called)) as url:
        yield url


@pytest.fixture
async def oai(base: str) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def claude(base: str) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(base_url=base, api_key="unused", max_retries=0)
    yield client
    await client.close()


@pytest.mark.parametrize(("body", "message", "param", "code"), CHAT)
async def test_chat_refuses_as_openai_does(
    oai: openai.AsyncOpenAI, body: dict[str, Any], message: str, param: str | None, code: str | None
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await oai.post("/chat/completions", cast_to=dict, body=body)
    error = refused.value
    assert error.status_code == 400 and error.message.endswith(message)
    assert error.body == {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    assert error.request_id is not None and error.request_id.startswith("req_")


RESPONSES = [
    pytest.param(
        {"input": "hi"}, "Missing required parameter: 'model'.", "model", "missing_required_parameter", id="no model"
    ),
    pytest.param(
        {"model": "m", "input": "hi", "tools": [{"type": "function", "name": "get weather", "parameters": FN}]},
        "Invalid 'tools[0].name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "tools[0].name",
        "invalid_value",
        id="tool name with a space",
    ),
    pytest.param(
        {"model": "m", "input": "hi", "max_output_tokens": 10},
        "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead.",
        "max_output_tokens",
        "integer_below_min_value",
        id="max_output_tokens 10",
    ),
    pytest.param(
        {"model": "m", "input": [*USER, {"type": "function_call_output", "call_id": "call_9", "output": "22"}]},
        "No tool call found for function call output with call_id call_9.",
        "input",
        None,
        id="an output without its call",
    ),
    pytest.param(
        {
            "model": "m",
            "input": [*USER, {"type": "function_call", "call_id": "call_9", "name": "w", "arguments": "{}"}],
        },
        "No tool output found for function call call_9.",
        "input",
        None,
        id="a call without its output",
    ),
]


@pytest.mark.parametrize(("body", "message", "param", "code"), RESPONSES)
async def test_responses_refuses_as_openai_does(
    oai: openai.AsyncOpenAI, body: dict[str, Any], message: str, param: str | None, code: str | None
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        await oai.post("/responses", cast_to=dict, body=body)
    assert refused.value.body == {"message": message, "type": "invalid_request_error", "param": param, "code": code}


TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_01A", "name": "w", "input": {}}]}

MESSAGES = [
    pytest.param({"max_tokens": 5, "messages": USER}, "model: Field required", id="no model"),
    pytest.param({"model": "m", "messages": USER}, "max_tokens: Field required", id="no max_tokens"),
    pytest.param({"model": "m", "max_tokens": 5}, "messages: Field required", id="no messages"),
    pytest.param(
        {"model": "m", "max_tokens": 5, "messages": []},
        "messages: at least one message is required",
        id="empty messages",
    ),
    pytest.param(
        {"model": "m", "max_tokens": 5, "messages": USER, "tools": [{"name": "a b", "input_schema": FN}]},
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
        id="tool name with a space",
    ),
    pytest.param(
        {
            "model": "m",
            "max_tokens": 5,
            "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01A"}]}],
        },
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_01A. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
        id="a result without its call",
    ),
    pytest.param(
        {"model": "m", "max_tokens": 5, "messages": [*USER, TOOL_USE, {"role": "user", "content": "and?"}]},
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01A. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
        id="a call without its result",
    ),
]


@pytest.mark.parametrize(("body", "message"), MESSAGES)
async def test_messages_refuses_as_anthropic_does(
    claude: anthropic.AsyncAnthropic, body: dict[str, Any], message: str
) -> None:
    with pytest.raises(anthropic.BadRequestError) as refused:
        await claude.post("/v1/messages", cast_to=dict, body=body)
    error = refused.value
    assert isinstance(error.body, dict)
    assert error.body["error"] == {"type": "invalid_request_error", "message": message}
    assert error.body["request_id"] == error.request_id and message in str(error)


async def test_near_misses_are_accepted(base: str) -> None:
    """What the services accept must not be refused: names of 64 characters with - and _, n of 128 and
    temperature 2, a second result for one call, an assistant prefill that ends in a call."""
    seen: list[Request] = []

    def answer(request: Request) -> str:
        seen.append(request)
        return "ok"

    async with serve(FunctionModel(answer)) as url:
        oai = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="unused", max_retries=0)
        claude = anthropic.AsyncAnthropic(base_url=url, api_key="unused", max_retries=0)
        name = "A-b_" + "x" * 60
        await oai.chat.completions.create(model="m", messages=USER, tools=[chat_tool(name)], temperature=2)  # type: ignore[list-item]
        answered = [*USER, ASKED_WEATHER, {"role": "tool", "tool_call_id": "call_1", "content": "22"}]
        await oai.chat.completions.create(model="m", messages=answered)  # type: ignore[arg-type]
        reply = await oai.chat.completions.create(model="m", messages=USER, n=3)  # type: ignore[arg-type]
        assert [c.index for c in reply.choices] == [0, 1, 2] and reply.usage is not None
        await oai.responses.create(model="m", input="hi", max_output_tokens=16)
        await claude.messages.create(model="m", max_tokens=5, messages=[*USER, TOOL_USE])  # type: ignore[list-item]
        await oai.close()
        await claude.close()
    assert len(seen) == 7  # every request reached the model; n=3 asked it three times
