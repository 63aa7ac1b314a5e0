"""History processors: plain functions over the transcript, run before each request so a long run fits.

A processor takes the messages a request is about to carry (and, if it wants, the run's context first) and
returns the messages to send instead; ``Agent(history_processors=[...])`` runs them in order before every
model call. They change only what is *sent*: the run's own transcript (``RunResult.messages``, the
journal) keeps everything, so a processor can be changed or removed and the run resumed.

Every built-in processor keeps the transcript valid on every wire (``toolslip check`` passes): a call and
its result are kept or dropped together, a cut never starts inside a step, the system prompt and the
user's question stay, and what was left out is said in a note on that question rather than in a new
message (two user messages in a row are refused by some wires).

- :func:`keep_last_turns` keeps the last ``n`` steps (a step: one model turn and its results);
- :func:`clear_tool_results` keeps every call and result but replaces old results' text by a marked
  placeholder, the cheapest way to save most of a tool-heavy context;
- :func:`trim_to_tokens` drops the oldest steps until the messages fit a token budget, counted with the
  o200k tokenizer and corrected by the provider's own count of the previous request;
- :class:`Summarize` replaces old steps by a summary written by any model (the embedded one included);
- :func:`provider_context_management` asks the provider to do it itself (Anthropic's context-management
  edits, the Responses API's ``truncation``): settings, not a processor.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TypeAlias, TypeGuard

from ..core.errors import ConfigError
from ..core.messages import Message, Request, Settings, Text, ToolResult
from ..core.model import Model
from .hooks import Hook, RunContext

__all__ = [
    "CLEARED",
    "HistoryProcessor",
    "HistoryProcessors",
    "Summarize",
    "clear_tool_results",
    "keep_last_turns",
    "provider_context_management",
    "trim_to_tokens",
]

HistoryProcessor: TypeAlias = Callable[..., Sequence[Message] | Awaitable[Sequence[Message]]]
"""``fn(messages)`` or ``fn(ctx, messages)``, sync or async, returning the messages to send."""

CLEARED = "[toolslip: tool result cleared to save context; it was {chars} characters]"
"""The placeholder :func:`clear_tool_results` leaves where an old result's text was."""

_CUT = "\n[toolslip: cut to fit the context: the first {kept} of {chars} characters are shown]"


class HistoryProcessors(Hook):
    """The hook ``Agent(history_processors=...)`` adds first, so every other hook sees what is sent."""

    def __init__(self, processors: Sequence[HistoryProcessor]) -> None:
        self._steps: list[tuple[Callable[..., Any], bool]] = []
        for processor in processors:
            if not callable(processor):
                raise ConfigError(f"a history processor is a function over the messages, not {processor!r:.60}")
            self._steps.append((processor, _takes_context(processor)))

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        messages: Sequence[Message] = request.messages
        for processor, with_context in self._steps:
            out = processor(ctx, list(messages)) if with_context else processor(list(messages))
            messages = await out if inspect.isawaitable(out) else out
        return request.with_messages(messages)


def _takes_context(processor: Callable[..., Any]) -> bool:
    """Whether ``processor`` takes ``(ctx, messages)`` rather than ``(messages)``."""
    try:
        parameters = inspect.signature(processor).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: messages only
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2


# --- where steps begin ------------------------------------------------------------------------------------


def _head(messages: Sequence[Message]) -> int:
    """How many messages come before the first model turn: the system prompt and the first question."""
    for i, message in enumerate(messages):
        if message.role == "assistant":
            return i
    return len(messages)


def _step_starts(messages: Sequence[Message], head: int) -> list[int]:
    """The index of every model turn after the head: a cut there never splits a call from its result."""
    return [i for i in range(head, len(messages)) if messages[i].role == "assistant"]


def _cut(messages: Sequence[Message], head: int, start: int, note: str) -> list[Message]:
    """The head, the latest question if it was cut away, and everything from ``start`` (a model turn).

    ``note`` is added to the last kept question, so the model knows something is missing without a second
    user message in a row."""
    kept = list(messages[:head])
    asked = next((i for i in range(start - 1, head - 1, -1) if messages[i].role == "user"), None)
    if asked is not None:  # a later question (a chat) than the first: it is the one being answered
        kept = [m for m in kept if m.role == "system"] + [messages[asked]]
    at = next((i for i in range(len(kept) - 1, -1, -1) if kept[i].role == "user"), None)
    if note and at is not None:
        kept[at] = replace(kept[at], parts=(*kept[at].parts, Text(text=f"\n\n{note}")))
    return kept + list(messages[start:])


# --- keep the last turns ----------------------------------------------------------------------------------


def keep_last_turns(n: int) -> HistoryProcessor:
    """Send the system prompt, the question and the last ``n`` steps; older steps are left out."""
    if n < 1:
        raise ConfigError(f"keep_last_turns needs n of at least 1, got {n}")

    def keep_last(messages: Sequence[Message]) -> Sequence[Message]:
        head = _head(messages)
        starts = _step_starts(messages, head)
        if len(starts) <= n:
            return messages
        left = len(starts) - n
        return _cut(messages, head, starts[left], f"[toolslip: {left} earlier steps were left out to save context]")

    return keep_last


# --- clear old tool results -------------------------------------------------------------------------------


def clear_tool_results(keep_last: int = 3, *, min_chars: int = 200) -> HistoryProcessor:
    """Replace the text of results older than the last ``keep_last`` steps with :data:`CLEARED`.

    The calls and their results stay, paired, so the model still sees what it did; only results longer
    than ``min_chars`` are cleared (a short answer costs less than its placeholder)."""
    if keep_last < 0:
        raise ConfigError(f"clear_tool_results needs keep_last of at least 0, got {keep_last}")

    def clear(messages: Sequence[Message]) -> Sequence[Message]:
        starts = _step_starts(messages, _head(messages))
        if len(starts) <= keep_last:
            return messages
        until = starts[len(starts) - keep_last] if keep_last else len(messages)
        out = list(messages)
        for i in range(until):
            message = messages[i]
            if message.role != "tool":
                continue
            parts = tuple(_cleared(p, min_chars) if isinstance(p, ToolResult) else p for p in message.parts)
            if any(a is not b for a, b in zip(parts, message.parts, strict=True)):
                out[i] = replace(message, parts=parts)
        return out

    return clear


def _cleared(result: ToolResult, min_chars: int) -> ToolResult:
    chars = _chars(result)
    if chars <= min_chars or result.content == CLEARED.format(chars=chars):
        return result
    return replace(result, content=CLEARED.format(chars=chars))


def _chars(result: ToolResult) -> int:
    if isinstance(result.content, str):
        return len(result.content)
    return sum(len(p.text) if isinstance(p, Text) else 1000 for p in result.content)  # an image or file: ~1k


# --- trim to a token budget -------------------------------------------------------------------------------


@dataclass
class _Counts:
    """One run's token bookkeeping: the count of each message sent, and how the provider's count compares."""

    memo: dict[int, tuple[Message, int]] = field(default_factory=dict)
    sent: int = 0
    """The estimate for the last request sent."""
    input_before: int = 0
    """The run's input tokens before that request, to read the provider's count of it from the usage."""
    ratio: float = 1.0
    """The provider's count over the estimate, from the last request (o200k is not every wire's tokenizer)."""
    kept_from: Message | None = None
    """The model turn the last request's kept steps began with (``None``: none were left out)."""

    def of(self, message: Message) -> int:
        known = self.memo.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        from ..quality.tokens import count_tokens, message_texts  # the tokenizer loads only when a run trims

        tokens = sum(count_tokens(message_texts(message))) + 3  # 3: the message's framing
        self.memo[id(message)] = (message, tokens)
        return tokens


def trim_to_tokens(max_tokens: int, *, low: int | None = None, key: str = "trim_to_tokens") -> HistoryProcessor:
    """Drop the oldest steps once the messages exceed ``max_tokens``, until they fit in ``low`` (default three
    quarters of it); cut the longest results if the last step alone does not fit.

    The steps left out stay out until the budget is reached again, so one request begins as the one before
    it did: a provider's prompt cache (and the embedded model's) keeps serving that start. A cut that moved
    at every step made every request a cache miss; on the embedded model a 200-step run took 45.7 s a
    step, the whole kept context read again each time (issue 38).

    The count is o200k tokens of each message's text and calls (:mod:`toolslip.quality.tokens`), scaled by
    how the provider counted the previous request (its ``input_tokens``), so a wire whose tokenizer counts
    more is trimmed sooner. ``max_tokens`` is for the messages: leave room for the tool declarations and
    the answer."""
    if max_tokens < 1:
        raise ConfigError(f"trim_to_tokens needs a positive budget, got {max_tokens}")
    low = max_tokens * 3 // 4 if low is None else low
    if not 0 < low <= max_tokens:
        raise ConfigError(f"trim_to_tokens needs low between 1 and max_tokens ({max_tokens}), got {low}")

    def trim(ctx: RunContext, messages: Sequence[Message]) -> Sequence[Message]:
        counts: _Counts = ctx.state.setdefault(key, _Counts())
        answered = ctx.usage.input_tokens - counts.input_before
        if counts.sent and answered > 0:
            counts.ratio = max(1.0, answered / counts.sent)
        out = _fit(list(messages), int(max_tokens / counts.ratio), int(low / counts.ratio), counts)
        counts.sent, counts.input_before = sum(counts.of(m) for m in out), ctx.usage.input_tokens
        return out

    return trim


def _fit(messages: list[Message], budget: int, low: int, counts: _Counts) -> list[Message]:
    """``messages`` without the steps the last request left out, and more (down to ``low``) if over ``budget``."""
    sizes = [counts.of(m) for m in messages]
    head = _head(messages)
    starts = _step_starts(messages, head)
    kept_from = counts.kept_from
    drop = next((k for k, i in enumerate(starts[:-1]) if messages[i] == kept_from), 0) if kept_from else 0
    total = sum(sizes) - (sum(sizes[starts[0] : starts[drop]]) if drop else 0)
    if total > budget:
        while total > low and drop < len(starts) - 1:  # the last step always stays
            total -= sum(sizes[starts[drop] : starts[drop + 1]])
            drop += 1
    counts.kept_from = messages[starts[drop]] if drop else None
    if not drop:
        return messages if total <= budget else _shrink(messages, budget, counts)
    out = _cut(messages, head, starts[drop], f"[toolslip: {drop} earlier steps were left out to fit the context]")
    return _shrink(out, budget, counts)


def _shrink(messages: list[Message], budget: int, counts: _Counts) -> list[Message]:
    """Cut the longest results, largest first, until the messages fit (the last resort: one huge output)."""
    over = sum(counts.of(m) for m in messages) - budget
    while over > 0:
        found = [(len(r.text), i, j, r) for i, m in enumerate(messages) for j, r in enumerate(m.parts) if _long(r)]
        if not found:
            return messages
        chars, i, j, result = max(found, key=lambda f: f[:3])
        tokens = max(1, counts.of(Message.tool([result])) - 3)
        kept = max(0, int(chars * max(0, tokens - over - 40) / tokens))  # 40: the note's own tokens
        text = result.text[:kept] + _CUT.format(kept=kept, chars=chars)
        parts = list(messages[i].parts)
        parts[j] = replace(result, content=text)
        before = counts.of(messages[i])
        messages[i] = replace(messages[i], parts=tuple(parts))
        over -= before - counts.of(messages[i])
    return messages


def _long(part: object) -> TypeGuard[ToolResult]:
    return isinstance(part, ToolResult) and len(part.text) > 400 and "[toolslip: cut to fit" not in part.text


# --- summarising compaction -------------------------------------------------------------------------------

SUMMARY_PROMPT = (
    "You compress the working notes of an assistant that is part-way through a task with tools. Write a "
    "short summary of the steps below: what was done, what each tool returned that still matters (numbers, "
    "names, ids, errors), and what is left to do. Write only the summary."
)


@dataclass
class _Summary:
    covered: int = 0
    """How many messages of the transcript (from the head) the summary stands for."""
    text: str = ""


class Summarize:
    """Replace old steps by a summary once the messages pass ``max_tokens``; any :class:`Model` writes it.

    The summary is written once and extended as the run grows (the earlier summary plus the newly cut steps
    are summarised again), so a 200-step run asks the summariser a handful of times, not every step. The
    text given to the summariser is capped at ``max_input_chars`` so a small model's window holds it, each
    old result is shown up to ``result_chars`` characters, and the summary is at most ``max_summary_tokens``."""

    def __init__(
        self,
        model: Model,
        *,
        max_tokens: int,
        keep_last: int = 2,
        max_input_chars: int = 12_000,
        result_chars: int = 600,
        max_summary_tokens: int = 500,
        prompt: str = SUMMARY_PROMPT,
    ) -> None:
        if keep_last < 1 or max_tokens < 1:
            raise ConfigError("Summarize needs max_tokens and keep_last of at least 1")
        self.model, self.max_tokens, self.keep_last = model, max_tokens, keep_last
        self.max_input_chars, self.result_chars, self.prompt = max_input_chars, result_chars, prompt
        self.settings = Settings(max_tokens=max_summary_tokens)
        self._key = f"summarize:{id(self)}"

    async def __call__(self, ctx: RunContext, messages: Sequence[Message]) -> Sequence[Message]:
        state: _Summary = ctx.state.setdefault(self._key, _Summary())
        counts: _Counts = ctx.state.setdefault(self._key + ":counts", _Counts())
        head = _head(messages)
        out = self._with_summary(messages, head, state)
        if sum(counts.of(m) for m in out) <= self.max_tokens:
            return out
        starts = _step_starts(messages, max(head, state.covered))
        if len(starts) <= self.keep_last:
            return out
        upto = starts[len(starts) - self.keep_last]
        old = messages[max(head, state.covered) : upto]
        state.text = await self._summarise(state.text, old)
        state.covered = upto
        return self._with_summary(messages, head, state)

    def _with_summary(self, messages: Sequence[Message], head: int, state: _Summary) -> list[Message]:
        if not state.covered:
            return list(messages)
        note = f"[toolslip: the earlier steps, summarised to save context]\n{state.text}"
        return _cut(messages, head, state.covered, note)

    async def _summarise(self, earlier: str, old: Sequence[Message]) -> str:
        lines = [f"Summary so far:\n{earlier}"] if earlier else []
        lines += [_render(m, self.result_chars) for m in old]
        text = "\n".join(lines)
        if len(text) > self.max_input_chars:  # keep the newest: the summary so far is first, the rest is recent
            text = text[: self.max_input_chars // 3] + "\n...\n" + text[-(self.max_input_chars * 2 // 3) :]
        request = Request(model="", messages=(Message.system(self.prompt), Message.user(text)), settings=self.settings)
        response = await self.model.complete(request)
        return response.message.text.strip() or earlier


def _render(message: Message, result_chars: int) -> str:
    """One message as the summariser reads it: who spoke, the calls made, each result (cut)."""
    said = [f"{message.role}: {message.text}"] if message.text else []
    said += [f"called {c.name}({c.raw_arguments or json.dumps(c.arguments)})" for c in message.tool_calls]
    for result in message.tool_results:
        text = result.text
        shown = text if len(text) <= result_chars else text[:result_chars] + f"... ({len(text)} characters)"
        said.append(f"{result.name or 'tool'} returned{' an error' if result.is_error else ''}: {shown}")
    return "\n".join(said)


# --- the providers' own context management ----------------------------------------------------------------


def provider_context_management(
    model: str | Model, *, trigger_tokens: int = 100_000, keep_tool_uses: int = 3
) -> Mapping[str, Any]:
    """The request fields that ask the provider behind ``model`` to manage the context itself, for
    ``Settings(extra=...)``: Anthropic's context-management edit that clears old tool results once the
    input passes ``trigger_tokens`` (keeping the last ``keep_tool_uses``), the Responses API's
    ``truncation: "auto"`` (it drops the oldest items when the window is full). Other providers have no
    such field: use a history processor."""
    name = model if isinstance(model, str) else model.name
    provider = name.split(":", 1)[0]
    if provider == "anthropic":
        edit = {
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": trigger_tokens},
            "keep": {"type": "tool_uses", "value": keep_tool_uses},
        }
        return {"context_management": {"edits": [edit]}}
    if provider == "openai-responses":
        return {"truncation": "auto"}
    raise ConfigError(
        f"{name} has no context management of its own (Anthropic and the Responses API have); use a history "
        "processor such as toolslip.history.trim_to_tokens"
    )
