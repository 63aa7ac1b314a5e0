"""The embedded model's typed answers: llama.cpp's JSON-Schema grammar holds each answer to its schema, through
the Agent and through ``toolslip serve`` with the OpenAI SDK's parse helper. What is checked is that the answer
parses and fits (the grammar's promise), not that a 0.5B model got the sums right."""

from __future__ import annotations

from typing import Literal

import openai
import pytest
from pydantic import BaseModel, Field

from toolslip import Agent, Settings, ToolSpec
from toolslip.core.messages import OutputSchema
from toolslip.providers.local import LocalModel, local_model
from toolslip.providers.local_answer import answer_grammar
from toolslip.server import serve

pytestmark = pytest.mark.slow


class Sentiment(BaseModel):
    label: Literal["positive", "negative", "neutral"]
    confidence: float = Field(description="From 0 to 1.")


class Person(BaseModel):
    name: str
    age: int


@pytest.fixture(scope="module")
def model() -> LocalModel:
    loaded = local_model("local")
    loaded.load()
    return loaded


@pytest.mark.parametrize(
    ("question", "output_type"),
    [
        ("Classify the sentiment: 'The delivery was late and the box was crushed.'", Sentiment),
        ("Extract the person: '王伟今年28岁。'", Person),
        ("Give the first three prime numbers.", list[int]),
    ],
)
async def test_a_local_answer_always_fits_its_type(model: LocalModel, question: str, output_type: object) -> None:
    agent = Agent(model=model, output_type=output_type, output_retries=0, settings=Settings(max_tokens=80))
    result = await agent.arun(question)
    assert result.stop_reason == "completed", result.output_error
    assert result.data is not None and result.steps == 1


async def test_the_openai_parse_helper_gets_a_value_from_the_served_local_model(model: LocalModel) -> None:
    async with serve(model) as url, openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client:
        reply = await client.chat.completions.parse(
            model="qwen",
            messages=[{"role": "user", "content": "Extract the person: 'Maria Lopez, 34, lives in Lisbon.'"}],
            response_format=Person,
            max_tokens=60,
        )
    parsed = reply.choices[0].message.parsed
    assert isinstance(parsed, Person) and parsed.name


def test_the_answer_grammar_offers_calls_or_the_answer() -> None:
    tool = ToolSpec(name="lookup", description="Look a word up.", parameters={"type": "object", "properties": {}})
    output = OutputSchema(name="Person", schema=Person.model_json_schema())
    grammar = answer_grammar(output, [tool], max_calls=1)
    assert grammar.rstrip().endswith('root ::= "<tool_call>\\n" call "\\n</tool_call>" | answer')
    assert answer_grammar(output, [], max_calls=1).rstrip().endswith("root ::= answer")
