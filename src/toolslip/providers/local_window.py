"""The embedded model's window: a conversation whose tool results overflow it is cut to fit, not refused.

The local model reads at most ``n_ctx`` tokens (8,192 by default), the prompt and its answer together. One
350 KB tool result made a 185,298-token prompt and the run died with the window error. The prompt is what
this provider builds, so this is the last place that can still make it fit, whoever sent the conversation
(``toolslip run``, a library caller, any client of ``toolslip serve``): the longest tool results are cut,
each with a note the model reads, until the prompt leaves room for the answer. When every result is cut
to its floor and it still does not fit (hundreds of steps: even a cleared step costs its call and a
placeholder), the oldest tool exchanges leave the prompt, each call with its results, and the system
prompt says how many. Only the prompt changes; the caller's messages (and so the run journal) keep every
character. A prompt still too long with no exchange left to drop is refused as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..core.messages import Message, Part, ToolResult, ToolSpec
from .local_chat import ChatTemplate, with_system_note

if TYPE_CHECKING:
    import threading

    from llama_cpp import Llama

__all__ = ["fit_prompt", "fit_window"]

_MIN_KEEP = 200
"""Characters a cut result keeps at least: enough for its start to say what it was."""
_NOTE_TOKENS = 60
"""Room left for the note a cut adds (about 40 tokens) and for the rate's error."""
_DROP_BLOCK = 16
"""Old exchanges leave the prompt this many at a time. The prompt's start then stays the same for about as
many steps, and llama.cpp reuses what it has already read of it; a cut moving by one exchange each step
made the model read its whole 8,192-token window again on every step (over 100 s a step at step 140 of a
200-step run on 2 cores)."""


def fit_prompt(
    model: tuple[Llama, ChatTemplate, threading.Lock],
    messages: Sequence[Message],
    tools: Sequence[ToolSpec],
    reserve: int,
) -> list[Message]:
    """``messages`` cut (:func:`fit_window`) so their prompt leaves ``reserve`` tokens of the window for the answer."""

    llama, template, lock = model

    def count(trial: Sequence[Message]) -> int:
        prompt = template.render(trial, tools)
        with lock:
            return len(llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    return fit_window(messages, count, llama.n_ctx() - reserve)


def fit_window(messages: Sequence[Message], count: Callable[[Sequence[Message]], int], room: int) -> list[Message]:
    """``messages`` with their longest tool results cut until ``count(messages)`` (prompt tokens) is at most ``room``.

    Each round cuts the longest result by the excess, converted to characters at the prompt's own
    characters-per-token rate, so a few renderings suffice whatever the size; a result keeps at least
    :data:`_MIN_KEEP` characters. Messages that fit come back unchanged (one count).
    """
    out = list(messages)
    full = {(i, j): r.text for i, m in enumerate(out) for j, r in enumerate(m.tool_results)}
    kept = dict(full)  # how much of each result the model still reads
    for _ in range(len(full) + 8):  # each round cuts one result to size, or to its floor
        tokens = count(out)
        over = tokens - room
        if over <= 0:
            return out
        cuttable = [key for key, text in kept.items() if len(text) > _MIN_KEEP]
        if not cuttable:
            return _without_old_exchanges(out, count, room)
        key = max(cuttable, key=lambda k: len(kept[k]))
        shown = kept[key]
        chars_per_token = max(sum(len(t) for t in kept.values()) / tokens, 0.5)
        keep = max(_MIN_KEEP, len(shown) - int((over + _NOTE_TOKENS) * chars_per_token))
        kept[key] = shown[:keep]
        i, j = key
        note = (
            f"\n[... output truncated to fit the local model's {room}-token window: {len(full[key]) - keep} more "
            "characters not shown; answer from this part, or call the tool again asking for less]"
        )
        out[i] = _with_result(out[i], j, kept[key] + note)
    return out


def _without_old_exchanges(
    messages: list[Message], count: Callable[[Sequence[Message]], int], room: int
) -> list[Message]:
    """``messages`` without their oldest tool exchanges (a call message and the results after it), a block of
    :data:`_DROP_BLOCK` at a time, until they fit; the newest exchange always stays, and the system prompt
    says how many left. Unchanged if none can go."""
    exchanges = [
        i
        for i, m in enumerate(messages[:-1])
        if m.role == "assistant" and m.tool_calls and messages[i + 1].role == "tool"
    ]
    trial = messages
    for block in range(_DROP_BLOCK, len(exchanges) - 1 + _DROP_BLOCK, _DROP_BLOCK):
        dropped = min(block, len(exchanges) - 1)  # the newest exchange stays
        gone = {k for i in exchanges[:dropped] for k in (i, i + 1)}
        note = (
            f"[{dropped} earlier tool call(s) and their results are left out here to fit the local model's "
            f"{room}-token window; call a tool again if you need one of them]"
        )
        trial = with_system_note([m for k, m in enumerate(messages) if k not in gone], note)
        if count(trial) <= room:
            return trial
    return trial  # still too long: the caller refuses the prompt with its size


def _with_result(message: Message, index: int, text: str) -> Message:
    """``message`` with the text of its ``index``-th tool result replaced."""
    parts: list[Part] = []
    seen = -1
    for part in message.parts:
        if isinstance(part, ToolResult):
            seen += 1
            if seen == index:
                part = replace(part, content=text)
        parts.append(part)
    return replace(message, parts=tuple(parts))
