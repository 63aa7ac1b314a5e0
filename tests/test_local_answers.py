"""The embedded model's typed answers: llama.cpp's JSON-Schema grammar holds each answer to its schema, through
the Agent and through ``toolslip serve`` with the OpenAI SDK's parse helper, google-genai's
``response_json_schema`` and ollama's ``format``. What is checked is that the answer
parses and fits (the grammar's promise), not that a 0.5B model got the sums right."""

from __future__ import annotations

import asyncio
from typing import Literal

import ollama
import openai
import pytest
from google import genai
from google.genai import types
from pydantic import BaseModel, Field

from toolslip import Agent, Settings, ToolSpec
from toolslip.core.messages import OutputSchema
from toolslip.providers.local import LocalModel
from toolslip.providers.local_answer import answer_grammar
from toolslip.server import serve

pytestmark = pytest.mark.slow


class Sentiment(BaseModel):
    label: Literal["positive", "negative", "neutral"]
    confidence: float = Field(description="From 0 to 1.")


class Person(BaseModel):
    name: str
    age: int


PERSON_QUESTION = "Extract the person: 'Maria Lopez, 34, lives in Lisbon.'"


@pytest.mark.parametrize(
    ("question", "output_type"),
    [
        ("Classify the sentiment: 'The delivery was late and the box was crushed.'", Sentiment),
        ("Extract the person: '王伟今年28岁。'", Person),
        ("Give the first three prime numbers.", list[int]),
    ],
)
async def test_a_local_answer_always_fits_its_type(local: LocalModel, question: str, output_type: object) -> None:
    agent = Agent(model=local, output_type=output_type, output_retries=0, settings=Settings(max_tokens=80))
    result = await agent.arun(question)
    assert result.stop_reason == "completed", result.output_error
    assert result.data is not None and result.steps == 1


async def test_the_openai_parse_helper_gets_a_value_from_the_served_local_model(local: LocalModel) -> None:
    async with serve(local) as url, openai.AsyncOpenAI(base_url=f"{url}/v1", api_key="x", max_retries=0) as client:
        reply = await client.chat.completions.parse(
            model="qwen",
            messages=[{"role": "user", "content": PERSON_QUESTION}],
            response_format=Person,
            max_tokens=60,
        )
    parsed = reply.choices[0].message.parsed
    assert isinstance(parsed, Person) and parsed.name


# google-genai's sync client runs in a worker thread: the server shares the test's event loop.
async def test_google_genais_response_json_schema_holds_the_served_local_model(local: LocalModel) -> None:
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=Person.model_json_schema(), max_output_tokens=60
    )
    async with serve(local) as url:
        with genai.Client(api_key="x", http_options=types.HttpOptions(base_url=url)) as client:
            reply = await asyncio.to_thread(
                client.models.generate_content, model="gemma", contents=PERSON_QUESTION, config=config
            )
    assert Person.model_validate_json(reply.text or "").name


async def test_ollamas_format_holds_the_served_local_model(local: LocalModel) -> None:
    async with serve(local) as url, ollama.AsyncClient(host=url) as client:
        reply = await client.chat(
            model="qwen",
            messages=[{"role": "user", "content": PERSON_QUESTION}],
            format=Person.model_json_schema(),
            options={"num_predict": 60},
            stream=False,
        )
    assert Person.model_validate_json(reply.message.content or "").name


def test_the_answer_grammar_offers_calls_or_the_answer() -> None:
    tool = ToolSpec(name="lookup", description="Look a word up.", parameters={"type": "object", "properties": {}})
    output = OutputSchema(name="Person", schema=Person.model_json_schema())
    grammar = answer_grammar(output, [tool], max_calls=1)
    assert grammar.rstrip().endswith('root ::= "<tool_call>\\n" call "\\n</tool_call>" | answer')
    assert answer_grammar(output, [], max_calls=1).rstrip().endswith("root ::= answer")
