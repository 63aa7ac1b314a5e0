"""What running a tool does to the world: one declaration that drives every policy.

Concurrency, approval, dedup, retry-on-resume and the injection gate all read the same set of effects
instead of each having its own knob:

* ``read_only``   observes only; safe to run concurrently, repeat and retry.
* ``idempotent``  changes the world, but running it twice equals running it once.
* ``side_effect`` changes the world (pays, books, writes).
* ``egress``      sends data out (mail, HTTP, posting a comment): a path for exfiltration.
* ``destructive`` cannot be undone (delete, drop, transfer).

A tool that declares nothing is treated as ``side_effect``: an unknown tool is assumed to be dangerous.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any

__all__ = [
    "CONSERVATIVE",
    "Effect",
    "EffectsLike",
    "effects_from_mcp_annotations",
    "is_read_only",
    "is_side_effecting",
    "parse_effects",
]


class Effect(StrEnum):
    READ_ONLY = "read_only"
    IDEMPOTENT = "idempotent"
    SIDE_EFFECT = "side_effect"
    EGRESS = "egress"
    DESTRUCTIVE = "destructive"


EffectsLike = Effect | str | Iterable[Effect | str] | None

CONSERVATIVE: frozenset[Effect] = frozenset({Effect.SIDE_EFFECT})


def parse_effects(value: EffectsLike) -> frozenset[Effect]:
    """Normalise a declaration (``"read_only"``, ``["egress", "idempotent"]``, ``None``) to a set.

    Raises ``ValueError`` naming the unknown word and the allowed ones.
    """
    if value is None:
        return CONSERVATIVE
    items = [value] if isinstance(value, str) else list(value)
    out: set[Effect] = set()
    for item in items:
        try:
            out.add(Effect(item))
        except ValueError:
            allowed = ", ".join(e.value for e in Effect)
            raise ValueError(f"unknown effect {item!r}; use one of: {allowed}") from None
    if Effect.READ_ONLY in out and len(out) > 1:
        raise ValueError(f"a read_only tool cannot also be {sorted(e.value for e in out - {Effect.READ_ONLY})}")
    return frozenset(out) or CONSERVATIVE


def is_read_only(effects: frozenset[Effect]) -> bool:
    return effects == {Effect.READ_ONLY}


def is_side_effecting(effects: frozenset[Effect]) -> bool:
    """True when running the tool twice could differ from running it once."""
    return bool(effects & {Effect.SIDE_EFFECT, Effect.EGRESS, Effect.DESTRUCTIVE}) and Effect.IDEMPOTENT not in effects


def effects_from_mcp_annotations(annotations: Mapping[str, Any] | None) -> frozenset[Effect]:
    """Map MCP tool annotations to effects, using MCP's own defaults for missing hints.

    MCP defaults are pessimistic like ours: a tool is not read-only, is destructive, is not idempotent
    and talks to an open world unless it says otherwise. ``openWorldHint`` becomes ``egress`` because a
    tool that reaches outside can carry data out. Hints are untrusted claims of the server; a caller who
    does not trust the server should override them.
    """
    hints = annotations or {}
    if hints.get("readOnlyHint") is True:
        return frozenset({Effect.READ_ONLY})
    out = {Effect.SIDE_EFFECT}
    if hints.get("destructiveHint", True) is not False:
        out.add(Effect.DESTRUCTIVE)
    if hints.get("idempotentHint") is True:
        out.add(Effect.IDEMPOTENT)
    if hints.get("openWorldHint", True) is not False:
        out.add(Effect.EGRESS)
    return frozenset(out)
