"""Real agent frameworks as clients of ``toolslip serve --model local``: a one-tool question to its answer.

Before issue 26, 0 of 33 framework runs behind the embedded model reached an answer: the Agents SDK's
every Responses request got a 500 (it always sends ``"include": []``), and the frameworks that got
through looped on the same call, since the repeat guard lived in toolslip's own loop. Each framework
drives its own loop here, over each protocol it speaks, streamed and not. No key, no network: loopback.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import agents
import openai
import pytest
from anthropic import AsyncAnthropic
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.openai import OpenAIProvider

from toolslip.providers.local import LocalModel, local_model
from toolslip.server import serve

pytestmark = pytest.mark.slow

QUESTION = "What's the weather in Beijing?"
CALLS: list[str] = []


def get_weather(city: str) -> dict[str, Any]:
    """Get the current temperature (celsius) and sky of one city."""
    CALLS.append(city)
    return {"city": city, "temp": 28, "unit": "celsius", "desc": "cloudy"}


@pytest.fixture(scope="module")
def model() -> LocalModel:
    loaded = local_model("local:qwen2.5-coder-0.5b", max_tokens=96, seed=0)
    loaded.load()
    return loaded


@pytest.fixture
async def base(model: LocalModel) -> AsyncIterator[str]:
    CALLS.clear()
    async with serve(model) as url:
        yield url


def _answered(output: object) -> None:
    assert isinstance(output, str) and "28" in output, output
    assert CALLS and "{" not in output  # the tool ran, and the answer is prose, not a call


@pytest.mark.parametrize("protocol", ["chat", "responses", "messages"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_pydantic_ai_answers_a_one_tool_question(base: str, protocol: str, streamed: bool) -> None:
    async with (
        AsyncAnthropic(base_url=base, api_key="unused", max_retries=0) as claude,
        openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0) as oai,
    ):
        if protocol == "messages":
            chosen: Any = AnthropicModel("claude-local", provider=AnthropicProvider(anthropic_client=claude))
        else:
            provider = OpenAIProvider(openai_client=oai)
            chosen = (OpenAIChatModel if protocol == "chat" else OpenAIResponsesModel)("local", provider=provider)
        agent = Agent(chosen, tools=[get_weather])
        if streamed:
            async with agent.run_stream(QUESTION) as run:
                output = await run.get_output()
        else:
            output = (await agent.run(QUESTION)).output
    _answered(output)


@pytest.mark.parametrize("protocol", ["chat", "responses"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_openai_agents_sdk_answers_a_one_tool_question(base: str, protocol: str, streamed: bool) -> None:
    agents.set_tracing_disabled(True)  # its traces would go to OpenAI
    kind = agents.OpenAIChatCompletionsModel if protocol == "chat" else agents.OpenAIResponsesModel
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0) as client:
        agent = agents.Agent(
            name="weather", tools=[agents.function_tool(get_weather)], model=kind(model="local", openai_client=client)
        )
        if streamed:
            run = agents.Runner.run_streamed(agent, QUESTION)
            async for _ in run.stream_events():
                pass
            output = run.final_output
        else:
            output = (await agents.Runner.run(agent, QUESTION)).final_output
    _answered(output)
