"""``toolslip serve --model local`` streams the embedded model's text as it is decoded, on every streaming route.

Before, a streamed answer was written only once the model had finished: the client saw a pause as long as the
whole generation, then every delta at once. Here each official SDK streams one short answer and notes, for
every text delta, whether the model was still decoding when it arrived (the loaded model's lock is held for
the whole generation). A stream written at the end has no such delta; a live one has several. No timing
threshold: the machine running the tests is shared and its speed varies tenfold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable

import aiohttp
import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import types

from conftest import converse_client
from toolslip.providers.local import LocalModel

pytestmark = pytest.mark.slow

PROMPT = "Count from one to twenty in words, separated by commas."
TOKENS = 48

Deltas = AsyncIterator[str]


@pytest.fixture
def base(local_url: str) -> str:
    return local_url


async def chat(base: str) -> Deltas:
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        messages: list[openai.types.chat.ChatCompletionMessageParam] = [{"role": "user", "content": PROMPT}]
        stream = await client.chat.completions.create(model="m", messages=messages, max_tokens=TOKENS, stream=True)
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                yield chunk.choices[0].delta.content


async def responses(base: str) -> Deltas:
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        stream = await client.responses.create(model="m", input=PROMPT, max_output_tokens=TOKENS, stream=True)
        async for event in stream:
            if event.type == "response.output_text.delta":
                yield event.delta


async def messages(base: str) -> Deltas:
    async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as client:
        question: list[anthropic.types.MessageParam] = [{"role": "user", "content": PROMPT}]
        async with client.messages.stream(model="m", max_tokens=TOKENS, messages=question) as stream:
            async for text in stream.text_stream:
                yield text


async def in_thread(read: Callable[[Callable[[str], None]], None]) -> Deltas:
    """The texts a sync SDK's stream hands to its callback in a worker thread, as they arrive."""
    loop, queue = asyncio.get_running_loop(), asyncio.Queue[str | None]()
    reading = asyncio.ensure_future(asyncio.to_thread(read, lambda t: loop.call_soon_threadsafe(queue.put_nowait, t)))
    reading.add_done_callback(lambda _: queue.put_nowait(None))
    while (text := await queue.get()) is not None:
        yield text
    await reading


def gemini(base: str) -> Deltas:
    # google-genai's async client subclasses aiohttp's session, which aiohttp warns about: the sync one
    def read(hand_on: Callable[[str], None]) -> None:
        config = types.GenerateContentConfig(max_output_tokens=TOKENS)
        with genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base)) as client:
            for chunk in client.models.generate_content_stream(model="m", contents=PROMPT, config=config):
                if chunk.text:
                    hand_on(chunk.text)

    return in_thread(read)


def converse(base: str) -> Deltas:
    def read(hand_on: Callable[[str], None]) -> None:
        client = converse_client(base)
        question = [{"role": "user", "content": [{"text": PROMPT}]}]
        with contextlib.closing(client):
            reply = client.converse_stream(modelId="m", messages=question, inferenceConfig={"maxTokens": TOKENS})
            for event in reply["stream"]:
                if text := event.get("contentBlockDelta", {}).get("delta", {}).get("text"):
                    hand_on(text)

    return in_thread(read)


async def ollama_chat(base: str) -> Deltas:
    question = [{"role": "user", "content": PROMPT}]
    async with ollama.AsyncClient(host=base) as client:
        stream = await client.chat(model="m", messages=question, stream=True, options={"num_predict": TOKENS})
        async for part in stream:
            if part.message.content:
                yield part.message.content


Route = Callable[[str], Deltas]


@pytest.mark.parametrize("route", [chat, responses, messages, gemini, ollama_chat, converse], ids=lambda r: r.__name__)
async def test_text_reaches_the_client_while_the_model_is_still_decoding(
    base: str, local: LocalModel, route: Route
) -> None:
    decoding = local.load().lock.locked
    seen: list[tuple[str, bool]] = [(text, decoding()) async for text in route(base)]
    early = [text for text, live in seen if live]
    # The answer is several deltas long, and most of them arrived before the model had finished.
    assert len(seen) >= 4 and seen[0][1], seen
    assert len(early) >= 3, seen
    words = "".join(text for text, _ in seen).lower()
    assert "one" in words and "two" in words


async def test_a_client_that_hangs_up_stops_the_generation(
    base: str, local: LocalModel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "toolslip.server")
    loaded = local.load()
    story = [{"role": "user", "content": "Write a long story, at least 600 words, about a dragon."}]
    body = {"model": "m", "messages": story, "max_tokens": 600, "stream": True}
    async with aiohttp.ClientSession() as session, session.post(f"{base}/v1/chat/completions", json=body) as reply:
        lines = [await reply.content.readline() for _ in range(4)]
    assert all(lines) and loaded.lock.locked()  # it was still writing when the client left
    assert await asyncio.to_thread(loaded.lock.acquire, timeout=60)  # the generation ends...
    loaded.lock.release()
    # Stopped long before its 600 tokens (the context holds the prompt and what was generated).
    assert loaded.llama.n_tokens < 300, loaded.llama.n_tokens
    assert "the client closed the connection before the answer was complete" in caplog.text
