"""The seed's expenses task end to end over loopback HTTP: ``toolslip serve`` with the stateless scripted
expenses model, driven by the official SDKs (the hand-written loop of the seed, over Chat Completions,
the Responses API and Anthropic Messages) and by toolslip's own transports through the Agent.
320 USD + 15000 JPY = 3002.6 CNY, 750.65 CNY each; 4 tool calls, 5 requests.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from toolslip import Agent, ModelResponse, Request
from toolslip.cli.files import load_tools_file
from toolslip.model import Model
from toolslip.providers import resolve_model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel, OpenAIResponsesModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve

TOOLS = load_tools_file(str(Path(__file__).resolve().parents[1] / "examples" / "expenses.py"))
SYSTEM = "You are careful. Call a tool for every sum and every exchange rate; never compute in your head."
QUESTION = "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY, and how much each if 4 people split it?"
EXPECTED_RESULTS = ["320 USD = 2297.6 CNY", "15000 JPY = 705.0 CNY", "3002.6", "750.65"]


@dataclass
class Counted:
    """The served model, counting the requests that reached it."""

    inner: Model
    requests: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, request: Request) -> ModelResponse:
        self.requests += 1
        return await self.inner.complete(request)


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, Counted]]:
    model = Counted(ScriptedDemo("expenses"))
    async with serve(model) as url:
        yield url, model


async def run_tool(name: str, arguments: dict[str, Any]) -> str:
    output = await TOOLS[name].invoke(arguments)
    assert isinstance(output, str)
    return output


async def test_openai_sdk_runs_the_seed_loop_by_hand(server: tuple[str, Counted]) -> None:
    url, served = server
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    tools: Any = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS
    ]
    messages: list[Any] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": QUESTION}]
    results, answer = [], None
    for _ in range(8):
        reply = await client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=tools, temperature=0)
        message = reply.choices[0].message
        messages.append(message)  # the slip goes into the history as it came, before its results
        if not message.tool_calls:
            answer = message.content
            break
        for call in message.tool_calls:
            assert call.type == "function"
            output = await run_tool(call.function.name, json.loads(call.function.arguments))
            results.append(output)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    await client.close()
    assert results == EXPECTED_RESULTS
    assert answer is not None and "3002.6 CNY in total" in answer and "750.65 CNY each" in answer
    assert served.requests == 5


async def test_anthropic_sdk_runs_the_seed_loop_by_hand(server: tuple[str, Counted]) -> None:
    url, served = server
    client = anthropic.AsyncAnthropic(base_url=url, api_key="not-needed", max_retries=0)
    tools: Any = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    results, answer = [], None
    for _ in range(8):
        reply = await client.messages.create(
            model="scripted-expenses", max_tokens=1024, system=SYSTEM, tools=tools, messages=messages
        )
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            answer = "".join(b.text for b in reply.content if b.type == "text")
            break
        blocks = []
        for block in reply.content:
            if block.type == "tool_use":
                assert isinstance(block.input, dict)
                output = await run_tool(block.name, block.input)
                results.append(output)
                blocks.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": blocks})  # Anthropic has no tool role
    await client.close()
    assert results == EXPECTED_RESULTS
    assert answer is not None and "3002.6 CNY in total" in answer and "750.65 CNY each" in answer
    assert served.requests == 5


RESPONSES_TOOLS: Any = [
    {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": False}
    for t in TOOLS
]


async def responses_turn(client: openai.AsyncOpenAI, items: list[Any], how: str) -> Any:
    """One ``POST /v1/responses``: plain, ``stream=True`` read event by event, or the SDK's stream helper."""
    kwargs: Any = {"model": "gpt-4o-mini", "instructions": SYSTEM, "input": items, "tools": RESPONSES_TOOLS}
    if how == "create":
        return await client.responses.create(**kwargs)
    if how == "helper":
        async with client.responses.stream(**kwargs) as helper:
            return await helper.get_final_response()
    stream = await client.responses.create(**kwargs, stream=True)
    text, numbers, final = "", [], None
    async for event in stream:
        numbers.append(event.sequence_number)
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.completed":
            final = event.response
    assert final is not None and numbers == list(range(len(numbers)))
    assert text == final.output_text  # the deltas add up to the final text
    return final


@pytest.mark.parametrize("how", ["create", "stream", "helper"])
async def test_openai_sdk_runs_the_seed_loop_over_the_responses_api(server: tuple[str, Counted], how: str) -> None:
    url, served = server
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    results, answer = [], None
    for _ in range(8):
        reply = await responses_turn(client, items, how)
        items += reply.output  # the function_call items go back as they came, before their outputs
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            answer = reply.output_text
            break
        for call in calls:
            output = await run_tool(call.name, json.loads(call.arguments))
            results.append(output)
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    await client.close()
    assert results == EXPECTED_RESULTS
    assert answer is not None and "3002.6 CNY in total" in answer and "750.65 CNY each" in answer
    assert served.requests == 5


def tool_outputs(messages: list[Any]) -> list[str]:
    return [r.text for m in messages for r in m.tool_results]


@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic"])
async def test_toolslip_transports_run_the_task_through_the_agent(server: tuple[str, Counted], protocol: str) -> None:
    url, served = server
    model = (
        AnthropicModel("scripted-expenses", base_url=url, api_key="sk-ant-local")
        if protocol == "anthropic"
        else resolve_model(f"{protocol}:gpt-4o-mini@{url}/v1")
    )
    assert isinstance(model, OpenAIChatModel | OpenAIResponsesModel | AnthropicModel)
    assert model.name == f"{protocol}:{model.model}" or protocol == "anthropic"
    result = await Agent(model=model, tools=TOOLS, system=SYSTEM).arun(QUESTION)
    await model.aclose()
    assert result.ok and (result.steps, result.tool_calls) == (5, 4)
    assert tool_outputs(result.messages) == EXPECTED_RESULTS
    assert "3002.6" in result.output and "750.65" in result.output
    assert served.requests == 5


async def test_many_concurrent_runs_share_one_stateless_scripted_server(server: tuple[str, Counted]) -> None:
    url, served = server
    models = [OpenAIChatModel("m", base_url=f"{url}/v1"), AnthropicModel("m", base_url=url)]
    agents = [Agent(model=m, tools=TOOLS) for m in models]
    results = await asyncio.gather(*(agents[i % 2].arun(QUESTION) for i in range(40)))
    for model in models:
        await model.aclose()
    assert all(tool_outputs(r.messages) == EXPECTED_RESULTS and "750.65" in r.output for r in results)
    assert served.requests == 40 * 5


@pytest.fixture
def threaded_server() -> Iterator[str]:
    """The server in a thread of its own, for code that runs its own event loops (``Agent.run``)."""
    loop = asyncio.new_event_loop()
    ready: asyncio.Future[str] = loop.create_future()
    stop = asyncio.Event()

    async def main() -> None:
        async with serve(ScriptedDemo("expenses")) as url:
            ready.set_result(url)
            await stop.wait()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),))
    thread.start()
    try:
        yield asyncio.run_coroutine_threadsafe(asyncio.wait_for(asyncio.shield(ready), 30), loop).result()
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()


def test_sync_runs_reuse_the_transport_across_event_loops(threaded_server: str) -> None:
    model = OpenAIChatModel("gpt-4o-mini", base_url=f"{threaded_server}/v1")
    agent = Agent(model=model, tools=TOOLS)
    first, second = agent.run(QUESTION), agent.run(QUESTION)  # each call runs in a fresh event loop
    assert tool_outputs(first.messages) == tool_outputs(second.messages) == EXPECTED_RESULTS
