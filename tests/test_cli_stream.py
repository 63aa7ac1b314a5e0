"""The CLI on streamed runs: text as it arrives, each call as soon as its arguments are in, --no-stream."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from toolslip import Agent
from toolslip.cli import main
from toolslip.cli.files import load_tools_file
from toolslip.cli.render import Renderer
from toolslip.messages import Message
from toolslip.testing import ScriptedModel, StreamedModel, call

TOOLS = load_tools_file(str(Path(__file__).parents[1] / "examples" / "expenses.py"))


async def test_streamed_text_and_calls_are_printed_in_the_order_they_happen() -> None:
    model = ScriptedModel(
        [
            Message.assistant("先换算美元。", [call("fx", amount=320, currency="USD")]),
            "一共 2297.6 元。",
        ]
    )
    out = io.StringIO()
    renderer = Renderer(out)
    lines: list[str] = []

    def listen(event: object) -> None:
        renderer(event)  # type: ignore[arg-type]
        lines.append(out.getvalue())

    await Agent(model=StreamedModel(model, chunk_size=2), tools=TOOLS).arun("320 USD?", on_event=listen)
    assert out.getvalue() == (
        "先换算美元。\n"
        "[step 1] calling fx(amount=320, currency='USD')\n"
        "[step 1] fx(amount=320, currency='USD') → 320 USD = 2297.6 CNY\n"
        "一共 2297.6 元。\n"
    )
    assert renderer.streamed
    # the text grew piece by piece, and the call line appeared before the tool ran
    assert "先换" in lines and "先换算美" in lines
    assert any(s.endswith("calling fx(amount=320, currency='USD')\n") for s in lines)


def test_a_run_that_does_not_stream_prints_only_finished_calls() -> None:
    out = io.StringIO()
    renderer = Renderer(out)
    model = ScriptedModel([call("fx", amount=320, currency="USD"), "2297.6"])
    Agent(model=model, tools=TOOLS).run("320 USD?", on_event=renderer)
    assert out.getvalue() == "[step 1] fx(amount=320, currency='USD') → 320 USD = 2297.6 CNY\n"
    assert not renderer.streamed


@contextlib.contextmanager
def json_only_server() -> Iterator[str]:
    """An OpenAI-compatible server, in a thread, that always answers with a whole JSON completion."""

    async def answer(request: web.Request) -> web.Response:
        body = {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "42"}, "finish_reason": "stop"}],
        }
        return web.json_response(body)

    loop = asyncio.new_event_loop()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app, access_log=None)
    loop.run_until_complete(runner.setup())
    loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", 0).start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def test_cli_names_a_server_that_cannot_stream_and_no_stream_gets_past_it(capsys: pytest.CaptureFixture[str]) -> None:
    tools = str(Path(__file__).parents[1] / "examples" / "expenses.py")
    with json_only_server() as url:
        assert main(["run", tools, "q", "--model", f"openai:m@{url}"]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("toolslip run: the OpenAI-compatible server at") and "\n" not in err
        assert err.endswith("it may not support streaming: use Agent(stream=False) or toolslip run --no-stream")
        assert main(["run", tools, "q", "--model", f"openai:m@{url}", "--no-stream"]) == 0
    assert "42" in capsys.readouterr().out
