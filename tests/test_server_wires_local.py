"""``toolslip serve --model local`` on the Gemini, Converse and Ollama wires, through the official SDKs.

One short request per SDK (the embedded model is slow on a shared 2-core machine): each asks for the weather
tool, gets a grammar-constrained call in the wire's own shape, sends a result back and gets a text answer.
The sync SDK clients run in a worker thread, as the server shares the test's event loop.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import ollama
import pytest
from google import genai
from google.genai import types

from conftest import converse_client

pytestmark = pytest.mark.slow

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
QUESTION = "What's the weather in Paris?"
RESULT = {"city": "Paris", "temp": 21, "desc": "sunny"}


@pytest.fixture
def base(local_url: str) -> str:
    return local_url


async def test_google_genai_tool_loop_with_the_local_model(base: str) -> None:
    tool = types.Tool(
        function_declarations=[types.FunctionDeclaration(name="get_weather", parameters_json_schema=SCHEMA)]
    )
    forced = types.GenerateContentConfig(
        tools=[tool],
        max_output_tokens=48,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(mode="ANY", allowed_function_names=["get_weather"])
        ),
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    with genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base)) as client:
        reply = await asyncio.to_thread(client.models.generate_content, model="gemma", contents=contents, config=forced)
        assert reply.function_calls and reply.function_calls[0].name == "get_weather"
        assert isinstance(reply.function_calls[0].args, dict) and "city" in reply.function_calls[0].args
        assert reply.usage_metadata and (reply.usage_metadata.prompt_token_count or 0) > 20
        assert reply.candidates and reply.candidates[0].content
        answer_part = types.Part.from_function_response(name="get_weather", response=RESULT)
        contents += [reply.candidates[0].content, types.Content(role="user", parts=[answer_part])]
        plain = types.GenerateContentConfig(tools=[tool], max_output_tokens=24)
        answer = await asyncio.to_thread(client.models.generate_content, model="gemma", contents=contents, config=plain)
    # The result reached the model: the second prompt is the first plus the call and its result.
    assert answer.candidates and answer.candidates[0].finish_reason is not None
    assert answer.usage_metadata and reply.usage_metadata
    assert (answer.usage_metadata.prompt_token_count or 0) > (reply.usage_metadata.prompt_token_count or 0) + 10


async def test_boto3_converse_stream_tool_call_with_the_local_model(base: str) -> None:
    client = converse_client(base)
    tools = {
        "tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}],
        "toolChoice": {"tool": {"name": "get_weather"}},
    }
    messages = [{"role": "user", "content": [{"text": QUESTION}]}]

    def converse_stream() -> list[dict[str, Any]]:
        reply = client.converse_stream(
            modelId="us.local", messages=messages, toolConfig=tools, inferenceConfig={"maxTokens": 48}
        )
        return list(reply["stream"])

    try:
        events = await asyncio.to_thread(converse_stream)
    finally:
        client.close()
    start = next(e["contentBlockStart"]["start"]["toolUse"] for e in events if "contentBlockStart" in e)
    arguments = "".join(
        e["contentBlockDelta"]["delta"]["toolUse"]["input"]
        for e in events
        if "contentBlockDelta" in e and "toolUse" in e["contentBlockDelta"]["delta"]
    )
    assert start["name"] == "get_weather" and start["toolUseId"].startswith("tooluse_")
    assert "city" in json.loads(arguments)
    assert next(e["messageStop"]["stopReason"] for e in events if "messageStop" in e) == "tool_use"
    assert next(e["metadata"] for e in events if "metadata" in e)["usage"]["inputTokens"] > 20


async def test_ollama_tool_loop_with_the_local_model(base: str) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": SCHEMA}}]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    async with ollama.AsyncClient(host=base) as client:
        reply = await client.chat(model="qwen", messages=messages, tools=tools, options={"num_predict": 48})
        assert reply.done and (reply.prompt_eval_count or 0) > 20 and 0 < (reply.eval_count or 0) <= 48
        calls = reply.message.tool_calls or []
        assert calls and calls[0].function.name == "get_weather" and "city" in calls[0].function.arguments
        messages += [reply.message, {"role": "tool", "tool_name": "get_weather", "content": json.dumps(RESULT)}]
        answer = await client.chat(model="qwen", messages=messages, tools=tools, options={"num_predict": 24})
    assert answer.done and (answer.prompt_eval_count or 0) > (reply.prompt_eval_count or 0) + 10
