"""What the provider's own tools did, one line each: the call, its outcome, and the citations it gave.

The CLI prints these under a step (``web_search(query='...') [server] -> 5 results``). A server tool's
blocks are kept verbatim by the formats (:mod:`toolslip.formats.server_tools` declares the tools), so this
module reads them as the wire spells them, and reads Anthropic's citations by writing the message back out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core._display import plural
from ..core.messages import Message, ProviderPart
from . import anthropic
from .server_tools import ANTHROPIC

__all__ = ["describe"]


def describe(message: Message) -> list[str]:
    """One line per server-tool block of an assistant message (call, outcome), then its citations."""
    lines: list[str] = []
    for part in message.parts:
        if isinstance(part, ProviderPart) and (line := _describe_block(part.data)):
            lines.append(line)
    return lines + _citations(message)


def _describe_block(data: Mapping[str, Any]) -> str | None:
    kind = str(data.get("type", ""))
    if kind == "server_tool_use":  # Anthropic: the provider runs this call itself
        return f"{data.get('name')}({_arguments(data.get('input'))}) [server]"
    if kind.endswith("_tool_result") and kind != "tool_result":
        return f"  -> {_outcome(data.get('content'))}"
    if kind == "web_search_call":  # Responses hosted items
        action = data.get("action") or {}
        sources = action.get("sources")
        found = f" -> {plural(len(sources), 'source')}" if isinstance(sources, list) else ""
        asked = {k: v for k, v in action.items() if k in ("query", "url", "pattern")}
        return f"web_search({_arguments(asked)}) [server]{found}"
    if kind == "file_search_call":
        results = data.get("results")
        found = f" -> {plural(len(results), 'result')}" if isinstance(results, list) else ""
        return f"file_search(queries={data.get('queries')!r}) [server]{found}"
    if kind == "code_interpreter_call":
        return f"code_interpreter: {plural(len(str(data.get('code') or '').splitlines()), 'line')} of code [server]"
    if kind == "image_generation_call":
        return f"image_generation: {data.get('status')} [server]"
    if kind in ("mcp_call", "mcp_approval_request"):
        call = f"{data.get('server_label')}.{data.get('name')}({_short(str(data.get('arguments', '')))}) [server]"
        if kind == "mcp_approval_request":
            return call + " asks for approval"
        return call + (f" -> error: {_short(str(data['error']))}" if data.get("error") else "")
    if kind == "mcp_list_tools":
        return f"{data.get('server_label')}: {plural(len(data.get('tools') or ()), 'MCP tool')} listed [server]"
    return None


def _outcome(content: Any) -> str:
    if isinstance(content, list):
        urls = [str(r.get("url", "")) for r in content if isinstance(r, Mapping) and r.get("url")]
        hosts = ", ".join(dict.fromkeys(re.sub(r"^\w+://(www\.)?([^/]+).*", r"\2", u) for u in urls[:3]))
        return plural(len(content), "result") + (f": {hosts}" if hosts else "")
    if not isinstance(content, Mapping):
        return "no content"
    if content.get("error_code"):
        return f"error: {content['error_code']}"
    if "url" in content:
        return f"fetched {content['url']}"
    if "return_code" in content:
        output = content.get("stdout") or content.get("stderr") or ""
        return f"exit code {content['return_code']}: {_short(str(output))}"
    if "tool_references" in content:
        names = [str(r.get("tool_name")) for r in content["tool_references"] if isinstance(r, Mapping)]
        return f"found tools: {', '.join(names) or 'none'}"
    return str(content.get("type", "result"))


def _citations(message: Message) -> list[str]:
    """Anthropic text blocks carry their citations as wire fields; the format writes them back out."""
    if not any(isinstance(p, ProviderPart) and p.format == ANTHROPIC for p in message.parts):
        return []
    content = anthropic.messages_to_wire([message])[0]["content"]
    seen: dict[str, str] = {}
    for block in content if isinstance(content, list) else ():
        for cite in block.get("citations") or ():
            key = str(cite.get("url") or cite.get("document_title") or cite.get("title"))
            seen.setdefault(key, f"{cite.get('title') or key} <{key}>: {_short(str(cite.get('cited_text', '')))}")
    return [f"  [{i}] {text}" for i, text in enumerate(seen.values(), 1)]


def _arguments(value: Any) -> str:
    if not isinstance(value, Mapping):
        return ""
    return ", ".join(f"{k}={v!r}" for k, v in value.items())


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"
