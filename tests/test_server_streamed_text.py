"""A streamed answer is the final answer, byte for byte, on every streaming route of ``toolslip serve``.

Issue 36: after a tool result, the embedded model's first pass wrote ``(`` and then the call it had already
made; the ``(`` was streamed, the call was found to repeat an answered one, and the answer was decoded again
without it. Every stream then began with ``(`` while the answer did not (and, with the frames of the two out
of step, a later delta lost a character). Here each official SDK asks the same question twice, whole and
streamed, after the same tool result: the deltas joined, the stream's own closing text (where the protocol
has one) and the whole answer must be one string. The scripted model runs through the same live-streaming
path (it says ``streams_text_first``), so a break in the server's framing shows without the slow model.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import aiohttp
import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types

from conftest import converse_client
from toolslip.core.messages import Message, ModelResponse, Request
from toolslip.core.model import Model
from toolslip.core.streaming import ResponseDone, StreamEvent, TextChunk
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve
from toolslip.testing import StreamedModel

QUESTION = "What's the weather in Beijing?"
ARGUMENTS = {"city": "Beijing"}
RESULT = {"city": "Beijing", "sky": "cloudy", "celsius": 28, "temp": 28, "unit": "celsius", "desc": "cloudy"}
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
DESCRIPTION = "Current weather of a city."
TOKENS = 60


@dataclass(frozen=True)
class Seen:
    """One route's answers to one request: whole, and streamed (its deltas, and the texts its stream closes with)."""

    whole: str
    deltas: list[str]
    closing: list[str]


Route = Callable[[str], Awaitable[Seen]]


async def chat(base: str) -> Seen:
    tools: Any = [
        {"type": "function", "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA}}
    ]
    messages: Any = [
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": json.dumps(ARGUMENTS)},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(RESULT)},
    ]
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        whole = await client.chat.completions.create(model="m", messages=messages, tools=tools, max_tokens=TOKENS)
        stream = await client.chat.completions.create(
            model="m", messages=messages, tools=tools, max_tokens=TOKENS, stream=True
        )
        deltas = [c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content]
    return Seen(whole.choices[0].message.content or "", deltas, [])


async def responses(base: str) -> Seen:
    tools: Any = [{"type": "function", "name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA}]
    items: Any = [
        {"role": "user", "content": QUESTION},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": json.dumps(ARGUMENTS)},
        {"type": "function_call_output", "call_id": "call_1", "output": json.dumps(RESULT)},
    ]
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        whole = await client.responses.create(model="m", input=items, tools=tools, max_output_tokens=TOKENS)
        deltas, closing = [], []
        stream = await client.responses.create(
            model="m", input=items, tools=tools, max_output_tokens=TOKENS, stream=True
        )
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            elif event.type == "response.output_text.done":
                closing.append(event.text)
            elif event.type == "response.completed":
                closing.append(event.response.output_text)
    return Seen(whole.output_text, deltas, closing)


async def messages(base: str) -> Seen:
    tools: Any = [{"name": "get_weather", "description": DESCRIPTION, "input_schema": SCHEMA}]
    history: Any = [
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": ARGUMENTS}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": json.dumps(RESULT)}]},
    ]
    async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as client:
        whole = await client.messages.create(model="m", max_tokens=TOKENS, messages=history, tools=tools)
        async with client.messages.stream(model="m", max_tokens=TOKENS, messages=history, tools=tools) as stream:
            deltas = [text async for text in stream.text_stream]
            final = await stream.get_final_message()
    return Seen(_anthropic_text(whole.content), deltas, [_anthropic_text(final.content)])


def _anthropic_text(blocks: Any) -> str:
    return "".join(b.text for b in blocks if b.type == "text")


async def gemini(base: str) -> Seen:
    tool = types.Tool(
        function_declarations=[
            types.FunctionDeclaration(name="get_weather", description=DESCRIPTION, parameters_json_schema=SCHEMA)
        ]
    )
    config = types.GenerateContentConfig(
        tools=[tool],
        max_output_tokens=TOKENS,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents = [
        types.Content(role="user", parts=[types.Part(text=QUESTION)]),
        types.Content(role="model", parts=[types.Part.from_function_call(name="get_weather", args=ARGUMENTS)]),
        types.Content(role="user", parts=[types.Part.from_function_response(name="get_weather", response=RESULT)]),
    ]

    # The sync client in a worker thread: google-genai's async one subclasses aiohttp's session, which warns.
    def ask() -> Seen:
        with genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base)) as client:
            whole = client.models.generate_content(model="m", contents=contents, config=config)
            stream = client.models.generate_content_stream(model="m", contents=contents, config=config)
            return Seen(whole.text or "", [c.text for c in stream if c.text], [])

    return await asyncio.to_thread(ask)


async def ollama_chat(base: str) -> Seen:
    tools: Any = [
        {"type": "function", "function": {"name": "get_weather", "description": DESCRIPTION, "parameters": SCHEMA}}
    ]
    history: Any = [
        {"role": "user", "content": QUESTION},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "get_weather", "arguments": ARGUMENTS}}],
        },
        {"role": "tool", "content": json.dumps(RESULT), "tool_name": "get_weather"},
    ]
    options = {"num_predict": TOKENS}
    async with ollama.AsyncClient(host=base) as client:
        whole = await client.chat(model="m", messages=history, tools=tools, options=options)
        stream = await client.chat(model="m", messages=history, tools=tools, options=options, stream=True)
        deltas = [part.message.content async for part in stream if part.message.content]
    return Seen(whole.message.content or "", deltas, [])


async def converse(base: str) -> Seen:
    tools = {
        "tools": [{"toolSpec": {"name": "get_weather", "description": DESCRIPTION, "inputSchema": {"json": SCHEMA}}}]
    }
    history: Any = [
        {"role": "user", "content": [{"text": QUESTION}]},
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "get_weather", "input": ARGUMENTS}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": RESULT}]}}]},
    ]
    asked: Any = {"modelId": "m", "messages": history, "toolConfig": tools, "inferenceConfig": {"maxTokens": TOKENS}}

    def ask() -> Seen:
        client = converse_client(base)
        with contextlib.closing(client):
            whole = client.converse(**asked)["output"]["message"]["content"]
            events = client.converse_stream(**asked)["stream"]
            deltas = [text for e in events if (text := e.get("contentBlockDelta", {}).get("delta", {}).get("text"))]
        return Seen("".join(b.get("text", "") for b in whole), deltas, [])

    return await asyncio.to_thread(ask)


ROUTES = [chat, responses, messages, gemini, ollama_chat, converse]


@dataclass(eq=False)
class LiveScripted(StreamedModel):
    """The scripted demo, streamed through the server's live path (text written as it comes) like the local model."""

    streams_text_first: ClassVar[bool] = True


def check(seen: Seen) -> None:
    streamed = "".join(seen.deltas)
    assert seen.whole, seen  # an answer, not a call
    assert streamed == seen.whole, seen
    assert all(text == seen.whole for text in seen.closing), seen


@pytest.fixture
async def scripted_url() -> AsyncIterator[str]:
    model: Model = LiveScripted(ScriptedDemo("weather"), chunk_size=3)
    async with serve(model) as url:
        yield url


@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.__name__)
async def test_the_scripted_models_stream_is_its_answer(scripted_url: str, route: Route) -> None:
    seen = await route(scripted_url)
    check(seen)
    assert "28" in seen.whole


@pytest.mark.slow
@pytest.mark.parametrize("route", ROUTES, ids=lambda r: r.__name__)
async def test_the_local_models_stream_after_a_tool_result_is_its_answer(local_url: str, route: Route) -> None:
    check(await route(local_url))


@dataclass(eq=False)
class Unsaid:
    """A model that streams a ``(`` its answer then leaves out, as the embedded model did before issue 36."""

    name: str = "unsaid"
    streams_text_first: ClassVar[bool] = True

    async def complete(self, request: Request) -> ModelResponse:
        return ModelResponse(message=Message.assistant("Hello."), stop_reason="end_turn")

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield TextChunk(text="(")
        yield ResponseDone(response=await self.complete(request))


async def test_a_stream_its_answer_does_not_continue_is_cut_short_not_patched_over(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, "toolslip.server")
    body = {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    async with serve(Unsaid()) as base, aiohttp.ClientSession() as session:
        async with session.post(f"{base}/v1/chat/completions", json=body) as reply:
            sent = await reply.text()
    assert sent.startswith("data: ") and "Hello" not in sent and "[DONE]" not in sent  # begun, then cut
    assert "unsaid streamed text that its answer does not begin with" in caplog.text
