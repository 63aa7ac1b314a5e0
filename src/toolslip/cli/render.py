"""How the CLI shows a run as it happens: one line per tool call, ``[step 1] fx(amount=320) → ...``,
and one per decision of a policy hook (the injection gate, the secret guard).

When the model streams, its text is printed as it arrives and a call is shown the moment its arguments
are complete (``[step 1] calling fx(amount=320)``), before the rest of the response has come in.

Server tools (run by the provider) are shown from the model's answer: the call with its query, how many
results came back, and the sources the answer cites.
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
    """An ``on_event`` listener that prints streamed text, and each tool call when ready and when finished."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.streamed = False
        """Some answer text was printed as it arrived (so it need not be printed again at the end)."""
        self._open_line = False

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            print(event.text, end="", file=self.out, flush=True)
            self.streamed = self._open_line = True
            return
        if self._open_line and isinstance(event, ToolCallReady | ModelResponded):
            print(file=self.out)
            self._open_line = False
        if isinstance(event, ModelResponded):
            for line in describe(event.response.message):
                print(f"[step {event.step}] {line}", file=self.out, flush=True)
        if isinstance(event, ToolCallReady):
            shown = format_call(event.call.name, event.call.arguments, event.call.raw_arguments)
            print(f"[step {event.step}] calling {shown}", file=self.out, flush=True)
        elif isinstance(event, ModelSwitched):
            why = f" after {'; '.join(event.failed)}" if event.failed else ""
            print(f"[step {event.step}] answered by {event.model}{why}", file=self.out, flush=True)
            for what in event.dropped:
                print(f"[step {event.step}]   not sent to {event.model}: {what}", file=self.out, flush=True)
        elif isinstance(event, CacheBusted):
            said = f"[step {event.step}] warning: {event.reason}, so {event.model} cannot read its prompt cache"
            print(said, file=self.out, flush=True)
        elif isinstance(event, GateDecided):
            from ..guard.policy import describe_decision

            print(f"[step {event.step}] {describe_decision(event)}", file=self.out, flush=True)
        elif isinstance(event, ToolFinished):
            call, result = event.call, event.result
            text = result.text.replace("\n", " ")
            if len(text) > _MAX_RESULT:
                text = text[:_MAX_RESULT] + "…"
            mark = "✗ " if result.is_error else ""
            note = f" ({event.note})" if event.note else ""
            shown = format_call(call.name, call.arguments, call.raw_arguments)
            print(
                f"[step {event.step}] {shown} → {mark}{text}{note}",
                file=self.out,
                flush=True,
            )
