"""A journaled run's whole transcript, to ask a follow-up of it (``toolslip run --continue``, ``chat``).

The journal holds what the run started with, every model answer and every finished call; the transcript
is those in order, each answer followed by its calls' results in call order. A call the journal has no
result for still gets one, so the transcript stays valid for every provider (each call answered) and says
honestly what happened: a call that started and has no recorded end *may* have happened (the process was
killed while it ran); a call that never started did not.
"""

from __future__ import annotations

from collections.abc import Container, Sequence

from ..core.messages import Message, ToolCall, ToolResult
from .journal_entries import recording_from_entries
from .journal_store import Entry

__all__ = ["transcript_from_entries"]

_NEVER_RAN = "not executed: the run ended before this call ran"
_CUT_OFF = (
    "unknown outcome: the run was interrupted while this call ran, so it may or may not have happened; "
    "check before doing it again"
)


def transcript_from_entries(entries: Sequence[Entry]) -> list[Message] | None:
    """The run's messages as far as the journal recorded them; ``None`` when the run never started."""
    recording = recording_from_entries(entries)
    if recording is None:
        return None
    messages = list(recording.messages)
    for step in sorted(recording.responses):
        message = recording.responses[step].message
        messages.append(message)
        if message.tool_calls:
            results = [
                recording.results.get((step, c.id)) or _missing(c, step, recording.started) for c in message.tool_calls
            ]
            messages.append(Message.tool(results))
    return messages


def _missing(call: ToolCall, step: int, cut_off: Container[tuple[int, str]]) -> ToolResult:
    started = (step, call.id) in cut_off
    return ToolResult(
        call_id=call.id,
        name=call.name,
        content=_CUT_OFF if started else _NEVER_RAN,
        is_error=True,
        outcome="failed" if started else "not_executed",
    )
