"""Call ids for wires that may have none (Gemini without ``id``, Ollama), and results paired to calls.

The neutral transcript pairs a result to its call by ``call_id``. Gemini's ``functionCall`` usually has no
``id`` and Ollama's tool calls never had one, so reading them makes ids up: ``call_<response id>_<k>`` for
the calls of a response (unique across a loop's steps, which each read one response), ``call_<i>_<k>``
for the calls of history message ``i``. The made-up id is marked in the part's stash, so writing the call
back to its own format leaves it out again.

A result without an id is paired with the calls of the assistant turn before it: by name when the wire
gives the name (Gemini's ``functionResponse.name``, Ollama's ``tool_name``), else by position, and each
call at most once. A result no call is left for is not guessed at: :class:`Pairing` raises a
:class:`FormatError` naming it (``toolslip check`` reports every such mistake in a history).
"""

from __future__ import annotations

import re

from ..core.errors import FormatError
from ..core.messages import ToolCall

MADE_UP = "~id"
"""Stash key (never a wire key) marking a part whose id was made up here: it is left out when written."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def response_call_id(response_id: str, k: int) -> str:
    """The id of call ``k`` of a response whose wire gave none (only ``[A-Za-z0-9_-]``, as Anthropic needs)."""
    seed = _UNSAFE.sub("_", response_id)
    return f"call_{seed}_{k}" if seed else f"call_{k}"


def history_call_id(message: int, k: int) -> str:
    """The id of call ``k`` of history message ``message`` whose wire gave none."""
    return f"call_{message}_{k}"


class Pairing:
    """The open calls of the last assistant turn, for results that name no call id."""

    def __init__(self) -> None:
        self._open: list[ToolCall] = []

    def turn(self, calls: list[ToolCall]) -> None:
        """An assistant turn: its calls are now the ones results answer."""
        self._open = list(calls)

    def take(self, name: str | None, path: str) -> str:
        """The id of the first open call named ``name`` (any call when ``None``), closing it."""
        for j, call in enumerate(self._open):
            if name is None or call.name == name:
                return self._open.pop(j).id
        named = f" named {name!r}" if name is not None else ""
        raise FormatError(
            f"this result answers no call{named} of the assistant turn before it (results without ids are "
            "paired with that turn's calls by order and name); put each result after its call",
            path,
        )

    def close(self, call_id: str) -> None:
        """A result that names its call's id: that call is answered."""
        self._open = [c for c in self._open if c.id != call_id]
