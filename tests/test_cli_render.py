"""The CLI's screen shows the answer the run holds, even when a hook rewrote the text that was streamed.

Streamed text is printed as it arrives; a hook's ``after_model`` may then change the answer (the injection
gate marks a phone number that came only from a web page). Before, the streamed text stayed on the screen
and the run's answer (in the journal) was never shown. A terminal is emulated by pyte, so what is checked
is what a user would read after the escape codes have done their work.
"""

from __future__ import annotations

import dataclasses
import io

import pyte
import pytest

from toolslip import Agent, Hook
from toolslip.agent.hooks import RunContext
from toolslip.cli.render import Renderer
from toolslip.messages import Message, ModelResponse, Request
from toolslip.testing import ScriptedModel, StreamedModel

STREAMED = "Call Ann on 555-0100 before noon."
HELD = "Call Ann on [phone removed] before noon."


class Rewrite(Hook):
    """Replaces the answer's text, as a guard that edits answers does."""

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        return dataclasses.replace(response, message=Message.assistant(HELD))


class Terminal(io.StringIO):
    """A text stream that is a terminal: what is written goes through pyte's emulator to its screen."""

    def __init__(self) -> None:
        super().__init__()
        self.screen = pyte.Screen(40, 10)
        self.screen.set_mode(pyte.modes.LNM)  # "\n" starts a new line, as a tty's output does
        self.stream = pyte.Stream(self.screen)

    def write(self, text: str) -> int:
        self.stream.feed(text)
        return super().write(text)

    def isatty(self) -> bool:
        return True

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display if line.strip()]


async def run(out: io.StringIO, *hooks: Hook) -> str:
    model = StreamedModel(ScriptedModel([STREAMED]), chunk_size=4)
    result = await Agent(model=model, hooks=list(hooks)).arun("When do I call Ann?", on_event=Renderer(out))
    return result.output


async def test_a_rewritten_answer_replaces_the_streamed_text_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")  # the width the renderer counts rows at: the emulated screen's
    terminal = Terminal()
    answer = await run(terminal, Rewrite())
    assert answer == HELD
    assert terminal.lines() == [HELD]
    assert "555" not in "".join(terminal.screen.display)


async def test_a_rewritten_answer_that_wrapped_is_erased_row_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "20")
    terminal = Terminal()
    terminal.screen.resize(10, 20)
    terminal.write("model: scripted\n")
    answer = await run(terminal, Rewrite())
    assert answer == HELD
    assert "".join(terminal.lines()) == f"model: scripted{HELD}"
    assert "555" not in "".join(terminal.screen.display)


async def test_a_rewritten_answer_in_a_pipe_follows_a_line_saying_it_replaced_the_text() -> None:
    out = io.StringIO()
    assert await run(out, Rewrite()) == HELD
    assert out.getvalue() == f"{STREAMED}\n[step 1] the text above was replaced by the answer:\n{HELD}\n"


async def test_an_answer_streamed_as_it_is_held_is_printed_once() -> None:
    terminal = Terminal()
    assert await run(terminal) == STREAMED
    assert terminal.getvalue() == f"{STREAMED}\n"
