"""The prompt cache a real service keeps, counted for a model that has none (``serve --model scripted``).

So that a client's caching can be measured offline (``benchmarks/caching.py``), ``toolslip serve`` splits
the input tokens of the scripted and local models' answers the way the services bill them:

- **Anthropic** (``/v1/messages``): only what a request marks is cached. The prefix up to each
  ``cache_control`` breakpoint (tools, then system, then message blocks, in that order) is written, at
  the write rate, unless it is already held; a breakpoint is read when the same prefix was written before,
  at that breakpoint or at most 20 blocks earlier (the service's look-back). A prefix under 1,024 tokens is
  never cached. Entries live 5 minutes from their last use.
- **OpenAI** (Chat Completions and Responses): every prefix of 1,024 tokens or more is cached by itself,
  in steps of 128 tokens; a request reads the longest prefix an earlier one sent. Writing costs nothing.

Token counts are o200k counts of each block as sent, scaled so that the parts add up to the model's own
``input_tokens``: what is read, written and left are in the service's proportions.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import orjson

from ..core.messages import Usage

__all__ = ["PromptCache"]

MINIMUM = 1024
LOOK_BACK = 20
TTL = 300.0
_STEP = 128


class PromptCache:
    """One server's cache: prefix digests -> when they expire."""

    def __init__(self, ttl: float = TTL, clock: Any = time.monotonic) -> None:
        self.ttl, self._clock = ttl, clock
        self._held: dict[bytes, float] = {}

    def account(self, wire: str, body: Mapping[str, Any], usage: Usage) -> Usage:
        """``usage`` with its input split into cache reads, writes and the rest, as ``wire``'s service bills."""
        if usage.cache_read_tokens or usage.cache_write_tokens or not usage.input_tokens:
            return usage  # the model counted its own cache
        if wire == "anthropic":
            read, written, total = self._anthropic(body)
        elif wire in ("openai-chat", "openai-responses"):
            read, written, total = self._openai(wire, body)
        else:
            return usage
        if not total or not (read or written):
            return usage
        scale = usage.input_tokens / total
        read_tokens, write_tokens = round(read * scale), round(written * scale)
        return replace(
            usage,
            input_tokens=max(0, usage.input_tokens - read_tokens - write_tokens),
            cache_read_tokens=read_tokens,
            cache_write_tokens=write_tokens,
        )

    # --- the two policies ---------------------------------------------------------------------------

    def _anthropic(self, body: Mapping[str, Any]) -> tuple[int, int, int]:
        digests, sizes, marks = _walk(_anthropic_blocks(body))
        total = sizes[-1] if sizes else 0
        if not marks:
            return 0, 0, total
        now = self._clock()
        read = 0
        for mark in marks:
            for at in range(mark, max(-1, mark - LOOK_BACK - 1), -1):
                if sizes[at] >= MINIMUM and self._held.get(digests[at], 0.0) > now:
                    read = max(read, sizes[at])
                    self._held[digests[at]] = now + self.ttl  # a read refreshes the entry
                    break
        last = marks[-1]
        written = sizes[last] - read if sizes[last] >= MINIMUM and sizes[last] > read else 0
        for mark in marks:
            if sizes[mark] >= MINIMUM:
                self._held[digests[mark]] = now + self.ttl
        return read, written, total

    def _openai(self, wire: str, body: Mapping[str, Any]) -> tuple[int, int, int]:
        items = body.get("input") if wire == "openai-responses" else body.get("messages")
        blocks = [("tools", body.get("tools") or []), ("instructions", body.get("instructions") or "")]
        blocks += [("item", item) for item in (items if isinstance(items, list) else [items or ""])]
        digests, sizes, _ = _walk(iter(blocks), marked=lambda _: False)
        now, read = self._clock(), 0
        for at in range(len(digests) - 1, -1, -1):
            if sizes[at] >= MINIMUM and self._held.get(digests[at], 0.0) > now:
                read = MINIMUM + (sizes[at] - MINIMUM) // _STEP * _STEP
                break
        for at, digest in enumerate(digests):
            if sizes[at] >= MINIMUM:
                self._held[digest] = now + self.ttl
        return read, 0, sizes[-1] if sizes else 0


def _anthropic_blocks(body: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every cacheable block in the service's order: tools, system, then each message's content."""
    for tool in body.get("tools") or ():
        yield "tool", tool
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or ():
        yield "system", block
    for message in body.get("messages") or ():
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or ():
            yield message.get("role", ""), block


def _marked(block: Any) -> bool:
    return isinstance(block, Mapping) and "cache_control" in block


def _walk(blocks: Iterator[tuple[str, Any]], marked: Any = _marked) -> tuple[list[bytes], list[int], list[int]]:
    """Per block: the digest of the prefix ending there, the prefix's tokens, and which blocks are marked."""
    from ..quality.tokens import count_tokens

    seen = list(blocks)
    texts = [orjson.dumps(_unmarked(block), option=orjson.OPT_SORT_KEYS).decode() for _, block in seen]
    counts = count_tokens(texts)
    digests: list[bytes] = []
    sizes: list[int] = []
    running, chain = 0, hashlib.sha256()
    for (kind, _), text, count in zip(seen, texts, counts, strict=True):
        chain.update(kind.encode() + b"\0" + text.encode() + b"\0")
        running += count
        digests.append(chain.copy().digest())
        sizes.append(running)
    return digests, sizes, [i for i, (_, block) in enumerate(seen) if marked(block)]


def _unmarked(block: Any) -> Any:
    """The block as the cache compares it: without its own breakpoint mark."""
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block
