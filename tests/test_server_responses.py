"""``POST /v1/responses`` in ``toolslip serve``: the official SDK's Responses client over loopback HTTP.

The whole expenses loop over this endpoint (plain, ``stream=True`` and the stream helper) is in
``test_end_to_end.py``; here each streamed answer is compared with the plain one, and the errors.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import openai
import orjson
import pytest

from toolslip import Agent, Message, ModelResponse, ProviderError, Request
from toolslip.cli.files import load_tools_file
from toolslip.formats import openai_responses
from toolslip.formats.sse import SSEDecoder
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve
from toolslip.testing import FunctionModel

TOOLS = load_tools_file(str(Path(__file__).parents[1] / "examples" / "expenses.py"))
QUESTION = "I spent 320 USD and 15000 JPY. How much in CNY, and per person for 4?"
WIRE_TOOLS: Any = openai_responses.tools_to_wire(TOOLS.specs())


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with serve(ScriptedDemo("expenses")) as url:
        yield url


@pytest.fixture
async def client(base: str) -> AsyncIterator[openai.AsyncOpenAI]:
    oai = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="not-needed", max_retries=0)
    yield oai
    await oai.close()


def turns() -> list[list[Message]]:
    """The expenses conversation at each of its five turns (the demo model is stateless)."""
    result = Agent(model=ScriptedDemo("expenses"), tools=TOOLS).run(QUESTION)
    return [result.messages[:i] for i, m in enumerate(result.messages) if m.role == "assistant"]


TURNS = turns()


def comparable(output: Any) -> list[dict[str, Any]]:
    """Output items as dicts without the ids the demo model makes fresh for every answer (and without the
    empty ``parsed`` slots the SDK's stream helper adds)."""
    return [
        {k: v for k, v in item.model_dump(exclude_none=True).items() if k not in ("id", "call_id")} for item in output
    ]


async def test_each_streamed_answer_equals_the_plain_one(client: openai.AsyncOpenAI) -> None:
    for turn in TURNS:
        kwargs: Any = {"model": "gpt-4o-mini", "input": openai_responses.messages_to_wire(turn), "tools": WIRE_TOOLS}
        plain = await client.responses.create(**kwargs)
        events = [event async for event in await client.responses.create(**kwargs, stream=True)]
        async with client.responses.stream(**kwargs) as helper:
            helped = [event.type async for event in helper]
            final = await helper.get_final_response()
        completed = events[-1]
        assert events[0].type == "response.created" and completed.type == "response.completed"
        assert helped == [e.type for e in events]
        for streamed in (completed.response, final):
            assert comparable(streamed.output) == comparable(plain.output)
            assert (streamed.status, streamed.usage, streamed.output_text) == (
                plain.status,
                plain.usage,
                plain.output_text,
            )
        deltas = "".join(e.delta for e in events if e.type == "response.function_call_arguments.delta")
        assert deltas == "".join(item.arguments for item in plain.output if item.type == "function_call")
    assert plain.output_text.endswith("750.65 CNY each.")


async def test_the_wire_is_named_numbered_events_without_done(base: str) -> None:
    body = {"model": "m", "input": QUESTION, "tools": WIRE_TOOLS, "stream": True}
    async with aiohttp.ClientSession() as http, http.post(f"{base}/v1/responses", json=body) as answer:
        assert answer.status == 200 and answer.content_type == "text/event-stream"
        events = SSEDecoder().feed(await answer.read())
    data = [orjson.loads(e.data) for e in events]
    assert [e.event for e in events] == [d["type"] for d in data]
    assert [d["sequence_number"] for d in data] == list(range(len(data)))
    assert data[-1]["response"]["output"][0]["name"] == "fx" and data[-1]["response"]["status"] == "completed"


async def test_bad_requests_answer_in_openais_error_shape(client: openai.AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as wizard:
        await client.responses.create(model="m", input=[{"role": "wizard", "content": "hi"}])  # type: ignore[list-item,misc]
    assert isinstance(wizard.value.body, dict) and wizard.value.body["param"] == "input[0]"
    assert "unknown role 'wizard'" in wizard.value.body["message"]
    with pytest.raises(openai.BadRequestError) as chained:
        await client.responses.create(model="m", input="and now?", previous_response_id="resp_123")
    assert isinstance(chained.value.body, dict) and chained.value.body["param"] == "previous_response_id"
    assert "stores no responses" in chained.value.body["message"]
    with pytest.raises(openai.BadRequestError, match="server tools are not available locally: web_search"):
        await client.responses.create(model="m", input="news?", tools=[{"type": "web_search"}])
    with pytest.raises(openai.BadRequestError, match="server tools are not available locally"):
        await client.responses.create(model="m", input="news?", tools=[{"type": "web_search"}], stream=True)


async def test_a_failing_model_answers_with_its_status() -> None:
    def overloaded(request: Request) -> ModelResponse:
        raise ProviderError("upstream answered 503: try later", status=503, retryable=True)

    async with serve(FunctionModel(overloaded)) as url:
        oai = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="try later") as info:
            await oai.responses.create(model="m", input="hi", stream=True)
        await oai.close()
    assert info.value.status_code == 503
