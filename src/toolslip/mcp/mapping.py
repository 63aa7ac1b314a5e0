"""Translating between MCP's vocabulary and toolslip's: annotations <-> effects, content <-> parts.

MCP describes a tool's behaviour with four hints whose *absence* means the dangerous answer
(``readOnlyHint`` false, ``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true), which
matches toolslip's rule that an undeclared tool is assumed to have side effects. The hints cannot say
everything toolslip's effects say, so a toolslip server also puts its exact effects in the tool's
``_meta`` under :data:`META_KEY`; a toolslip client prefers that over the hints.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import mcp_types as mt

from ..agent.tools import ToolOutput
from ..core.effects import Effect, is_read_only, parse_effects
from ..core.messages import Image, ResultPart, Text

__all__ = [
    "META_KEY",
    "annotations_from_effects",
    "content_from_mcp",
    "content_to_mcp",
    "effects_from_mcp_annotations",
    "effects_from_mcp_tool",
]

META_KEY = "dev.toolslip/effects"
"""``_meta`` key of a toolslip server's tool: ``{"effects": [...], "trusted_output": bool}``."""


def effects_from_mcp_annotations(annotations: mt.ToolAnnotations | None) -> tuple[frozenset[Effect], bool]:
    """``(effects, trusted_output)`` from MCP hints, reading every missing hint as the spec's default.

    * ``readOnlyHint`` true -> ``read_only`` (the other hints are meaningless then, per the spec);
    * otherwise ``idempotent`` when ``idempotentHint`` is true, else ``side_effect``; plus
      ``destructive`` unless ``destructiveHint`` is false, and ``egress`` unless ``openWorldHint`` is
      false (a write to an open world sends data out);
    * output is trusted only when ``openWorldHint`` is explicitly false: an open-world tool (web search,
      mail) returns third-party text, and an unknown one might.
    """
    hints = annotations or mt.ToolAnnotations()
    trusted = hints.open_world_hint is False
    if hints.read_only_hint is True:
        return frozenset({Effect.READ_ONLY}), trusted
    effects = {Effect.IDEMPOTENT if hints.idempotent_hint is True else Effect.SIDE_EFFECT}
    if hints.destructive_hint is not False:
        effects.add(Effect.DESTRUCTIVE)
    if hints.open_world_hint is not False:
        effects.add(Effect.EGRESS)
    return frozenset(effects), trusted


def effects_from_mcp_tool(tool: mt.Tool) -> tuple[frozenset[Effect], bool]:
    """Exact effects from a toolslip server's ``_meta`` when present and valid, else from the hints."""
    declared = (tool.meta or {}).get(META_KEY)
    if isinstance(declared, Mapping):
        try:
            return parse_effects(declared.get("effects")), declared.get("trusted_output") is True
        except (ValueError, TypeError):
            pass  # a newer or foreign vocabulary: fall back to the standard hints
    return effects_from_mcp_annotations(tool.annotations)


def annotations_from_effects(effects: frozenset[Effect], trusted_output: bool) -> mt.ToolAnnotations:
    """MCP hints for a toolslip tool; untrusted output counts as open world so clients gate it."""
    open_world = Effect.EGRESS in effects or not trusted_output
    if is_read_only(effects):
        return mt.ToolAnnotations(read_only_hint=True, open_world_hint=open_world)
    return mt.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=Effect.DESTRUCTIVE in effects,
        idempotent_hint=Effect.IDEMPOTENT in effects,
        open_world_hint=open_world,
    )


def content_from_mcp(result: mt.CallToolResult) -> ToolOutput:
    """Tool-result content from MCP content blocks, losing as little as the neutral parts allow.

    Text and images map one to one; an embedded text resource becomes text headed by its URI, an
    embedded image blob an image; audio, other binary blobs and resource links, which no tool-result
    part can carry, become a line of text that says what was there. A result with only
    ``structuredContent`` becomes its JSON.
    """
    parts: list[Text | Image] = [_part(block) for block in result.content]
    if not parts:
        if result.structured_content is None:
            return ""
        return json.dumps(result.structured_content, ensure_ascii=False)
    if len(parts) == 1 and isinstance(parts[0], Text):
        return parts[0].text
    return tuple(parts)


def _part(block: mt.ContentBlock) -> Text | Image:
    if isinstance(block, mt.TextContent):
        return Text(text=block.text)
    if isinstance(block, mt.ImageContent):
        return Image(media_type=block.mime_type, data=block.data)
    if isinstance(block, mt.EmbeddedResource):
        res = block.resource
        if isinstance(res, mt.TextResourceContents):
            return Text(text=f"[resource {res.uri}]\n{res.text}")
        if (res.mime_type or "").startswith("image/"):
            return Image(media_type=res.mime_type or "", data=res.blob)
        return Text(
            text=f"[resource {res.uri} ({res.mime_type or 'binary'}, {len(res.blob) * 3 // 4} bytes) not shown]"
        )
    if isinstance(block, mt.AudioContent):
        return Text(text=f"[audio ({block.mime_type}, {len(block.data) * 3 // 4} bytes) not shown]")
    about = f": {block.description}" if block.description else ""
    return Text(text=f"[resource link {block.name} <{block.uri}>{about}]")


def content_to_mcp(content: str | Sequence[ResultPart]) -> list[mt.ContentBlock]:
    """MCP content blocks for a toolslip tool result (the serving direction)."""
    if isinstance(content, str):
        return [mt.TextContent(text=content)]
    blocks: list[mt.ContentBlock] = []
    for part in content:
        if isinstance(part, Text):
            blocks.append(mt.TextContent(text=part.text))
        elif not isinstance(part, Image):  # files and provider blocks come from wire formats, not from tools
            blocks.append(mt.TextContent(text=f"[{part.kind} part left out]"))
        elif part.data is not None:
            blocks.append(mt.ImageContent(data=part.data, mime_type=part.media_type))
        else:  # an image by URL has no MCP image form; a resource link keeps the address
            blocks.append(mt.ResourceLink(name="image", uri=part.url or "", mime_type=part.media_type))
    return blocks


def tool_meta(effects: frozenset[Effect], trusted_output: bool) -> dict[str, Any]:
    """The ``_meta`` a toolslip server attaches to each tool (see :data:`META_KEY`)."""
    return {META_KEY: {"effects": sorted(e.value for e in effects), "trusted_output": trusted_output}}


def matches(name: str, patterns: Sequence[str] | None) -> bool:
    """True when ``name`` equals or glob-matches one of ``patterns``."""
    from fnmatch import fnmatchcase

    return bool(patterns) and any(fnmatchcase(name, p) for p in patterns or ())
