"""``toolslip serve`` streams in every protocol: the official SDKs' streaming helpers are the clients.

Each streamed answer is compared with the non-streamed answer to the same request, over loopback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from toolslip import Agent, Message
from toolslip.cli.files import load_tools_file
from toolslip.events import Event, TextDelta, ToolCallReady
from toolslip.formats import anthropic as anthropic_format
from toolslip.formats import openai_chat
from toolslip.messages import Request
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel, OpenAIResponsesModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve
from toolslip.streaming import ResponseDone, TextChunk

TOOLS = load_tools_file(str(Path(__file__).parents[1] / "examples" / "expenses.py"))
QUESTION = "I spent 320 USD and 15000 JPY. How much in CNY, and per person for 4?"
OPENAI_TOOLS: Any = openai_chat.tools_to_wire(TOOLS.specs())
ANTHROPIC_TOOLS: Any = anthropic_format.tools_to_wire(TOOLS.specs())


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(ScriptedDemo("expenses")) as url:
        yield url


def transcripts() -> list[list[Message]]:
    """The expenses conversation at each of its five turns (the demo model is stateless)."""
    result = Agent(model=ScriptedDemo("expenses"), tools=TOOLS).run(QUESTION)
    cuts = [i for i, m in enumerate(result.messages) if m.role == "assistant"]
    return [result.messages[:i] for i in cuts]


TURNS = transcripts()


def without_ids(blocks: Any) -> list[dict[str, Any]]:
    """Content blocks as dicts, call ids left out (the demo model makes fresh ones for every answer)."""
    return [{k: v for k, v in b.model_dump().items() if k != "id"} for b in blocks]


async def test_openai_sdk_stream_rebuilds_each_non_streamed_answer(base: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="not-needed", max_retries=0)
    async with client:
        for turn in TURNS:
            messages: Any = openai_chat.messages_to_wire(turn)
            plain = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=OPENAI_TOOLS)
            # the raw stream, reassembled by hand the way SDK users do
            stream = await client.chat.completions.create(
                model="gpt-4o-mini",
                messages=messages,
                tools=OPENAI_TOOLS,
                stream=True,
                stream_options={"include_usage": True},
            )
            text, calls, finish, usage = "", {}, None, None
            async for chunk in stream:
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    finish = choice.finish_reason or finish
                    for delta in choice.delta.tool_calls or ():
                        entry = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                        entry["id"] += delta.id or ""
                        entry["name"] += (delta.function and delta.function.name) or ""
                        entry["arguments"] += (delta.function and delta.function.arguments) or ""
            expected = plain.choices[0]
            assert text == (expected.message.content or "")
            # the demo model gives every answer fresh call ids; all else must match
            assert all(c.pop("id").startswith("call_") for c in calls.values())
            assert [calls[i] for i in sorted(calls)] == [
                {"name": c.function.name, "arguments": c.function.arguments}
                for c in expected.message.tool_calls or ()
                if c.type == "function"
            ]
            assert finish == expected.finish_reason and usage == plain.usage
            # the SDK's own streaming helper
            async with client.chat.completions.stream(
                model="gpt-4o-mini", messages=messages, tools=OPENAI_TOOLS
            ) as helper:
                final = await helper.get_final_completion()
            message = final.choices[0].message
            assert message.content == expected.message.content
            assert [(c.function.name, c.function.arguments) for c in message.tool_calls or ()] == [
                (c.function.name, c.function.arguments) for c in expected.message.tool_calls or ()
            ]


async def test_openai_usage_chunk_only_when_asked_for(base: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="not-needed", max_retries=0)
    async with client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": QUESTION}], tools=OPENAI_TOOLS, stream=True
        )
        chunks = [c async for c in stream]
    assert all(c.usage is None and c.choices for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


async def test_anthropic_sdk_stream_rebuilds_each_non_streamed_answer(base: str) -> None:
    client = anthropic.AsyncAnthropic(base_url=base, api_key="not-needed", max_retries=0)
    async with client:
        for turn in TURNS:
            messages: Any = anthropic_format.messages_to_wire(turn)
            kwargs: Any = {"model": "claude", "max_tokens": 512, "messages": messages, "tools": ANTHROPIC_TOOLS}
            plain = await client.messages.create(**kwargs)
            async with client.messages.stream(**kwargs) as helper:
                text = "".join([piece async for piece in helper.text_stream])
                final = await helper.get_final_message()
            assert without_ids(final.content) == without_ids(plain.content)
            assert (final.stop_reason, final.usage.output_tokens) == (plain.stop_reason, plain.usage.output_tokens)
            assert text == "".join(b.text for b in plain.content if b.type == "text")
            raw = await client.messages.create(**kwargs, stream=True)
            kinds = [event.type async for event in raw]
            assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]


@pytest.mark.parametrize("provider", ["openai", "openai-responses", "anthropic"])
async def test_our_streaming_transports_equal_their_plain_calls_and_drive_the_loop(base: str, provider: str) -> None:
    def model() -> OpenAIChatModel | OpenAIResponsesModel | AnthropicModel:
        if provider == "openai":
            return OpenAIChatModel("gpt-4o-mini", base_url=f"{base}/v1", max_retries=0)
        if provider == "openai-responses":
            return OpenAIResponsesModel("gpt-4o-mini", base_url=f"{base}/v1", max_retries=0)
        return AnthropicModel("claude", base_url=base, max_retries=0)

    streaming, plain_model = model(), model()
    try:
        plain = await Agent(model=plain_model, tools=TOOLS, stream=False).arun(QUESTION)
        events: list[Event] = []
        streamed = await Agent(model=streaming, tools=TOOLS, stream=True).arun(QUESTION, on_event=events.append)
        second = Request(model="", messages=tuple(TURNS[1]), tools=TOOLS.specs())
        pieces = [e async for e in streaming.stream(second)]
    finally:
        await streaming.aclose()
        await plain_model.aclose()
    assert streamed.output == plain.output and "750.65" in streamed.output
    assert [[(c.name, c.arguments) for c in m.tool_calls] for m in streamed.messages] == [
        [(c.name, c.arguments) for c in m.tool_calls] for m in plain.messages
    ]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == streamed.output
    assert [e.call.name for e in events if isinstance(e, ToolCallReady)] == ["fx", "fx", "calc", "calc"]
    assert isinstance(pieces[-1], ResponseDone) and not any(isinstance(p, TextChunk) for p in pieces)
