"""A FallbackModel streams: the step streams from the first model that answers, and a stream that breaks
after it began is never finished by another model.

Real parts: ``toolslip serve --model scripted`` processes (one refusing every request as overloaded with
``--faults 1.0``) behind the OpenAI and Anthropic SDK transports, through ``toolslip run --model a,b`` in a
pipe and through the Python API; the stream that breaks mid-answer is a served model that fails after its
first words, so the client sees the HTTP stream cut short as it would see a provider's.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from test_fallback import calc, fx, start_server, stop_servers  # the same served scripted model and its tools
from toolslip import Agent, FallbackModel, Journal, Message, ModelResponse, ProviderError, Request, Toolbox
from toolslip.core.events import Event, ModelResponded, ModelSwitched, TextDelta, ToolCallReady
from toolslip.core.streaming import ResponseDone, StreamEvent, TextChunk
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel
from toolslip.server import serve
from toolslip.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "320 USD and 15000 JPY in CNY, split 4 ways?"
ANSWER = "3002.6 CNY in total; split between 4 people that is 750.65 CNY each."  # examples/expenses.py's rates
ANSWER_API = "2990.00 CNY in total; split between 4 people that is 747.50 CNY each."  # test_fallback's tools


@pytest.fixture
def down_and_up() -> Iterator[tuple[str, str]]:
    """An OpenAI-wire server that refuses every request (503) and a working Anthropic-wire one."""
    down, down_url = start_server("--faults", "1.0")
    up, up_url = start_server()
    try:
        yield down_url, up_url
    finally:
        stop_servers(down, up)


def test_the_cli_streams_a_chain_from_the_model_that_answers(down_and_up: tuple[str, str], tmp_path: Path) -> None:
    down, up = down_and_up
    chain = f"openai:gpt-test@{down}/v1,anthropic:claude-test@{up}"
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "run", "examples/expenses.py", QUESTION, "--model", chain],
        cwd=ROOT,
        env={**os.environ, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k", "TOOLSLIP_HOME": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    switched = next(i for i, line in enumerate(lines) if line.startswith("[step 1] answered by anthropic:claude-test"))
    assert "after openai:gpt-test: 503" in lines[switched]
    # "calling ..." is printed from the streamed call, before it runs: only a streamed step shows it
    calling = lines.index("[step 1] calling fx(amount=320, currency='USD')")
    assert switched < calling < lines.index("[step 1] fx(amount=320, currency='USD') → 320 USD = 2297.6 CNY")
    assert sum(line.startswith("[step ") and " calling " in line for line in lines) == 4
    assert ANSWER in done.stdout


def test_the_api_streams_each_step_and_the_journal_names_who_answered(
    down_and_up: tuple[str, str], tmp_path: Path
) -> None:
    down, up = down_and_up
    first = OpenAIChatModel("gpt-test", base_url=f"{down}/v1", api_key="k", max_retries=0, name="chat")
    second = AnthropicModel("claude-test", base_url=up, api_key="k", max_retries=0, name="messages")
    chain = FallbackModel([first, second], cooldown=0)  # no cooldown: every step meets the refusal first
    journal = Journal(tmp_path / "runs.sqlite")
    agent: Agent[None] = Agent(model=chain, tools=Toolbox([fx, calc]), hooks=journal.wrap())
    events: list[Event] = []

    async def main() -> object:
        try:
            return await agent.arun(QUESTION, on_event=events.append)
        finally:
            await chain.aclose()

    result = asyncio.run(main())
    assert ANSWER_API in result.output  # type: ignore[attr-defined]
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert ANSWER_API in streamed  # the answer arrived as deltas
    assert len([e for e in events if isinstance(e, ToolCallReady)]) == 4
    for step in range(1, 6):  # each step: the switch is said before the answering model's first event
        of_step = [e for e in events if getattr(e, "step", None) == step and not isinstance(e, ModelResponded)]
        switch = next(i for i, e in enumerate(of_step) if isinstance(e, ModelSwitched))
        first_delta = next(i for i, e in enumerate(of_step) if isinstance(e, TextDelta | ToolCallReady))
        assert switch < first_delta, of_step
        assert of_step[switch].model == "messages" and of_step[switch].failed[0].startswith("chat: 503")  # type: ignore[attr-defined]
    (run,) = journal.store.runs()
    answered = [e.data["response"]["extra"] for e in journal.store.entries(run.run_id) if e.kind == "model"]
    assert [a["answered_by"] for a in answered] == ["messages"] * 5
    assert all(a["fell_over"][0].startswith("chat: 503") for a in answered)


SAID = "After converting both amounts at today's rates and adding them up, the total is "
"""Long enough that the server sends some of it as whole text deltas before the break."""


class BreaksOff:
    """A served model whose streamed answer breaks after its first words (a provider's stream cut short)."""

    name = "breaks-off"
    streams_text_first = True  # so serve sends the words as they come, before the break

    async def complete(self, request: Request) -> ModelResponse:
        raise ProviderError("upstream went away", status=502)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield TextChunk(text=SAID)
        await asyncio.sleep(0.05)  # the words leave the server before the break
        raise ProviderError("upstream went away", status=502)
        yield ResponseDone(response=ModelResponse(message=Message.assistant("never")))  # pragma: no cover


def test_a_stream_that_broke_after_it_began_is_not_finished_by_the_next_model() -> None:
    asked: list[Request] = []

    def other(request: Request) -> str:
        asked.append(request)
        return "42, says another model."

    async def main() -> tuple[BaseException | None, list[Event]]:
        events: list[Event] = []
        async with serve(BreaksOff()) as one, serve(FunctionModel(other, name="other")) as two:  # type: ignore[arg-type]
            chain = FallbackModel(
                [
                    AnthropicModel("claude-test", base_url=one, api_key="k", max_retries=0, name="breaks"),
                    OpenAIChatModel("gpt-test", base_url=f"{two}/v1", api_key="k", max_retries=0, name="other"),
                ],
                pause=0,
            )
            try:
                await Agent(model=chain).arun("What is the total?", on_event=events.append)
            except ProviderError as exc:
                return exc, events
            finally:
                await chain.aclose()
        return None, events

    error, events = asyncio.run(main())
    assert isinstance(error, ProviderError), error
    assert "breaks broke off its streamed answer" in str(error) and "not handed to the next model" in str(error)
    assert asked == []  # the next model was never asked to answer what had begun
    shown = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert shown and SAID.startswith(shown)  # what was shown is the broken answer's start, and nothing else
    assert not [e for e in events if isinstance(e, ModelResponded)]  # no answer: nothing differs from what was shown


def test_a_model_that_fails_before_its_first_event_hands_the_stream_on() -> None:
    """In-process, no server: the first model's stream raises before yielding, the second's ends empty; the
    third (no stream of its own) answers, and the chain's stream carries its whole answer and its name."""

    class Refuses:
        name = "refuses"

        async def complete(self, request: Request) -> ModelResponse:
            raise AssertionError("complete is not asked when streaming")

        async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
            raise ProviderError("Overloaded", status=529)
            yield TextChunk(text="")  # pragma: no cover

    class Empty(Refuses):
        name = "empty"

        async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
            for _ in ():
                yield TextChunk(text="")

    plain = FunctionModel(lambda r: "fine", name="plain")
    chain = FallbackModel([Refuses(), Empty(), plain], pause=0)  # type: ignore[list-item]

    async def main() -> list[StreamEvent]:
        return [e async for e in chain.stream(Request(model="", messages=(Message.user("hi"),)))]

    (done,) = asyncio.run(main())
    assert isinstance(done, ResponseDone)
    assert done.response.message.text == "fine"
    assert done.response.extra["answered_by"] == "plain"
    assert done.response.extra["fell_over"] == [
        "refuses: 529 Overloaded",
        "empty: the stream of empty ended without its final response",
    ]
