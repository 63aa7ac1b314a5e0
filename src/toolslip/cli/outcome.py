"""How ``toolslip run`` and ``toolslip resume`` end: the stop line, what was refused or re-run, and a pause
message that names each pending call and the exact command that decides it.

A refusal never passes silently: the stop line counts calls the user refused, calls a guard denied (the
``--gate``, the secret guard) and interrupted calls that were not run again, and every interrupted call
that *was* run again is named.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..core._display import dollars, plural
from ..core.events import Event, ModelResponded, ToolFinished
from ..core.messages import ToolCall, Usage
from ..durable.replay import NOT_RERUN_NOTE
from ..providers.local_figures import UNGROUNDED
from .render import format_call

if TYPE_CHECKING:
    from ..core.result import RunResult

__all__ = ["RERUN_NOTE", "Outcome", "one_line", "pause_message"]

RERUN_NOTE = "re-run after the interruption"
_WIDTH = 160
_REFUSED = frozenset({"denied", "refused"})
"""The notes of a call the user refused: the approval hook's, and the gate's when it asked the user."""


class Outcome:
    """An ``on_event`` listener put in front of the renderer: marks re-run calls, counts refusals."""

    def __init__(self, render: Callable[[Event], None], rerun: Callable[[int, str], bool] | None = None) -> None:
        self.render = render
        self._is_rerun = rerun or (lambda step, call_id: False)
        self.refused = 0
        self.denied = 0
        self.rerun: list[ToolCall] = []
        self.not_rerun: list[ToolCall] = []
        self.ungrounded: tuple[str, ...] = ()
        """The figures of the last answer that no tool gave, as the embedded model's check found them: a
        text answer says so in its text, a typed one (a JSON value) cannot."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, ModelResponded):
            self.ungrounded = tuple(event.response.extra.get(UNGROUNDED, ()))
        if isinstance(event, ToolFinished):
            if event.note in _REFUSED:
                self.refused += 1
            elif event.note.startswith("denied by"):  # a guard's (the --gate, the secret guard): no one was asked
                self.denied += 1
            elif event.note == NOT_RERUN_NOTE:
                self.not_rerun.append(event.call)
            elif not event.note and self._is_rerun(event.step, event.call.id):
                self.rerun.append(event.call)
                event = replace(event, note=RERUN_NOTE)
        self.render(event)

    def stop_line(self, result: RunResult) -> str:
        served = "".join(f", {n} {key}" for key, n in result.usage.server_tool_use.items() if n)
        counts = (
            (self.refused, "refused"),
            (self.denied, "denied"),
            (len(self.not_rerun), "not re-run"),
            (len(self.rerun), "re-run"),
        )
        notes = "".join(f", {n} {what}" for n, what in counts if n)
        cost = f", {dollars(result.cost)}" if result.cost else ""  # the local and scripted models cost nothing
        return (
            f"[stop: {result.stop_reason} after {plural(result.steps, 'model call')}, "
            f"{plural(result.tool_calls, 'tool call')}{notes}{served}{cached(result.usage)}{cost}; run {result.run_id}]"
        )

    def reruns(self) -> list[str]:
        """One line per interrupted call that was run again, or declined (so it may have happened once)."""
        rerun = [f"run again after the interruption: {_shown(c)}" for c in self.rerun]
        return rerun + [f"not run again (it may or may not have happened): {_shown(c)}" for c in self.not_rerun]


def cached(usage: Usage) -> str:
    """``, 41,230 input tokens read from the prompt cache, 2,100 written`` (nothing when no cache was used)."""
    if not (usage.cache_read_tokens or usage.cache_write_tokens):
        return ""
    return (
        f", {usage.cache_read_tokens:,} input tokens read from the prompt cache, {usage.cache_write_tokens:,} written"
    )


def _shown(call: ToolCall) -> str:
    return one_line(call.name, call.arguments, call.raw_arguments)


def one_line(name: str, arguments: Mapping[str, Any] | None, raw: str | None = None) -> str:
    """A call as one line, cut to a readable width: ``transfer(to='bob', memo='rent\\nfor May')``."""
    shown = format_call(name, arguments, raw).replace("\n", "\\n")
    return shown if len(shown) <= _WIDTH else shown[: _WIDTH - 5] + "…)"


def pause_message(run_id: str, pending: Sequence[Mapping[str, Any]], journal: str | None) -> str:
    """What a paused run waits for, and the command that approves or refuses each call.

    ``pending`` are approval requests as the journal stores them; ``journal`` the ``--journal`` given, if any.
    """
    resume = f"toolslip resume {shlex.quote(run_id)}" + (f" --journal {shlex.quote(journal)}" if journal else "")
    n = len(pending)
    lines = [f"run {run_id} is paused: {n} call{'s' * (n != 1)} wait{'s' * (n == 1)} for a decision"]
    for request in pending:
        call_id = str(request["call_id"])
        shown = one_line(str(request["tool"]), request.get("arguments"))
        decide = f"{resume} --decide {shlex.quote(call_id + '=')}"
        if request.get("interrupted"):
            lines.append(f"  {shown}  (call {call_id}: started before the run was interrupted; may have happened)")
            lines.append(f"    run it again:     {decide}yes")
            lines.append(f"    do not run again: {decide}no")
        else:
            lines.append(f"  {shown}  (call {call_id}: needs approval)")
            lines.append(f"    approve: {decide}yes")
            lines.append(f"    refuse:  {decide}no")
    lines.append(f"  or all at once: {resume} --approve yes|no (new calls), --rerun-interrupted yes|no (interrupted)")
    return "\n".join(lines)
