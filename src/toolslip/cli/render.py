"""How the CLI shows a run as it happens: one line per tool call, ``[step 1] fx(amount=320) → ...``,
and one per decision of a policy hook (the injection gate, the secret guard).

When the model streams, its text is printed as it arrives and a call is shown the moment its arguments
are complete (``[step 1] calling fx(amount=320)``), before the rest of the response has come in.

Server tools (run by the provider) are shown from the model's answer: the call with its query, how many
results came back, and the sources the answer cites.

A typed run (``--output-schema``) streams none of its answer: the model's JSON as written (``320``, with its
own spacing) is not the validated value the run prints (``320.0``), and one answer must show one text.
"""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any, TextIO

from ..core.events import (
    CacheBusted,
    Event,
    GateDecided,
    ModelResponded,
    ModelSwitched,
    TextDelta,
    ToolCallReady,
    ToolFinished,
)
from ..formats.server_calls import describe
from ..formats.structured import FINAL_TOOL

__all__ = ["Renderer", "format_call"]

_MAX_RESULT = 300
_MAX_VALUE = 100  # characters of one argument: a 10 MB argument is cut on screen, kept whole in the journal
_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _MAX_VALUE
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 8


def format_call(name: str, arguments: Mapping[str, Any] | None, raw: str | None = None) -> str:
    """``fx(amount=320, currency='USD')``; malformed arguments are shown as the model wrote them.

    Long values are cut (``'aaaa…' (10,485,760 characters)``), so one huge argument cannot flood the terminal.
    """
    if arguments is None:
        return f"{name}(<invalid arguments: {_short(raw)}>)"
    return f"{name}({', '.join(f'{k}={_short(v)}' for k, v in arguments.items())})"


def _short(value: object) -> str:
    if isinstance(value, str) and len(value) > _MAX_VALUE:
        return f"{value[:_MAX_VALUE]!r}… ({len(value):,} characters)"
    return _REPR.repr(value)


class Renderer:
    """An ``on_event`` listener that prints streamed text, and each tool call when ready and when finished.

    Streamed text is provisional until its response arrives: a hook may rewrite the answer (the injection
    gate marks a phone number that came only from a web page), and the screen must then show what the run
    holds, not what was streamed. On a terminal the streamed text (and any line printed after it) is erased
    and the response's text written in its place; in a file or a pipe, which cannot be rewritten, a line
    says the text above was replaced and the response's text follows it.

    ``typed``: the run ends in a validated value that its caller prints. No answer text is shown then (not
    streamed, not printed at the end, not as a ``final_answer`` call); text said beside a tool call is no
    answer, and is printed when its response arrives.
    """

    def __init__(self, out: TextIO, *, typed: bool = False) -> None:
        self.out = out
        self.typed = typed
        self.streamed = False
        """Some answer text was printed as it arrived (so it need not be printed again at the end)."""
        self._open_line = False
        self._said = ""
        """The text streamed for the current response."""
        self._since: list[tuple[bool, str]] = []
        """Everything printed since that text began, as (is streamed text, what was printed)."""

    def _print(self, text: str, end: str = "\n", *, said: bool = False) -> None:
        print(text, end=end, file=self.out, flush=True)
        if self._said or said:
            self._since.append((said, text + end))

    def __call__(self, event: Event) -> None:
        if self.typed and not self._typed_shows(event):
            return
        if isinstance(event, TextDelta):
            self._print(event.text, end="", said=True)
            self._said += event.text
            self.streamed = self._open_line = True
            return
        if isinstance(event, ModelResponded):
            self._settle(event.response.message.text, event.step)
        if self._open_line and isinstance(event, ToolCallReady | ModelResponded):
            self._print("")
            self._open_line = False
        if isinstance(event, ModelResponded):
            for line in describe(event.response.message):
                print(f"[step {event.step}] {line}", file=self.out, flush=True)
        if isinstance(event, ToolCallReady):
            shown = format_call(event.call.name, event.call.arguments, event.call.raw_arguments)
            self._print(f"[step {event.step}] calling {shown}")
        elif isinstance(event, ModelSwitched):
            why = f" after {'; '.join(event.failed)}" if event.failed else ""
            self._print(f"[step {event.step}] answered by {event.model}{why}")
            for what in event.dropped:
                self._print(f"[step {event.step}]   not sent to {event.model}: {what}")
        elif isinstance(event, CacheBusted):
            said = f"[step {event.step}] warning: {event.reason}, so {event.model} cannot read its prompt cache"
            self._print(said)
        elif isinstance(event, GateDecided):
            from ..guard.policy import describe_decision

            print(f"[step {event.step}] {describe_decision(event)}", file=self.out, flush=True)
        elif isinstance(event, ToolFinished):
            print(_finished(event), file=self.out, flush=True)

    def _typed_shows(self, event: Event) -> bool:
        """Whether a typed run shows ``event``: its text only beside a call, never its final answer."""
        if isinstance(event, TextDelta):
            return False  # whether it is the answer is known only when the response is in
        if isinstance(event, ToolCallReady):
            return event.call.name != FINAL_TOOL
        if isinstance(event, ModelResponded):
            message = event.response.message
            if message.text and any(call.name != FINAL_TOOL for call in message.tool_calls):
                self._print(message.text)
        return True

    def _settle(self, text: str, step: int) -> None:
        """The response's ``text`` has arrived: make the screen show it, whatever was streamed before it."""
        said, since = self._said, self._since
        self._said, self._since = "", []
        if text == said:
            return
        if said and text.startswith(said) and len(since) == sum(1 for kind, _ in since if kind):
            print(text[len(said) :], end="", file=self.out, flush=True)  # only the end was missing
            self._open_line = True
            return
        if not said:  # nothing was streamed: the answer is printed when the run ends
            return
        if _is_terminal(self.out):
            print(_erase("".join(printed for _, printed in since)), end="", file=self.out)
            others = "".join(printed for kind, printed in since if not kind)
            print(text, end="\n" if others else "", file=self.out)
            print(others, end="", file=self.out, flush=True)
            self._open_line = not others
        else:
            if self._open_line:
                print(file=self.out)
            print(f"[step {step}] the text above was replaced by the answer:", file=self.out)
            print(text, end="", file=self.out, flush=True)
            self._open_line = True


def _finished(event: ToolFinished) -> str:
    """``[step 1] fx(amount=320) → 320 USD = 2297.6 CNY``, the result on one line and cut when long."""
    call, result = event.call, event.result
    text = result.text.replace("\n", " ")
    if len(text) > _MAX_RESULT:
        text = text[:_MAX_RESULT] + "…"
    mark = "✗ " if result.is_error else ""
    note = f" ({event.note})" if event.note else ""
    return f"[step {event.step}] {format_call(call.name, call.arguments, call.raw_arguments)} → {mark}{text}{note}"


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or bare stream is no terminal
        return False


def _erase(printed: str) -> str:
    """The escape codes that take the cursor back to where ``printed`` began and clear the screen from there.

    The rows ``printed`` took are counted at the terminal's width (a wide character takes two columns).
    """
    import shutil
    import unicodedata

    width = max(shutil.get_terminal_size().columns, 1)
    rows = 0
    for line in printed.split("\n"):
        columns = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
        rows += max(1, -(-columns // width))
    up = f"\x1b[{rows - 1}A" if rows > 1 else ""
    return f"\r{up}\x1b[J"
