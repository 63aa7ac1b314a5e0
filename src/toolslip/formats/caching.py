"""Prompt caching: where each wire lets a request say "cache up to here", and whether a request kept its prefix.

On a long agent run the system prompt, the tools and the history so far are sent again on every step and
are most of the bill; a provider that caches them charges a tenth for the part it reads back. Anthropic
and Bedrock cache only up to the breakpoints a request marks, so :func:`with_breakpoints` marks them, at
most four (both services' limit, breakpoints the caller set included), in the order that saves most:

1. the end of the last message: the whole prefix, written for the next step to read;
2. the end of the previous request's last message (the message before the model's latest turn): the
   point the previous step wrote, so it is read even when this turn added more blocks than Anthropic's
   20-block look-back;
3. the system prompt and 4. the tools: read by other runs that share them.

OpenAI caches every prefix of 1,024 tokens or more by itself; ``prompt_cache_key`` (:func:`cache_key`)
routes requests that share a system prompt and tools to the same cache. Gemini 2.5 and later cache
implicitly and have no field for it. The body is copied where it is marked, never changed in place: the
formats' encoding memos share message dicts between requests.

:func:`prefix_change` says why a request does not start with the previous one (the tools changed, message
3 changed), so a run can warn that its cache could not be read.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..core.messages import Request

__all__ = ["MAX_BREAKPOINTS", "cache_key", "prefix_change", "with_breakpoints"]

MAX_BREAKPOINTS = 4
"""Anthropic's (and Bedrock's) limit of cache breakpoints in one request."""

_EPHEMERAL = {"type": "ephemeral"}
_CACHE_POINT = {"cachePoint": {"type": "default"}}
_NOT_MARKABLE = frozenset({"thinking", "redacted_thinking"})
"""Blocks that cannot carry ``cache_control`` themselves (Anthropic caches them with their turn)."""

Json = dict[str, Any]


def with_breakpoints(fmt: str, body: Json) -> Json:
    """``body`` (a request of wire ``fmt``) with cache breakpoints added up to the limit; other wires unchanged."""
    if fmt == "anthropic":
        return _anthropic(body)
    if fmt == "bedrock":
        return _bedrock(body)
    return body


def _turn_ends(messages: Sequence[Any]) -> list[int]:
    """The messages to mark, best first: the last one, then the last one before the model's latest turn."""
    if not messages:
        return []
    last = len(messages) - 1
    latest = next((i for i in range(last, -1, -1) if messages[i].get("role") == "assistant"), None)
    return [last] if latest is None or latest == 0 else [last, latest - 1]


# --- Anthropic: cache_control on a block -----------------------------------------------------------------


def _anthropic(body: Json) -> Json:
    budget = MAX_BREAKPOINTS - _count(body, "cache_control")
    if budget <= 0:
        return body
    out = dict(body)
    messages = list(out.get("messages") or ())
    for index in _turn_ends(messages):
        if budget and (marked := _marked_message(messages[index])) is not None:
            messages[index], budget = marked, budget - 1
    out["messages"] = messages
    system = out.get("system")
    if budget and system:
        blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
        if blocks and (marked_block := _marked_block(blocks[-1])) is not None:
            out["system"], budget = [*blocks[:-1], marked_block], budget - 1
    tools = out.get("tools")
    if budget and tools and "cache_control" not in tools[-1]:
        out["tools"] = [*tools[:-1], {**tools[-1], "cache_control": _EPHEMERAL}]
    return out


def _marked_message(message: Mapping[str, Any]) -> Json | None:
    content = message.get("content")
    if isinstance(content, str):
        return (
            {**message, "content": [{"type": "text", "text": content, "cache_control": _EPHEMERAL}]}
            if content
            else None
        )
    blocks = list(content or ())
    for j in range(len(blocks) - 1, -1, -1):
        marked = _marked_block(blocks[j])
        if marked is not None:
            blocks[j] = marked
            return {**message, "content": blocks}
        if blocks[j].get("type") not in _NOT_MARKABLE:
            return None  # the last block cannot take a mark (an empty text): marking an earlier one caches less
    return None


def _marked_block(block: Mapping[str, Any]) -> Json | None:
    if "cache_control" in block or block.get("type") in _NOT_MARKABLE:
        return None
    if block.get("type") == "text" and not block.get("text"):
        return None  # "cache_control cannot be set for empty text blocks"
    return {**block, "cache_control": _EPHEMERAL}


def _count(body: Mapping[str, Any], key: str) -> int:
    """How many breakpoints the caller already set (in tools, system and message blocks)."""
    found = sum(1 for t in body.get("tools") or () if isinstance(t, Mapping) and key in t)
    system = body.get("system")
    if isinstance(system, list):
        found += sum(1 for b in system if isinstance(b, Mapping) and key in b)
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, list):
            found += sum(1 for b in content if isinstance(b, Mapping) and key in b)
    return found


# --- Bedrock Converse: a cachePoint block after what is cached -------------------------------------------


def _bedrock(body: Json) -> Json:
    budget = MAX_BREAKPOINTS - _points(body)
    if budget <= 0:
        return body
    out = dict(body)
    messages = list(out.get("messages") or ())
    for index in _turn_ends(messages):
        content = list(messages[index].get("content") or ())
        if budget and content and "cachePoint" not in content[-1]:
            messages[index], budget = {**messages[index], "content": [*content, _CACHE_POINT]}, budget - 1
    out["messages"] = messages
    system = out.get("system")
    if budget and system and "cachePoint" not in system[-1]:
        out["system"], budget = [*system, _CACHE_POINT], budget - 1
    config = out.get("toolConfig")
    tools = config.get("tools") if isinstance(config, Mapping) else None
    if budget and tools and "cachePoint" not in tools[-1]:
        out["toolConfig"] = {**config, "tools": [*tools, _CACHE_POINT]}  # type: ignore[dict-item]
    return out


def _points(body: Mapping[str, Any]) -> int:
    config = body.get("toolConfig")
    lists = [body.get("system") or (), config.get("tools") or () if isinstance(config, Mapping) else ()]
    lists += [m.get("content") or () for m in body.get("messages") or ()]
    return sum(1 for blocks in lists for b in blocks if isinstance(b, Mapping) and "cachePoint" in b)


# --- OpenAI: a routing key; the prefix test -------------------------------------------------------------


def cache_key(request: Request) -> str:
    """A ``prompt_cache_key`` shared by requests with the same system prompt and tools (16 hex digits)."""
    system = request.messages[0].text if request.messages and request.messages[0].role == "system" else ""
    tools = [(t.name, t.description, t.parameters) for t in request.tools]
    digest = hashlib.sha256(orjson.dumps([system, tools], option=orjson.OPT_SORT_KEYS)).hexdigest()
    return f"toolslip-{digest[:16]}"


def prefix_change(previous: Request, request: Request) -> str | None:
    """Why ``request`` does not begin with everything ``previous`` sent (so a cache of it cannot be read),
    or ``None`` when it does."""
    if request.tools is not previous.tools and request.tools != previous.tools:
        return "the tools offered changed"
    before, now = previous.messages, request.messages
    if len(now) < len(before):
        return f"the transcript got shorter ({len(before)} messages, now {len(now)})"
    for i, message in enumerate(before):
        if now[i] is not message and now[i] != message:
            what = "the system prompt" if message.role == "system" else f"message {i} ({message.role})"
            return f"{what} changed"
    return None
