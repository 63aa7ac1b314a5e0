"""``toolslip serve`` speaks both protocols: the official SDKs are the clients, over real loopback HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from subprocess import PIPE
from typing import Any

import aiohttp
import anthropic
import openai
import pytest

from toolslip import Message, ModelResponse, ProviderError, Request
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve
from toolslip.testing import FunctionModel, ScriptedModel

FX = {
    "name": "fx",
    "description": "Convert to CNY.",
    "parameters": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "currency": {"type": "string", "enum": ["USD", "EUR", "JPY"]}},
        "required": ["amount", "currency"],
    },
}
CALC = {
    "name": "calc",
    "description": "Arithmetic.",
    "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}, "required": ["expr"]},
}
OPENAI_TOOLS: Any = [{"type": "function", "function": t} for t in (FX, CALC)]
ANTHROPIC_TOOLS: Any = [
    {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in (FX, CALC)
]


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(ScriptedDemo()) as url:
        yield url


@pytest.fixture
async def oai(base: str) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="not-needed", max_retries=0)
    yield client
    await client.close()


@pytest.fixture
async def claude(base: str) -> AsyncIterator[anthropic.AsyncAnthropic]:
    client = anthropic.AsyncAnthropic(base_url=base, api_key="not-needed", max_retries=0)
    yield client
    await client.close()


async def test_openai_sdk_gets_a_tool_call(oai: openai.AsyncOpenAI) -> None:
    reply = await oai.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "320 USD in CNY?"}], tools=OPENAI_TOOLS
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.tool_calls is not None
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "fx"
    assert call.function.arguments == '{"amount": 320, "currency": "USD"}'
    assert reply.model == "gpt-4o-mini"  # the model asked for, as the services echo it


async def test_anthropic_sdk_gets_a_tool_use_block(claude: anthropic.AsyncAnthropic) -> None:
    reply = await claude.messages.create(
        model="scripted",
        max_tokens=256,
        messages=[{"role": "user", "content": "320 USD in CNY?"}],
        tools=ANTHROPIC_TOOLS,
    )
    assert reply.stop_reason == "tool_use"
    block = reply.content[-1]
    assert block.type == "tool_use" and block.name == "fx" and block.input == {"amount": 320, "currency": "USD"}


async def test_both_sdks_list_the_served_model(oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic) -> None:
    assert [m.id async for m in oai.models.list()] == ["scripted"]
    assert [m.id async for m in claude.models.list()] == ["scripted"]


async def test_bad_requests_name_the_field_in_each_protocols_error_shape(
    oai: openai.AsyncOpenAI, claude: anthropic.AsyncAnthropic
) -> None:
    with pytest.raises(openai.BadRequestError) as bad_openai:
        await oai.chat.completions.create(model="m", messages=[{"role": "wizard", "content": "hi"}])  # type: ignore[misc,list-item]
    assert bad_openai.value.status_code == 400
    assert isinstance(bad_openai.value.body, dict) and bad_openai.value.body["param"].startswith("messages[0]")
    assert bad_openai.value.body["type"] == "invalid_request_error"
    with pytest.raises(anthropic.BadRequestError) as bad_anthropic:
        await claude.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": 42}])  # type: ignore[typeddict-item]
    body = bad_anthropic.value.body
    assert isinstance(body, dict) and body["type"] == "error"
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["message"].startswith(
        "messages.0.content: "  # Anthropic's spelling of a field path
    )


async def test_raw_http_errors_unknown_route_and_invalid_json(base: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/v1/completions", json={}) as missing:
            assert missing.status == 404
            body = await missing.json()
            assert "this server answers POST /v1/chat/completions, POST /v1/messages" in body["error"]["message"]
        async with http.post(
            f"{base}/v1/messages", data=b"{not json", headers={"anthropic-version": "2023-06-01"}
        ) as bad:
            assert bad.status == 400
            error = await bad.json()
            assert error["type"] == "error" and error["error"]["message"].startswith(
                "the request body is not valid JSON"
            )
        async with http.get(f"{base}/v1/messages") as wrong_method:
            assert wrong_method.status == 405
            assert (await wrong_method.json())["error"]["type"] == "invalid_request_error"


async def test_a_failing_model_answers_in_the_protocol() -> None:
    def rate_limited(request: Request) -> str:
        raise ProviderError("upstream answered 429: slow down", status=429, retryable=True)

    async with serve(FunctionModel(rate_limited)) as url:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.RateLimitError, match="slow down"):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await client.close()
    async with serve(ScriptedModel(["only one answer"])) as url:
        client2 = anthropic.AsyncAnthropic(base_url=url, api_key="x", max_retries=0)
        first = await client2.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "a"}])
        assert first.content[0].type == "text" and first.content[0].text == "only one answer"
        with pytest.raises(anthropic.InternalServerError, match="scripted model has 1 turns"):
            await client2.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "b"}])
        await client2.close()


async def test_the_served_model_sees_the_neutral_request_and_its_name_is_echoed() -> None:
    seen: list[Request] = []

    def answer(request: Request) -> ModelResponse:
        seen.append(request)
        return ModelResponse(message=Message.assistant("hello"), stop_reason="end_turn")

    async with serve(FunctionModel(answer)) as url:
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        reply = await client.chat.completions.create(
            model="my-model", messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
        )
        await client.close()
    assert reply.model == "my-model" and reply.choices[0].message.content == "hello"
    assert [m.role for m in seen[0].messages] == ["system", "user"] and seen[0].model == ""


def test_cli_rejects_a_bad_model_string_in_one_sentence() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "serve", "--model", "gpt-4o", "--port", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2  # bad usage
    assert done.stderr.startswith(
        "toolslip serve: model string 'gpt-4o' has no provider prefix (did you mean openai:gpt-4o?); expected one of:"
    )
    assert "Traceback" not in done.stderr


async def test_cli_serves_the_scripted_model_until_stopped() -> None:
    command = ("-m", "toolslip.cli", "serve", "--model", "scripted", "--port", "0")
    server = await asyncio.create_subprocess_exec(sys.executable, *command, stdout=PIPE, stderr=PIPE)
    try:
        assert server.stdout is not None
        banner = [(await asyncio.wait_for(server.stdout.readline(), 60)).decode() for _ in range(2)]
        assert banner[0].startswith("model: scripted (given; the answers are SCRIPTED")
        url = banner[1].split(" at ", 1)[1].strip()
        client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        reply = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        await client.close()
        assert "scripted demo model" in (reply.choices[0].message.content or "")
    finally:
        server.terminate()
        await server.communicate()
