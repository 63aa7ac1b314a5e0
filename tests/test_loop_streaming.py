"""The loop's streaming path: deltas become events, and only a complete response's calls ever run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolslip import Agent, Request
from toolslip.cli.files import load_tools_file
from toolslip.errors import ConfigError, ProviderError
from toolslip.events import Event, TextDelta, ToolCallReady, ToolCallStarted, ToolStarted
from toolslip.hooks import Hook, RunContext
from toolslip.messages import ModelResponse
from toolslip.streaming import ArgsChunk, CallStarted, StreamEvent, TextChunk
from toolslip.testing import ScriptedModel, StreamedModel, call

EXPENSES_TOOLS = load_tools_file(str(Path(__file__).parents[1] / "examples" / "expenses.py"))
ANSWER = "一共 3002.6 元人民币，4 个人平摊每人 750.65 元。"


def expenses() -> ScriptedModel:
    return ScriptedModel(
        [
            call("fx", amount=320, currency="USD"),
            call("fx", amount=15000, currency="JPY"),
            call("calc", expr="2297.6 + 705.0"),
            call("calc", expr="3002.6 / 4"),
            ANSWER,
        ]
    )


async def test_a_streamed_run_emits_deltas_and_ends_like_the_plain_run() -> None:
    events: list[Event] = []
    streamed = await Agent(model=StreamedModel(expenses(), chunk_size=3), tools=EXPENSES_TOOLS).arun(
        "320 USD + 15000 JPY?", on_event=events.append
    )
    plain = await Agent(model=expenses(), tools=EXPENSES_TOOLS).arun("320 USD + 15000 JPY?")
    assert (streamed.output, streamed.steps, streamed.tool_calls) == (plain.output, plain.steps, plain.tool_calls)
    assert [m.text for m in streamed.messages] == [m.text for m in plain.messages]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ANSWER
    assert len([e for e in events if isinstance(e, TextDelta)]) == -(-len(ANSWER) // 3)
    # each call is announced, then shown complete, before it runs
    kinds = [type(e).__name__ for e in events if isinstance(e, ToolCallStarted | ToolCallReady | ToolStarted)]
    assert kinds == ["ToolCallStarted", "ToolCallReady", "ToolStarted"] * 4
    ready = [e.call.arguments for e in events if isinstance(e, ToolCallReady)]
    assert ready[2:] == [{"expr": "2297.6 + 705.0"}, {"expr": "3002.6 / 4"}]


async def test_without_a_listener_or_with_stream_false_the_model_is_not_streamed() -> None:
    class NoStream(StreamedModel):
        async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
            raise AssertionError("stream() must not be called")
            yield  # pragma: no cover

    assert (await Agent(model=NoStream(expenses()), tools=EXPENSES_TOOLS).arun("q")).output == ANSWER
    events: list[Event] = []
    agent = Agent(model=NoStream(expenses()), tools=EXPENSES_TOOLS, stream=False)
    assert (await agent.arun("q", on_event=events.append)).output == ANSWER
    assert not any(isinstance(e, TextDelta) for e in events)


def test_stream_true_needs_a_streaming_model() -> None:
    with pytest.raises(ConfigError, match=r"stream=True, but the model 'scripted' has no stream\(\) method"):
        Agent(model=expenses(), tools=EXPENSES_TOOLS, stream=True)


class Broken:
    """Streams the start of a call, then fails the way a dropped connection does (or just stops)."""

    name = "broken"

    def __init__(self, fail: bool) -> None:
        self.fail = fail

    async def complete(self, request: Request) -> ModelResponse:
        raise AssertionError("the loop streams when stream=True")

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield TextChunk(text="Converting ")
        yield CallStarted(index=0, id="call_1", name="fx")
        yield ArgsChunk(index=0, text='{"amount": 32')
        if self.fail:
            raise ProviderError("connection reset mid-stream", retryable=True)


class Seen(Hook):
    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    async def on_error(self, ctx: RunContext, error: BaseException) -> None:
        self.errors.append(error)


@pytest.mark.parametrize(
    ("fail", "message"),
    [(True, "connection reset mid-stream"), (False, "the stream of broken ended without its final response")],
)
async def test_a_broken_stream_is_a_provider_error_and_its_half_call_never_runs(fail: bool, message: str) -> None:
    events: list[Event] = []
    seen = Seen()
    agent = Agent(model=Broken(fail), tools=EXPENSES_TOOLS, stream=True, hooks=[seen])
    with pytest.raises(ProviderError, match=message) as info:
        await agent.arun("q", on_event=events.append)
    assert info.value.retryable
    assert not any(isinstance(e, ToolStarted | ToolCallReady) for e in events)
    assert seen.errors == [info.value]
