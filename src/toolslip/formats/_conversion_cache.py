"""Prompt-cache marks on tool declarations, as the target format of ``toolslip.convert`` says them.

Anthropic marks the end of what to cache with ``cache_control`` on a tool (the system prompt and the tools
up to that one are cached); Converse says the same with a ``{"cachePoint": {"type": "default"}}`` entry
right after the tool in ``toolConfig.tools`` (``CachePointBlock``: ``type`` ``default``, an optional ``ttl``
of ``5m`` or ``1h``, as Anthropic's ``ttl``). Each is written as the other. The other targets cache prompts
by themselves and have no field for a mark: it is left out there, reported (the answer is the same without
it). Marks inside messages are converted with their message (``_conversion_parts``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.messages import ServerTool, ToolSpec
from ._conversion_plan import Plan
from ._wire import unstash

__all__ = ["tool_cache_marks"]

_HINT = "(a prompt-cache hint; the answer is the same without it)"
_TTLS = frozenset({"5m", "1h"})
"""The lifetimes both services take (Converse's ``CachePointBlock.ttl``, Anthropic's ``cache_control.ttl``)."""

Tools = tuple[ToolSpec, ...]
ExtraTools = tuple[Mapping[str, Any], ...]


def tool_cache_marks(
    plan: Plan, tools: Tools, extra_tools: ExtraTools, server_tools: Sequence[ServerTool]
) -> tuple[Tools, ExtraTools]:
    """``tools`` and ``extra_tools`` with each tool's cache mark in the target's spelling, or reported."""
    if plan.same:
        return tools, extra_tools
    if plan.source == "bedrock":
        return _from_cache_points(plan, tools, extra_tools)
    marks = {i: mark for i, spec in enumerate(tools) if (mark := _mark(spec, plan.source)) is not None}
    if not marks:
        return tools, extra_tools
    if plan.target == "bedrock" and not extra_tools and not server_tools:
        return _to_cache_points(tools, marks)
    for i in marks:
        plan.note(f"tools[{i}].cache_control", f"a cache mark on the tool {_HINT}", "left out")
    return tools, extra_tools


def _mark(spec: ToolSpec, source: str) -> Mapping[str, Any] | None:
    """The tool's ``cache_control`` as the source wrote it (Anthropic's, or Chat's through a proxy)."""
    mark = unstash(spec.extra, source).get("fields", {}).get("cache_control")
    return mark if isinstance(mark, Mapping) and mark.get("type") == "ephemeral" else None


def _to_cache_points(tools: Tools, marks: Mapping[int, Mapping[str, Any]]) -> tuple[Tools, ExtraTools]:
    """A ``cachePoint`` entry after each marked tool; every tool keeps its place (``at``) around them."""
    specs, points, at = [], [], 0
    for i, spec in enumerate(tools):
        kept = unstash(spec.extra, "bedrock")
        specs.append(replace(spec, extra={**spec.extra, "bedrock": {**kept, "at": at}}))
        at += 1
        if i in marks:
            ttl = marks[i].get("ttl")
            points.append({"cachePoint": {"type": "default", **({"ttl": ttl} if ttl in _TTLS else {})}})
            at += 1
    return tuple(specs), tuple(points)


def _from_cache_points(plan: Plan, tools: Tools, extra_tools: ExtraTools) -> tuple[Tools, ExtraTools]:
    """For Anthropic: each ``cachePoint`` right after a tool as that tool's ``cache_control``. A point
    after anything else (or for another target) stays, for the caller to report and leave out."""
    if plan.target != "anthropic" or not any("cachePoint" in tool for tool in extra_tools):
        return tools, extra_tools
    order = _order(tools, extra_tools)
    specs, rest = list(tools), []
    for position, entry in enumerate(order):
        point = entry[1].get("cachePoint") if entry[0] == "other" else None
        before = order[position - 1] if position else None
        if not isinstance(point, Mapping) or before is None or before[0] != "spec":
            if entry[0] == "other":
                rest.append(entry[1])
            continue
        mark = {"type": "ephemeral", **({"ttl": point["ttl"]} if point.get("ttl") in _TTLS else {})}
        spec = specs[before[2]]
        kept = unstash(spec.extra, "anthropic")
        fields = {**kept.get("fields", {}), "cache_control": mark}
        specs[before[2]] = replace(spec, extra={**spec.extra, "anthropic": {**kept, "fields": fields}})
    return tuple(specs), tuple(rest)


def _order(tools: Tools, extra_tools: ExtraTools) -> list[tuple[str, Mapping[str, Any], int]]:
    """The Converse tool list as it was read: ``("spec", {}, index)`` and ``("other", entry, index)``,
    the specs at the places they were read from (``at``), the other entries filling the gaps in order."""
    places = [unstash(spec.extra, "bedrock").get("at") for spec in tools]
    n = len(tools) + len(extra_tools)
    if not all(type(p) is int and 0 <= p < n for p in places) or len(set(places)) < len(places):
        places = list(range(len(tools)))  # read with the specs first
    slots = {p: i for i, p in enumerate(places)}
    others = iter(enumerate(extra_tools))
    order: list[tuple[str, Mapping[str, Any], int]] = []
    for position in range(n):
        if position in slots:
            order.append(("spec", {}, slots[position]))
        else:
            j, entry = next(others)
            order.append(("other", entry, j))
    return order
