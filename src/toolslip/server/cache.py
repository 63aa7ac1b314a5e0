"""The prompt cache a real service keeps, counted for a model that has none (``serve --model scripted``).

So that a client's caching can be measured offline (``benchmarks/caching.py``), ``toolslip serve`` splits
the input tokens of the scripted and local models' answers the way the services bill them:

- **Anthropic** (``/v1/messages``): only what a request marks is cached. The prefix up to each
  ``cache_control`` breakpoint (tools, then system, then message blocks, in that order) is written, at
  the write rate, unless it is already held; a breakpoint is read when the same prefix was written before,
  at that breakpoint or at most 20 blocks earlier (the service's look-back). A prefix under 1,024 tokens is
  never cached. Entries live 5 minutes from their last use.
- **Bedrock Converse** (``/model/{id}/converse``): as Anthropic, whose models are behind it, with the
  breakpoint spelled as a ``cachePoint`` block after what it caches (in ``toolConfig.tools``, ``system``
  or a message's content): the marked prefix is written unless held, read back at a point or up to 20
  blocks before it (Bedrock's "simplified" caching for Claude), none under 1,024 tokens (Claude Sonnet's
  minimum per checkpoint), 5 minutes of life renewed by each read. The answer's ``inputTokens`` leaves out
  ``cacheReadInputTokens`` and ``cacheWriteInputTokens``, as AWS documents.
- **OpenAI** (Chat Completions and Responses): every prefix of 1,024 tokens or more is cached by itself,
  in steps of 128 tokens; a request reads the longest prefix an earlier one sent. Writing costs nothing.
- **Gemini** (``generateContent``): implicit caching, as on Gemini 2.5 and later: nothing is marked, every
  prefix of 2,048 tokens or more (the documented minimum of 2.5 Flash and Pro) is kept, whole blocks
  (system instruction, tools, then each content part), and a request reads the longest one an earlier
  request sent. Writing costs nothing; ``promptTokenCount`` includes the ``cachedContentTokenCount`` read.
  Google documents no lifetime for implicit entries: they are kept 5 minutes here, as the others.
- **Ollama** (``/api/chat``) counts no cache: Ollama reuses its last prompt's evaluation but its answer
  has no field for cached tokens, so nothing is split.

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
GEMINI_MINIMUM = 2048
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
            read, written, total = self._breakpoints(wire, _anthropic_blocks(body))
        elif wire == "bedrock":
            read, written, total = self._breakpoints(wire, _bedrock_blocks(body))
        elif wire in ("openai-chat", "openai-responses"):
            read, written, total = self._implicit(wire, _openai_blocks(wire, body), MINIMUM, _STEP)
        elif wire == "gemini":
            read, written, total = self._implicit(wire, _gemini_blocks(body), GEMINI_MINIMUM, 1)
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

    # --- the two policies: marked breakpoints (Anthropic, Bedrock), every long prefix (OpenAI, Gemini) ------

    def _breakpoints(self, wire: str, blocks: Iterator[Block]) -> tuple[int, int, int]:
        digests, sizes, marks = _walk(wire, blocks)
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

    def _implicit(self, wire: str, blocks: Iterator[Block], minimum: int, step: int) -> tuple[int, int, int]:
        """Read the longest prefix (of ``minimum`` tokens or more, counted in ``step``s) an earlier request
        sent; keep every such prefix of this one. Nothing is billed as written."""
        digests, sizes, _ = _walk(wire, blocks)
        now, read = self._clock(), 0
        for at in range(len(digests) - 1, -1, -1):
            if sizes[at] >= minimum and self._held.get(digests[at], 0.0) > now:
                read = minimum + (sizes[at] - minimum) // step * step
                break
        for at, digest in enumerate(digests):
            if sizes[at] >= minimum:
                self._held[digest] = now + self.ttl
        return read, 0, sizes[-1] if sizes else 0


Block = tuple[str, Any, bool]
"""One cacheable block in the service's order: its kind (tool, system, a role), the block, and whether a
breakpoint marks the prefix ending with it."""


def _openai_blocks(wire: str, body: Mapping[str, Any]) -> Iterator[Block]:
    items = body.get("input") if wire == "openai-responses" else body.get("messages")
    yield "tools", body.get("tools") or [], False
    yield "instructions", body.get("instructions") or "", False
    for item in items if isinstance(items, list) else [items or ""]:
        yield "item", item, False


def _gemini_blocks(body: Mapping[str, Any]) -> Iterator[Block]:
    """System instruction, tools, then each content's parts: the order Gemini's prompt is built in."""
    system = body.get("systemInstruction") or body.get("system_instruction") or {}
    for part in system.get("parts") or () if isinstance(system, Mapping) else ():
        yield "system", part, False
    yield "tools", body.get("tools") or [], False
    for content in body.get("contents") or ():
        if isinstance(content, Mapping):
            for part in content.get("parts") or ():
                yield str(content.get("role", "user")), part, False


def _bedrock_blocks(body: Mapping[str, Any]) -> Iterator[Block]:
    """Tools, system, then each message's content; a ``cachePoint`` marks the block before it."""
    config = body.get("toolConfig")
    tools = config.get("tools") if isinstance(config, Mapping) else None
    lists: list[tuple[str, Any]] = [("tool", tools or ()), ("system", body.get("system") or ())]
    lists += [
        (str(m.get("role", "")), m.get("content") or ()) for m in body.get("messages") or () if isinstance(m, Mapping)
    ]
    for kind, blocks in lists:
        blocks = list(blocks)
        for at, block in enumerate(blocks):
            if not _cache_point(block):
                yield kind, block, at + 1 < len(blocks) and _cache_point(blocks[at + 1])


def _cache_point(block: Any) -> bool:
    return isinstance(block, Mapping) and "cachePoint" in block


def _anthropic_blocks(body: Mapping[str, Any]) -> Iterator[Block]:
    """Every cacheable block in the service's order: tools, system, then each message's content."""
    for tool in body.get("tools") or ():
        yield "tool", tool, _marked(tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or ():
        yield "system", block, _marked(block)
    for message in body.get("messages") or ():
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or ():
            yield message.get("role", ""), block, _marked(block)


def _marked(block: Any) -> bool:
    return isinstance(block, Mapping) and "cache_control" in block


def _walk(wire: str, blocks: Iterator[Block]) -> tuple[list[bytes], list[int], list[int]]:
    """Per block: the digest of the prefix ending there, the prefix's tokens, and which blocks are marked.

    The digests begin with the wire's name: each service keeps its own cache, so a Converse request never
    reads what a Gemini request with the same system text wrote."""
    from ..quality.tokens import count_tokens

    seen = list(blocks)
    texts = [orjson.dumps(_unmarked(block), option=orjson.OPT_SORT_KEYS).decode() for _, block, _ in seen]
    counts = count_tokens(texts)
    digests: list[bytes] = []
    sizes: list[int] = []
    running, chain = 0, hashlib.sha256(wire.encode() + b"\0")
    for (kind, _, _), text, count in zip(seen, texts, counts, strict=True):
        chain.update(kind.encode() + b"\0" + text.encode() + b"\0")
        running += count
        digests.append(chain.copy().digest())
        sizes.append(running)
    return digests, sizes, [i for i, (_, _, marked) in enumerate(seen) if marked]


def _unmarked(block: Any) -> Any:
    """The block as the cache compares it: without its own breakpoint mark."""
    if isinstance(block, Mapping) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block
