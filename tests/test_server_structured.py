"""Structured output through ``toolslip serve``: the official SDKs' parse helpers are the clients.

``client.chat.completions.parse(response_format=Expense)``, ``client.responses.parse(text_format=Expense)``
and Anthropic's ``messages.parse(output_format=Expense)`` run the seed's expense loop by hand against the
stateless scripted demo; the served model reads the schema from each request's own field and answers in
it, and each helper's own parser turns the answer into an ``Expense``. toolslip's transports then run the
same question through the Agent in each mode over each wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from pydantic import BaseModel, Field

from toolslip import Agent
from toolslip.cli.files import load_tools_file
from toolslip.formats.structured import strict_schema
from toolslip.model import Model
from toolslip.providers import resolve_model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve

TOOLS = load_tools_file(str(Path(__file__).resolve().parents[1] / "examples" / "expenses.py"))
QUESTION = "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY, and how much each if 4 people split it?"
RESULTS = ["320 USD = 2297.6 CNY", "15000 JPY = 705.0 CNY", "3002.6", "750.65"]


class Expense(BaseModel):
    """What the trip cost, in Chinese yuan."""

    total_cny: float = Field(description="All expenses together, in CNY.")
    per_person_cny: float = Field(description="One person's share, in CNY.")


EXPENSE = Expense(total_cny=3002.6, per_person_cny=750.65)


@pytest.fixture
async def url() -> AsyncIterator[str]:
    async with serve(ScriptedDemo()) as base:
        yield base


async def run_tool(name: str, arguments: dict[str, Any]) -> str:
    output = await TOOLS[name].invoke(arguments)
    assert isinstance(output, str)
    return output


# The parse helpers take only strict function tools, so the declarations go through the strict rewrite.
STRICT = {t.name: strict_schema(t.parameters).schema for t in TOOLS}


async def test_chat_completions_parse_gets_an_expense(url: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    tools: Any = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": STRICT[t.name],
                                          "strict": True}}
        for t in TOOLS
    ]  # fmt: skip
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    results, parsed = [], None
    for _ in range(8):
        reply = await client.chat.completions.parse(
            model="gpt-4o-mini", messages=messages, tools=tools, response_format=Expense
        )
        message = reply.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            parsed = message.parsed
            break
        for call in message.tool_calls:
            output = await run_tool(call.function.name, json.loads(call.function.arguments))
            results.append(output)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    await client.close()
    assert results == RESULTS
    assert parsed == EXPENSE and isinstance(parsed, Expense)


async def test_responses_parse_gets_an_expense(url: str) -> None:
    client = openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="not-needed", max_retries=0)
    tools: Any = [
        {"type": "function", "name": t.name, "description": t.description, "parameters": STRICT[t.name], "strict": True}
        for t in TOOLS
    ]
    items: list[Any] = [{"role": "user", "content": QUESTION}]
    results, parsed = [], None
    for _ in range(8):
        reply = await client.responses.parse(model="gpt-4o-mini", input=items, tools=tools, text_format=Expense)
        items += reply.output
        calls = [item for item in reply.output if item.type == "function_call"]
        if not calls:
            parsed = reply.output_parsed
            break
        for call in calls:
            output = await run_tool(call.name, json.loads(call.arguments))
            results.append(output)
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": output})
    await client.close()
    assert results == RESULTS
    assert parsed == EXPENSE and isinstance(parsed, Expense)


async def test_anthropic_messages_parse_gets_an_expense(url: str) -> None:
    client = anthropic.AsyncAnthropic(base_url=url, api_key="not-needed", max_retries=0)
    tools: Any = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in TOOLS]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    results, parsed = [], None
    for _ in range(8):
        reply = await client.messages.parse(
            model="claude-sonnet-4-6", max_tokens=1024, tools=tools, messages=messages, output_format=Expense
        )
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            parsed = reply.parsed_output
            break
        blocks = []
        for block in reply.content:
            if block.type == "tool_use":
                assert isinstance(block.input, dict)
                output = await run_tool(block.name, block.input)
                results.append(output)
                blocks.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
        messages.append({"role": "user", "content": blocks})
    await client.close()
    assert results == RESULTS
    assert parsed == EXPENSE and isinstance(parsed, Expense)


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic"])
async def test_toolslip_transports_get_an_expense_in_each_mode(url: str, protocol: str, mode: str) -> None:
    model: Model = (
        AnthropicModel("claude-sonnet-4-6", base_url=url, api_key="sk-ant-local")
        if protocol == "anthropic"
        else resolve_model(f"{protocol}:gpt-4o-mini@{url}/v1")
    )
    agent = Agent(model=model, tools=TOOLS, output_type=Expense, output_mode=mode)  # type: ignore[arg-type]
    result = await agent.arun(QUESTION)
    await model.aclose()  # type: ignore[attr-defined]
    assert result.stop_reason == "completed", result.output_error
    assert result.data == EXPENSE and result.tool_calls == 4
