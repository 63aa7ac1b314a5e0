"""Structured output through ``toolslip serve``: the official SDKs' parse helpers are the clients.

``client.chat.completions.parse(response_format=Expense)``, ``client.responses.parse(text_format=Expense)``,
Anthropic's ``messages.parse(output_format=Expense)``, google-genai's ``response_json_schema`` and
``response_schema=Expense``, ollama's ``chat(format=Expense.model_json_schema())`` and boto3's
``converse(outputConfig=...)`` run the seed's expense loop by hand against the stateless scripted demo;
the served model reads the schema from each request's own field and answers in it, and each helper's own
parser (where the SDK has one) turns the answer into an ``Expense``. toolslip's transports then run the
same question through the Agent in each mode over each wire.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import ollama
import openai
import pytest
from botocore.credentials import Credentials
from google import genai
from google.genai import types
from pydantic import BaseModel, Field

from conftest import converse_client
from toolslip import Agent
from toolslip.cli.files import load_tools_file
from toolslip.formats.structured import strict_schema
from toolslip.model import Model
from toolslip.providers import resolve_model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.bedrock import BedrockModel
from toolslip.providers.gemini import GeminiModel
from toolslip.providers.ollama import OllamaModel
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


# google-genai's sync client runs in a worker thread: the server shares the test's event loop (the async
# client subclasses aiohttp's ClientSession, which aiohttp deprecates).
@pytest.mark.parametrize("spelling", ["response_json_schema", "response_schema"])
async def test_google_genai_structured_output_gets_an_expense(url: str, spelling: str) -> None:
    declarations = [
        types.FunctionDeclaration(name=t.name, description=t.description, parameters_json_schema=t.parameters)
        for t in TOOLS
    ]
    # response_json_schema travels as responseJsonSchema; a pydantic class as response_schema is turned
    # by the SDK into the older responseSchema (Gemini's OpenAPI subset) and parsed back into the class.
    schema: Any = Expense.model_json_schema() if spelling == "response_json_schema" else Expense
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=declarations)],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        response_mime_type="application/json",
        **{spelling: schema},
    )
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    results, reply = [], None
    with genai.Client(api_key="not-needed", http_options=types.HttpOptions(base_url=url)) as client:
        for _ in range(8):
            reply = await asyncio.to_thread(
                client.models.generate_content, model="gemini-2.5-flash", contents=contents, config=config
            )
            assert reply.candidates and reply.candidates[0].content
            contents.append(reply.candidates[0].content)
            if not reply.function_calls:
                break
            parts = []
            for call in reply.function_calls:
                assert call.name and isinstance(call.args, dict)
                output = await run_tool(call.name, call.args)
                results.append(output)
                parts.append(types.Part.from_function_response(name=call.name, response={"result": output}))
            contents.append(types.Content(role="user", parts=parts))
    assert results == RESULTS and reply is not None
    assert Expense.model_validate_json(reply.text or "") == EXPENSE
    if spelling == "response_schema":
        assert reply.parsed == EXPENSE and isinstance(reply.parsed, Expense)  # the SDK's own parser


async def test_ollama_format_gets_an_expense(url: str) -> None:
    tools: Any = [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in TOOLS
    ]
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    results, content = [], ""
    async with ollama.AsyncClient(host=url) as client:
        for _ in range(8):
            reply = await client.chat(
                model="llama3.2", messages=messages, tools=tools, format=Expense.model_json_schema(), stream=False
            )
            messages.append(reply.message)
            if not reply.message.tool_calls:
                content = reply.message.content or ""
                break
            for call in reply.message.tool_calls:
                output = await run_tool(call.function.name, dict(call.function.arguments))
                results.append(output)
                messages.append({"role": "tool", "content": output, "tool_name": call.function.name})
    assert results == RESULTS
    assert Expense.model_validate_json(content) == EXPENSE


async def test_boto3_converse_output_config_gets_an_expense(url: str) -> None:
    client = converse_client(url)
    tools = {"tools": [{"toolSpec": {"name": t.name, "description": t.description,
                                     "inputSchema": {"json": t.parameters}}} for t in TOOLS]}  # fmt: skip
    # Converse takes the schema as JSON text (botocore's JsonSchemaDefinition.schema is a string).
    schema = {"name": "Expense", "schema": json.dumps(Expense.model_json_schema())}
    output = {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": schema}}}
    messages: list[Any] = [{"role": "user", "content": [{"text": QUESTION}]}]
    results, said = [], None
    for _ in range(8):
        reply = await asyncio.to_thread(
            client.converse, modelId=BEDROCK_MODEL, messages=messages, toolConfig=tools, outputConfig=output
        )
        said = reply["output"]["message"]
        messages.append(said)
        if reply["stopReason"] != "tool_use":
            break
        blocks = []
        for block in said["content"]:
            if "toolUse" in block:
                use = block["toolUse"]
                text = await run_tool(use["name"], use["input"])
                results.append(text)
                blocks.append({"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": text}]}})
        messages.append({"role": "user", "content": blocks})
    client.close()
    assert results == RESULTS and said is not None
    assert Expense.model_validate_json(said["content"][0]["text"]) == EXPENSE


def transport(protocol: str, url: str) -> Model:
    """toolslip's own transport for ``protocol``, pointed at ``url``."""
    if protocol == "anthropic":
        return AnthropicModel("claude-sonnet-4-6", base_url=url, api_key="sk-ant-local")
    if protocol == "gemini":
        return GeminiModel("gemini-2.5-flash", base_url=url, api_key="AIza-test", max_retries=0)
    if protocol == "bedrock":
        credentials = Credentials("AKIDEXAMPLE", "not-a-secret")
        return BedrockModel(BEDROCK_MODEL, region="us-east-1", base_url=url, credentials=credentials, max_retries=0)
    if protocol == "ollama":
        return OllamaModel("llama3.2", base_url=url, max_retries=0)
    return resolve_model(f"{protocol}:gpt-4o-mini@{url}/v1")


BEDROCK_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


@pytest.mark.parametrize("mode", ["native", "tool", "prompted"])
@pytest.mark.parametrize("protocol", ["openai", "openai-responses", "anthropic", "gemini", "bedrock", "ollama"])
async def test_toolslip_transports_get_an_expense_in_each_mode(url: str, protocol: str, mode: str) -> None:
    model = transport(protocol, url)
    agent = Agent(model=model, tools=TOOLS, output_type=Expense, output_mode=mode)  # type: ignore[arg-type]
    result = await agent.arun(QUESTION)
    await model.aclose()  # type: ignore[attr-defined]
    assert result.stop_reason == "completed", result.output_error
    assert result.data == EXPENSE and result.tool_calls == 4
