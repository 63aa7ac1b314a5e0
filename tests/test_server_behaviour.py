"""``toolslip serve`` as clients see it: text in several parts, echoes, ids, usage, ``n``, and its log.

The multi-part answer is Anthropic's documented web-search answer (``tests/fixtures/anthropic``), a
cited answer in eight text blocks, served the way ``serve --model anthropic:...`` serves it: a front
server whose model is toolslip's Anthropic transport, talking over HTTP to a second server that plays
the recorded answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from subprocess import PIPE

import anthropic
import openai
import pytest
from openai.types.chat import ChatCompletion

from toolslip import ModelResponse, Request
from toolslip.formats import anthropic as anthropic_format
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve
from toolslip.testing import FunctionModel

CITED = json.loads((Path(__file__).parent / "fixtures" / "anthropic" / "server_web_search.json").read_text())[
    "response"
]
CITED_TEXT = "".join(b["text"] for b in CITED["content"] if b["type"] == "text")
QUESTION = [{"role": "user", "content": "When was Claude Shannon born?"}]


@pytest.fixture
async def claude_behind_serve() -> AsyncIterator[str]:
    """``serve --model anthropic:claude-sonnet-4-6`` whose Anthropic API is a server playing the cited answer."""

    def recorded(request: Request) -> ModelResponse:
        return anthropic_format.response_from_wire(CITED)

    async with serve(FunctionModel(recorded)) as upstream:
        model = AnthropicModel("claude-sonnet-4-6", base_url=upstream, api_key="unused", max_retries=0)
        try:
            async with serve(model) as front:
                yield front
        finally:
            await model.aclose()


async def test_cited_answer_in_many_text_parts_reaches_every_client_whole(claude_behind_serve: str) -> None:
    assert len([b for b in CITED["content"] if b["type"] == "text"]) > 2 and CITED_TEXT
    async with openai.AsyncOpenAI(base_url=f"{claude_behind_serve}/v1", api_key="x", max_retries=0) as oai:
        raw = await oai.chat.completions.with_raw_response.create(model="claude-sonnet-4-6", messages=QUESTION)  # type: ignore[arg-type]
        plain = ChatCompletion.model_validate_json(raw.http_response.text)  # content is one string
        assert plain.choices[0].message.content == CITED_TEXT
        stream = await oai.chat.completions.create(model="claude-sonnet-4-6", messages=QUESTION, stream=True)  # type: ignore[arg-type]
        assert "".join([c.choices[0].delta.content or "" async for c in stream if c.choices]) == CITED_TEXT
        async with oai.chat.completions.stream(model="claude-sonnet-4-6", messages=QUESTION) as helper:  # type: ignore[arg-type]
            assert (await helper.get_final_completion()).choices[0].message.content == CITED_TEXT
        reply = await oai.responses.create(model="claude-sonnet-4-6", input="When was Claude Shannon born?")
        assert reply.output_text == CITED_TEXT
        events = await oai.responses.create(model="claude-sonnet-4-6", input="When?", stream=True)
        assert "".join([e.delta async for e in events if e.type == "response.output_text.delta"]) == CITED_TEXT
    async with anthropic.AsyncAnthropic(base_url=claude_behind_serve, api_key="x", max_retries=0) as claude:
        message = await claude.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=QUESTION)  # type: ignore[arg-type]
        texts = [b for b in message.content if b.type == "text"]
        assert [b.text for b in texts] == [b["text"] for b in CITED["content"] if b["type"] == "text"]
        assert any(b.citations for b in texts)  # Anthropic clients keep the blocks and their citations
        async with claude.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=QUESTION) as helper:  # type: ignore[arg-type]
            assert "".join([t async for t in helper.text_stream]) == CITED_TEXT


@pytest.fixture
async def oai() -> AsyncIterator[openai.AsyncOpenAI]:
    async with serve(ScriptedDemo("weather")) as base:
        client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        yield client
        await client.close()


WEATHER = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Current weather of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


async def test_responses_echo_the_request_settings(oai: openai.AsyncOpenAI) -> None:
    reply = await oai.responses.create(
        model="gpt-4.1-mini",
        input="What's the weather in Beijing?",
        instructions="Answer in one sentence.",
        tools=WEATHER,  # type: ignore[arg-type]
        temperature=0.2,
        top_p=0.9,
        metadata={"ticket": "T-1"},
        max_output_tokens=200,
        parallel_tool_calls=False,
    )
    assert reply.model == "gpt-4.1-mini" and reply.id.startswith("resp_")
    assert reply.instructions == "Answer in one sentence." and reply.metadata == {"ticket": "T-1"}
    assert (reply.temperature, reply.top_p, reply.max_output_tokens, reply.parallel_tool_calls) == (
        0.2,
        0.9,
        200,
        False,
    )
    assert [t.model_dump(exclude_none=True) for t in reply.tools] == WEATHER
    assert reply.store is False  # nothing is kept here, unlike the service's default
    call = reply.output[0]
    assert call.type == "function_call" and call.call_id.startswith("call_") and call.id.startswith("fc_")
    async with oai.responses.stream(
        model="gpt-4.1-mini", input="Weather in Beijing?", tools=WEATHER, instructions="Be brief."
    ) as s:  # type: ignore[arg-type]
        created = [e async for e in s][0]
    assert created.type == "response.created" and created.response.instructions == "Be brief."
    assert [t.name for t in created.response.tools] == ["get_weather"]  # type: ignore[union-attr]


async def test_the_scripted_demo_reports_token_usage_everywhere(oai: openai.AsyncOpenAI) -> None:
    chat = await oai.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "What's the weather in Beijing?"}],
        tools=[{"type": "function", "function": {k: v for k, v in WEATHER[0].items() if k != "type"}}],  # type: ignore[list-item]
    )
    assert chat.usage is not None and chat.usage.prompt_tokens > 20 and chat.usage.completion_tokens > 0
    assert chat.usage.total_tokens == chat.usage.prompt_tokens + chat.usage.completion_tokens
    reply = await oai.responses.create(model="m", input="What's the weather in Beijing?", tools=WEATHER)  # type: ignore[arg-type]
    assert reply.usage is not None and reply.usage.input_tokens > 20 and reply.usage.output_tokens > 0
    # a longer question costs more tokens: the count is of this request, not a constant
    longer = await oai.responses.create(model="m", input="What's the weather in Beijing? " * 20, tools=WEATHER)  # type: ignore[arg-type]
    assert longer.usage is not None and longer.usage.input_tokens > reply.usage.input_tokens + 50


async def test_n_choices_are_n_answers_with_one_id_and_summed_usage() -> None:
    count = 0

    def answer(request: Request) -> str:
        nonlocal count
        count += 1
        return f"answer {count}"

    async with serve(FunctionModel(answer)) as base:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
            reply = await oai.chat.completions.create(model="m", messages=QUESTION, n=3)  # type: ignore[arg-type]
            assert [(c.index, c.message.content) for c in reply.choices] == [
                (0, "answer 1"),
                (1, "answer 2"),
                (2, "answer 3"),
            ]
            stream = await oai.chat.completions.create(
                model="m",
                messages=QUESTION,
                n=2,
                stream=True,
                stream_options={"include_usage": True},  # type: ignore[arg-type]
            )
            chunks = [c async for c in stream]
    texts: dict[int, str] = {}
    for chunk in chunks:
        for choice in chunk.choices:
            texts[choice.index] = texts.get(choice.index, "") + (choice.delta.content or "")
    assert texts == {0: "answer 4", 1: "answer 5"}
    assert len({c.id for c in chunks}) == 1 and chunks[-1].usage is not None and not chunks[-1].choices


async def test_one_log_line_per_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="toolslip.server")
    async with serve(ScriptedDemo("weather")) as base:
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
            await oai.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Beijing?"}])
        async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as claude:
            with pytest.raises(anthropic.BadRequestError):
                await claude.post("/v1/messages", cast_to=dict, body={"model": "claude-x", "messages": QUESTION})
    lines = [r.getMessage() for r in caplog.records if r.name == "toolslip.server"]
    assert len(lines) == 2
    method, path, status, model, tokens, ms, unit = lines[0].split()
    assert (method, path, status, model, unit) == ("POST", "/v1/chat/completions", "200", "model=gpt-4o-mini", "ms")
    tokens_in, tokens_out = tokens.removeprefix("tokens=").split("+")
    assert int(tokens_in) > 0 and int(tokens_out) > 0 and int(ms) >= 0
    assert lines[1].startswith("POST /v1/messages 400 model=claude-x tokens=- ")
    assert lines[1].endswith(" ms: max_tokens: Field required")


def _serve(*options: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted", "--port", "0", *options)


async def _one_request_then_stop(*options: str) -> str:
    """Start ``toolslip serve``, send one request, stop it; what it wrote on stderr."""
    server = await asyncio.create_subprocess_exec(*_serve(*options), stdout=PIPE, stderr=PIPE)
    try:
        assert server.stdout is not None
        banner = [(await asyncio.wait_for(server.stdout.readline(), 60)).decode() for _ in range(2)]
        url = banner[1].split(" at ", 1)[1].strip()
        async with openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client:
            await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}])
        await asyncio.sleep(0.2)  # the line is written after the answer is sent
    finally:
        server.terminate()
        _, err = await server.communicate()
    return err.decode()


@pytest.mark.slow  # two real `toolslip serve` processes (stderr and --quiet are the point): ~2 s idle
async def test_cli_logs_each_request_on_stderr_unless_quiet() -> None:
    logged = await _one_request_then_stop()
    line = next(line for line in logged.splitlines() if "/v1/chat/completions" in line)
    clock, rest = line.split(" ", 1)
    assert len(clock) == 8 and clock.count(":") == 2  # HH:MM:SS
    assert rest.startswith("POST /v1/chat/completions 200 model=gpt-4o-mini tokens=") and rest.endswith(" ms")
    assert "/v1/chat/completions" not in await _one_request_then_stop("--quiet")


def test_cli_refuses_a_port_out_of_range_as_a_usage_error() -> None:
    done = subprocess.run([*_serve()[:-1], "99999"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (
        "toolslip serve: argument --port: must be between 0 and 65535, got 99999 (see toolslip serve --help)\n"
    )
