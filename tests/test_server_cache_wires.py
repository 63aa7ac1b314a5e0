"""``toolslip serve`` counts the prompt cache on the Gemini and Bedrock Converse wires as those services do.

The clients are the official ones (google-genai, boto3's ``bedrock-runtime``) talking to the real
``toolslip serve --model scripted`` command on a free port:

- Gemini caches implicitly: a second request that starts with the first one's 2,048 tokens or more reads
  them (``usageMetadata.cachedContentTokenCount``, included in ``promptTokenCount``); nothing shorter is
  ever read, and nothing is billed as written;
- Converse caches only up to a ``cachePoint`` block: the first request writes the marked prefix
  (``cacheWriteInputTokens``), the next reads it (``cacheReadInputTokens``), ``inputTokens`` leaves both
  out, the stream's metadata event says the same, and an unmarked request is never cached.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import converse_client

ROOT = Path(__file__).resolve().parents[1]
POLICY = " ".join(
    f"Rule {i}: quote the order id, name the warehouse and never promise a delivery date the carrier has not "
    f"confirmed in writing."
    for i in range(1, 120)
)  # about 3,000 tokens: over both services' minimums


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    command = [sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted", "--port", "0", "--quiet"]
    child = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        yield next(line for line in child.stdout if line.startswith("toolslip serve: ")).split(" at ", 1)[1].split()[0]
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()


def test_gemini_reads_a_long_prefix_an_earlier_request_sent(base: str) -> None:
    from google import genai
    from google.genai import types

    config = types.GenerateContentConfig(system_instruction=POLICY)
    first_turn = [types.Content(role="user", parts=[types.Part(text="Where is order 4417?")])]
    second_turn = [
        *first_turn,
        types.Content(role="model", parts=[types.Part(text="It left the north warehouse on Monday.")]),
        types.Content(role="user", parts=[types.Part(text="And order 4418?")]),
    ]
    with genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base)) as client:
        first = client.models.generate_content(model="gemini-2.5-flash", contents=first_turn, config=config)
        second = client.models.generate_content(model="gemini-2.5-flash", contents=second_turn, config=config)
        chunks = list(
            client.models.generate_content_stream(model="gemini-2.5-flash", contents=second_turn, config=config)
        )
        short = [types.Content(role="user", parts=[types.Part(text="Hello there, how are you?")])]
        client.models.generate_content(model="gemini-2.5-flash", contents=short)
        again = client.models.generate_content(model="gemini-2.5-flash", contents=short)
    assert first.usage_metadata is not None and second.usage_metadata is not None
    assert not first.usage_metadata.cached_content_token_count  # nothing was sent before it
    cached, prompt = second.usage_metadata.cached_content_token_count, second.usage_metadata.prompt_token_count
    assert cached is not None and prompt is not None
    assert 2048 <= cached < prompt  # the system prompt and the first question: not the new turns
    assert prompt >= first.usage_metadata.prompt_token_count  # type: ignore[operator]  # the read is part of it
    streamed = chunks[-1].usage_metadata
    assert (
        streamed is not None and streamed.cached_content_token_count and streamed.cached_content_token_count >= cached
    )
    assert again.usage_metadata is not None and not again.usage_metadata.cached_content_token_count  # under 2,048


def _converse(system: list[dict[str, Any]], question: str) -> dict[str, Any]:
    return {
        "modelId": "anthropic.claude-sonnet-4-5",
        "system": system,
        "messages": [{"role": "user", "content": [{"text": question}]}],
        "inferenceConfig": {"maxTokens": 200},
    }


def test_converse_writes_a_marked_prefix_and_reads_it_back(base: str) -> None:
    marked = [{"text": POLICY}, {"cachePoint": {"type": "default"}}]
    unmarked = [{"text": POLICY + " (unmarked)"}]
    with contextlib.closing(converse_client(base)) as client:
        first = client.converse(**_converse(marked, "Where is order 4417?"))["usage"]
        second = client.converse(**_converse(marked, "And order 4418?"))["usage"]
        stream = client.converse_stream(**_converse(marked, "And order 4419?"))["stream"]
        (metadata,) = [event["metadata"] for event in stream if "metadata" in event]
        client.converse(**_converse(unmarked, "Where is order 4417?"))
        plain = client.converse(**_converse(unmarked, "Where is order 4417?"))["usage"]
    assert first["cacheWriteInputTokens"] > 2000 and "cacheReadInputTokens" not in first
    assert second["cacheReadInputTokens"] == first["cacheWriteInputTokens"] and "cacheWriteInputTokens" not in second
    assert second["inputTokens"] < 100  # the question alone: reads and writes are left out of inputTokens
    assert second["totalTokens"] == second["inputTokens"] + second["cacheReadInputTokens"] + second["outputTokens"]
    assert metadata["usage"]["cacheReadInputTokens"] == first["cacheWriteInputTokens"]
    assert "cacheReadInputTokens" not in plain and "cacheWriteInputTokens" not in plain


def test_ollama_counts_no_cache(base: str) -> None:
    import ollama

    messages = [{"role": "system", "content": POLICY}, {"role": "user", "content": "Where is order 4417?"}]
    with ollama.Client(host=base) as client:
        first = client.chat(model="llama3.2", messages=messages, stream=False)
        second = client.chat(model="llama3.2", messages=messages, stream=False)
    assert first.prompt_eval_count == second.prompt_eval_count > 2000  # the whole prompt, every time
