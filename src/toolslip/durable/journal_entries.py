"""A run's journal entries read back: the JSON form of model responses, and what the entries say the run did.

Split from :mod:`toolslip.durable.journal` (the hooks that write entries) because everything that only
*reads* a journal needs this half alone: ``toolslip show``, ``resume``'s checks, the console's pages and
the fleet's status read entries without running anything.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from contextlib import suppress
from typing import Any

import orjson

from ..core.messages import ModelResponse, ToolResult, Usage, message_from_dict, message_to_dict, part_from_dict
from .dedup import duplicate_answer
from .inbox import edit_response
from .journal_store import Entry
from .replay import Recording

__all__ = [
    "Tally",
    "compact_response",
    "not_resumable",
    "recording_from_entries",
    "response_from_dict",
    "response_to_dict",
    "tally",
]

_BIG = 4096
"""Arguments longer than this are stored once, as the model wrote them (see :func:`compact_response`)."""


# --- JSON form of responses ---------------------------------------------------------------------


def response_to_dict(response: ModelResponse) -> dict[str, Any]:
    return {
        "message": message_to_dict(response.message),
        "stop_reason": response.stop_reason,
        "usage": dataclasses.asdict(response.usage),
        "model": response.model,
        "id": response.id,
        "raw_stop_reason": response.raw_stop_reason,
        "extra": dict(response.extra),
    }


def response_from_dict(data: Mapping[str, Any]) -> ModelResponse:
    message = data["message"]
    if any(p.get("arguments_from_raw") for p in message.get("parts", ())):
        message = {**message, "parts": [_expanded(p) for p in message["parts"]]}
    return ModelResponse(
        message=message_from_dict(message),
        stop_reason=data["stop_reason"],
        usage=Usage(**data.get("usage", {})),
        model=data.get("model", ""),
        id=data.get("id", ""),
        raw_stop_reason=data.get("raw_stop_reason"),
        extra=data.get("extra") or {},
    )


def compact_response(data: dict[str, Any]) -> dict[str, Any]:
    """Keep a big call's arguments once: the text the model wrote, parsed again when read back.

    A 10 MB argument was stored four times (parsed and raw, in the model entry and in tool_start).
    """
    for part in data["message"]["parts"]:
        raw = part.get("raw_arguments")
        if part.get("kind") == "tool_call" and raw is not None and len(raw) > _BIG and part["arguments"] is not None:
            with suppress(orjson.JSONDecodeError):
                if orjson.loads(raw) == part["arguments"]:
                    part["arguments"], part["arguments_from_raw"] = None, True
    return data


def _expanded(part: Mapping[str, Any]) -> Mapping[str, Any]:
    if not part.get("arguments_from_raw"):
        return part
    return {**part, "arguments": orjson.loads(part["raw_arguments"])}


@dataclasses.dataclass(kw_only=True)
class Tally:
    """Earlier sessions' refusals, carried into the next finish entry."""

    refused: int = 0
    not_rerun: int = 0


def recording_from_entries(entries: Sequence[Entry]) -> Recording | None:
    """What the entries say the run did; ``None`` when the run never started."""
    start = next((e for e in entries if e.kind == "start"), None)
    if start is None:
        return None
    recording = Recording(messages=[message_from_dict(m) for m in start.data["messages"]])
    first_by_key: dict[str, ToolResult] = {}  # what Dedup answered a duplicate with
    for entry in entries:
        if entry.kind == "model":
            recording.responses[entry.step] = response_from_dict(entry.data["response"])
            if "offered" in entry.data:  # a run whose tools change by step (toolslip.agent.toolsets)
                recording.offered[entry.step] = frozenset(entry.data["offered"])
        elif entry.kind == "tool_start":
            recording.started[entry.step, entry.data["call"]["id"]] = entry.key
        elif entry.kind == "tool_end":
            result = part_from_dict(entry.data["result"])
            assert isinstance(result, ToolResult)
            if entry.data.get("duplicate_of"):
                result = duplicate_answer(first_by_key[entry.key], result.call_id)
            elif not result.is_error:
                first_by_key.setdefault(entry.key, result)
            recording.results[entry.step, result.call_id] = result
            recording.started.pop((entry.step, result.call_id), None)
        elif entry.kind == "decision" and "arguments" in entry.data and entry.step in recording.responses:
            edits = {entry.data["call_id"]: entry.data["arguments"]}  # approved with edited arguments
            recording.responses[entry.step] = edit_response(recording.responses[entry.step], edits)
    return recording


def not_resumable(run_id: str, entries: Sequence[Entry], where: object) -> str:
    """Why ``run_id`` cannot be resumed when its entries hold no ``start``: there is no such run, or its first
    write failed (an ``abort`` alone), so nothing of it was journaled and it is to be run again."""
    if not entries:
        return f"no run {run_id!r} in {where}; `toolslip runs` lists the runs it holds"
    error = next((str(e.data.get("error", "")) for e in entries if e.kind == "abort"), "")
    because = f" ({error})" if error else ""
    return (
        f"run {run_id!r} never started: its first entry could not be written{because}; "
        "there is nothing to resume, so run it again"
    )


def tally(entries: Sequence[Entry]) -> Tally:
    """Refused and not-re-run calls as the journal has them: one ``tool_end`` each, in every session.

    Counted from the entries, not carried from the last ``finish``: a resume that declines a cut-off call
    and is itself killed writes the call's ``tool_end`` but no ``finish``, and its count was lost.
    """
    ends = [e.data for e in entries if e.kind == "tool_end"]
    return Tally(
        refused=sum(bool(d.get("refused")) for d in ends), not_rerun=sum(bool(d.get("not_rerun")) for d in ends)
    )
