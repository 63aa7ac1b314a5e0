"""The streaming transports against raw recorded streams over loopback: whole, cut off, refused, retried."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web

from toolslip import Agent, Toolbox, tool
from toolslip.errors import ProviderError
from toolslip.events import Event, ToolCallReady
from toolslip.formats import anthropic, openai_chat
from toolslip.messages import Request
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel
from toolslip.streaming import CallComplete, ResponseDone

STREAMS = Path(__file__).parent / "fixtures" / "streams"
Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]
ran: list[str] = []


@tool(effects="read_only")
def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather in a city."""
    ran.append(city)
    return f"{city}: 28 {unit}"


@tool(effects="read_only")
def get_time() -> str:
    """The time."""
    return "12:00"


@contextlib.asynccontextmanager
async def server(*answers: Answer) -> AsyncIterator[tuple[str, list[int]]]:
    """A loopback server giving the n-th answer to the n-th POST; yields its URL and the POST count."""
    count = [0]

    async def handle(request: web.Request) -> web.StreamResponse:
        count[0] += 1
        return await answers[min(count[0], len(answers)) - 1](request)

    app = web.Application()
    app.router.add_post("/{tail:.*}", handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", count
    finally:
        await runner.cleanup()


def sse(body: bytes, *, abort: bool = False) -> Answer:
    """Stream ``body`` as an event stream; ``abort`` kills the connection instead of ending the body."""

    async def answer(request: web.Request) -> web.StreamResponse:
        assert request.headers["Accept"] == "text/event-stream"
        assert json.loads(await request.read())["stream"] is True
        out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await out.prepare(request)
        for i in range(0, len(body), 50):  # in small writes, as a real service flushes
            await out.write(body[i : i + 50])
        if abort:
            assert request.transport is not None
            request.transport.abort()
        else:
            await out.write_eof()
        return out

    return answer


def recorded(name: str) -> bytes:
    return (STREAMS / f"{name}.sse").read_bytes()


async def overloaded(request: web.Request) -> web.Response:
    return web.json_response({"type": "error", "error": {"type": "overloaded_error", "message": "x"}}, status=529)


async def test_a_recorded_anthropic_stream_drives_the_loop_after_a_retried_529() -> None:
    ran.clear()
    expected = anthropic.response_from_wire(json.loads((STREAMS / "anthropic_tool_use.json").read_text()))
    async with server(overloaded, sse(recorded("anthropic_tool_use"))) as (url, count):
        model = AnthropicModel("claude", base_url=url, max_retries=1)
        events = [e async for e in model.stream(Request(model="", messages=()))]
        assert count[0] == 2  # the 529 came before any byte of the answer, so it was retried
        done = events[-1]
        assert isinstance(done, ResponseDone) and done.response == expected
        assert [e.call for e in events if isinstance(e, CallComplete)] == expected.message.tool_calls
        await model.aclose()


async def test_interleaved_openai_calls_over_http_equal_the_non_streaming_parse() -> None:
    expected = openai_chat.response_from_wire(json.loads((STREAMS / "openai_chat_parallel.json").read_text()))
    async with server(sse(recorded("openai_chat_parallel"))) as (url, _):
        model = OpenAIChatModel("gpt-4o", base_url=url, max_retries=0)
        events = [e async for e in model.stream(Request(model="", messages=()))]
        await model.aclose()
    assert isinstance(events[-1], ResponseDone) and events[-1].response == expected


async def dies_after_headers(request: web.Request) -> web.StreamResponse:
    """A server killed between its headers and its first byte of body (seen when a served model's process died)."""
    out = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await out.prepare(request)
    assert request.transport is not None
    request.transport.abort()
    return out


async def test_a_connection_lost_before_the_first_byte_is_retried_not_raised_raw() -> None:
    async with server(dies_after_headers, sse(recorded("anthropic_tool_use"))) as (url, count):
        model = AnthropicModel("claude", base_url=url, max_retries=1)
        events = [e async for e in model.stream(Request(model="", messages=()))]
        assert count[0] == 2 and isinstance(events[-1], ResponseDone)  # nothing was shown: asked again
        await model.aclose()
    async with server(dies_after_headers) as (url, _):
        model = AnthropicModel("claude", base_url=url, max_retries=0)
        with pytest.raises(ProviderError, match="was cut off before its answer") as caught:
            [e async for e in model.stream(Request(model="", messages=()))]
        await model.aclose()
    assert caught.value.retryable and caught.value.status == 0  # a fallback chain moves on from it


CUT = recorded("anthropic_tool_use").index(b'event: content_block_stop\ndata: {"type":"content_block_stop","index":1')


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (sse(recorded("anthropic_tool_use")[:CUT], abort=True), "broke mid-stream|ended before message_stop"),
        (sse(recorded("anthropic_tool_use")[:CUT]), "the Anthropic stream ended before message_stop"),
    ],
    ids=["connection-dropped", "clean-end-too-early"],
)
async def test_a_stream_cut_inside_a_tool_call_never_runs_it(answer: Answer, message: str) -> None:
    ran.clear()
    events: list[Event] = []
    async with server(answer) as (url, count):
        model = AnthropicModel("claude", base_url=url, max_retries=2)
        agent = Agent(model=model, tools=Toolbox([get_weather, get_time]), stream=True)
        with pytest.raises(ProviderError, match=message) as caught:
            await agent.arun("weather in Beijing?", on_event=events.append)
        await model.aclose()
    assert caught.value.retryable and count[0] == 1  # bytes were shown: no silent second attempt
    assert ran == [] and not any(isinstance(e, ToolCallReady) and e.call.name == "get_weather" for e in events)


async def test_a_server_that_cannot_stream_is_named() -> None:
    async def plain(request: web.Request) -> web.Response:
        return web.json_response({"id": "x", "choices": []})

    async with server(plain) as (url, _):
        model = OpenAIChatModel("m", base_url=url, max_retries=0)
        with pytest.raises(
            ProviderError, match=r"application/json, not text/event-stream; .* toolslip run --no-stream"
        ):
            [e async for e in model.stream(Request(model="", messages=()))]
        await model.aclose()
