"""``toolslip serve --model local``: the embedded model behind each endpoint, through the official SDKs.

One short request per endpoint (a few tokens each: the model is slow on a shared 2-core machine). They
check what only a real model gives: usage counted by its tokenizer, a ``length`` stop at ``max_tokens``,
and a grammar-constrained tool call served with the protocol's ids.
"""

from __future__ import annotations

import anthropic
import openai
import pytest

from _sdk_fields import RESPONSES_REFUSED, SDK_TYPES, fields

pytestmark = pytest.mark.slow

WEATHER = {
    "name": "get_weather",
    "description": "Current weather of a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


@pytest.fixture
def base(local_url: str) -> str:
    return local_url


async def test_chat_counts_the_models_tokens_and_stops_at_max_tokens(base: str) -> None:
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
        reply = await oai.chat.completions.create(
            model="qwen", messages=[{"role": "user", "content": "Count from one to twenty in words."}], max_tokens=5
        )
    assert reply.model == "qwen" and reply.id.startswith("chatcmpl-") and len(reply.id) == len("chatcmpl-") + 29
    choice, usage = reply.choices[0], reply.usage
    assert choice.finish_reason == "length" and choice.message.content
    assert usage is not None and usage.completion_tokens == 5 and usage.prompt_tokens > 10


async def test_responses_stream_from_the_local_model(base: str) -> None:
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
        events = [
            e
            async for e in await oai.responses.create(
                model="qwen", input="Say hello.", max_output_tokens=16, instructions="Be brief.", stream=True
            )
        ]
    done = events[-1]
    assert events[0].type == "response.created" and done.type in ("response.completed", "response.incomplete")
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text and text == done.response.output_text
    assert done.response.instructions == "Be brief." and done.response.id.startswith("resp_")
    assert done.response.usage is not None and 0 < done.response.usage.output_tokens <= 16


async def test_messages_tool_call_from_the_local_model(base: str) -> None:
    async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as claude:
        reply = await claude.messages.create(
            model="claude-local",
            max_tokens=48,
            messages=[{"role": "user", "content": "What's the weather in Paris?"}],
            tools=[WEATHER],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "get_weather"},
        )
    assert reply.model == "claude-local" and reply.stop_reason == "tool_use"
    block = next(b for b in reply.content if b.type == "tool_use")
    assert block.name == "get_weather" and isinstance(block.input, dict) and "city" in block.input
    assert block.id.startswith("toolu_01") and len(block.id) == len("toolu_01") + 22
    assert reply.usage.input_tokens > 20 and reply.usage.output_tokens > 0


# Sent together: what the real services refuse outright is covered one field at a time in test_server_fields.py.
LEFT_OUT = {"chat": {"web_search_options", "stream_options"}, "responses": set(RESPONSES_REFUSED), "messages": set()}


async def test_every_sdk_field_at_once_is_answered_and_the_ignored_ones_named(base: str) -> None:
    bodies = {kind: {k: v for k, v in fields(kind).items() if k not in LEFT_OUT[kind]} for kind in SDK_TYPES}
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as oai:
        chat = await oai.chat.completions.with_raw_response.create(
            model="m", messages=[{"role": "user", "content": "Say hi."}], **bodies["chat"]
        )
        responses = await oai.responses.with_raw_response.create(model="m", input="Say hi.", **bodies["responses"])
    async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as claude:
        messages = await claude.messages.with_raw_response.create(
            model="m", max_tokens=8, messages=[{"role": "user", "content": "Say hi."}], **bodies["messages"]
        )
    ignored = {
        kind: set(raw.headers.get("x-toolslip-ignored", "").split(","))
        for kind, raw in (("chat", chat), ("responses", responses), ("messages", messages))
    }
    # openai's raw response parses at once; anthropic's reads the body first
    assert chat.parse().choices[0].message.content and responses.parse().output_text
    assert (await messages.parse()).content
    assert {"logprobs", "top_logprobs", "reasoning_effort", "audio", "logit_bias"} <= ignored["chat"]
    assert {"include", "reasoning", "truncation", "top_logprobs"} <= ignored["responses"]
    assert {"metadata", "speed", "inference_geo"} <= ignored["messages"]
    honoured = {"seed", "top_p", "temperature", "max_tokens", "max_completion_tokens", "frequency_penalty"}
    honoured |= {"presence_penalty", "stop", "tools", "tool_choice", "thinking", "max_tool_calls", "modalities"}
    assert not honoured & (ignored["chat"] | ignored["responses"] | ignored["messages"])
