"""How the CLI shows a run as it happens: one line per tool call, ``[step 1] fx(amount=320) → ...``,
and one per decision of a policy hook (the injection gate, the secret guard)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from ..events import Event, GateDecided, ToolFinished

__all__ = ["Renderer", "format_call"]

_MAX_RESULT = 300


def format_call(name: str, arguments: Mapping[str, Any] | None, raw: str | None = None) -> str:
    """``fx(amount=320, currency='USD')``; malformed arguments are shown as the model wrote them."""
    if arguments is None:
        return f"{name}(<invalid arguments: {raw!r}>)"
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})"


class Renderer:
    """An ``on_event`` listener that prints each finished tool call."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        if isinstance(event, GateDecided):
            from ..policy import describe_decision

            print(f"[step {event.step}] {describe_decision(event)}", file=self.out, flush=True)
        if isinstance(event, ToolFinished):
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
