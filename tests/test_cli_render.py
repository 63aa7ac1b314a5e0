"""The CLI's renderer on a streamed run: text as it arrives, each call as soon as its arguments are in."""

from __future__ import annotations

import io
from pathlib import Path

from toolslip import Agent
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
