"""Anthropic message threads against ``toolslip serve``: the official SDK's default tool runner finishes its loop.

The Python SDK's tool runner threads its requests unless told ``thread=False``: the first turn creates the
thread, each later one continues it with only the new messages (no ``system``, no ``tools``). Before, ``serve``
refused the continue (``--model scripted``: a ``tool_result`` with no call before it) or the create (``--model
local``: a setting it does not understand). Each test records the bodies the SDK sent, so a runner that
quietly fell back to whole histories would not pass.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import anthropic
import pytest
from anthropic import beta_async_tool

from toolslip.core.errors import FormatError
from toolslip.core.messages import Settings
from toolslip.core.model import Model
from toolslip.formats import anthropic as anthropic_format
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.local import LocalModel
from toolslip.providers.scripted import call
from toolslip.server import serve
from toolslip.testing import ScriptedModel

SYSTEM = "You answer weather questions with the get_weather tool."
QUESTION = "What's the weather in Beijing?"


@beta_async_tool
async def get_weather(city: str) -> str:
    """Current weather of a city.

    Args:
        city: The city's name.
    """
    return json.dumps({"city": city, "temp": 28, "unit": "celsius", "desc": "cloudy"})


async def run_tool_runner(base: str, *, stream: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The default tool runner's final text, and the request bodies it sent (streamed, or not)."""
    sent: list[dict[str, Any]] = []

    async def record(request: Any) -> None:
        sent.append(json.loads(request.content))

    http = anthropic.DefaultAsyncHttpxClient(event_hooks={"request": [record]})
    async with anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0, http_client=http) as client:
        runner = client.beta.messages.tool_runner(
            model="m",
            max_tokens=80,
            system=SYSTEM,
            tools=[get_weather],
            messages=[{"role": "user", "content": QUESTION}],
            max_iterations=4,
            stream=stream,
        )
        if stream:  # each turn's events are read as they come, as a streaming loop does
            async for turn in runner:
                async for _ in turn:
                    pass
        final = await runner.until_done()
    return "".join(b.text for b in final.content if b.type == "text"), sent


def check_threaded(sent: list[dict[str, Any]]) -> None:
    """A create with the whole request, then continues that carry only the turn's new messages."""
    assert len(sent) >= 2, sent
    assert sent[0]["thread"] == {"type": "create"} and sent[0]["system"] == SYSTEM and sent[0]["tools"]
    for body in sent[1:]:
        assert body["thread"]["type"] == "continue", body
        assert body["thread"]["previous_message_id"].startswith("msg_01"), body
        assert "system" not in body and "tools" not in body, body
        assert len(body["messages"]) == 1 and body["messages"][0]["content"][0]["type"] == "tool_result", body


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[ScriptedModel, str]]:
    model = ScriptedModel([call("get_weather", city="Beijing"), "It is 28 °C and cloudy in Beijing."])
    async with serve(model) as url:
        yield model, url


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_the_sdks_default_tool_runner_threads_its_loop_against_the_scripted_model(
    scripted: tuple[ScriptedModel, str], stream: bool
) -> None:
    model, base = scripted
    text, sent = await run_tool_runner(base, stream=stream)
    assert text == "It is 28 °C and cloudy in Beijing."
    check_threaded(sent)
    # The model was asked the whole conversation each time: the server put the thread back together.
    second = model.requests[1]
    assert [m.role for m in second.messages] == ["system", "user", "assistant", "tool"]
    assert second.messages[0].text == SYSTEM and [t.name for t in second.tools] == ["get_weather"]
    assert second.messages[2].tool_calls[0].id == second.messages[3].tool_results[0].call_id


@pytest.mark.slow
async def test_the_sdks_default_tool_runner_threads_its_loop_against_the_local_model(
    local: LocalModel, local_url: str
) -> None:
    text, sent = await run_tool_runner(local_url)
    assert text.strip(), sent
    check_threaded(sent)


async def ask(client: anthropic.AsyncAnthropic, thread: Any, content: Any) -> Any:
    return await client.beta.messages.create(
        model="m", max_tokens=50, messages=[{"role": "user", "content": content}], thread=thread
    )


async def test_a_thread_the_server_cannot_continue_is_refused_in_the_words_the_sdk_recovers_from() -> None:
    model: Model = ScriptedModel(["One.", "Two.", "Three."], cycle=True)
    async with serve(model) as base, anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0) as client:
        with pytest.raises(anthropic.NotFoundError) as missing:
            await ask(client, {"type": "continue", "previous_message_id": "msg_01nothing"}, "Hi")
        assert missing.value.error_code == "thread_not_found"
        first = await ask(client, {"type": "create"}, "Hi")
        second = await ask(client, {"type": "continue", "previous_message_id": first.id}, "And then?")
        assert second.content[0].text == "Two."
        with pytest.raises(anthropic.BadRequestError) as again:
            await ask(client, {"type": "continue", "previous_message_id": first.id}, "Once more?")
        assert again.value.error_code == "thread_already_continued"
        with pytest.raises(anthropic.BadRequestError) as malformed:
            await ask(client, {"type": "continue"}, "Hi")
        assert "previous_message_id" in str(malformed.value)


def test_the_anthropic_format_reads_checks_and_writes_a_thread() -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}]}
    thread = {"type": "continue", "previous_message_id": "msg_01abc"}
    request = anthropic_format.request_from_wire({**body, "thread": thread})
    assert request.settings.extra["thread"] == thread
    assert anthropic_format.request_to_wire(request)["thread"] == thread  # written back, never dropped
    with pytest.raises(FormatError, match="previous_message_id"):
        anthropic_format.request_from_wire({**body, "thread": {"type": "continue"}})


def test_the_anthropic_transport_sends_the_threads_beta_with_a_thread() -> None:
    model = AnthropicModel("claude-x", api_key="x", headers={"anthropic-beta": "files-api-2025-04-14"})
    asked = anthropic_format.request_from_wire(
        {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "Hi"}], "thread": {"type": "create"}}
    )
    headers = model.headers_for(asked)
    assert headers == {"anthropic-beta": f"files-api-2025-04-14,{anthropic_format.MESSAGE_THREADS_BETA}"}
    assert model.headers_for(dataclasses.replace(asked, settings=Settings())) is None
