"""Asking a human (or a policy standing in for one) before a tool call runs.

A minimal definition of the interface fixed in the brief, written on the ``injection`` branch so the
injection gate can ask through it; the effects branch owns this module and its version wins on merge.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = ["ApprovalRequest", "Approver", "Decision"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """One call waiting for a yes or no."""

    tool: str
    arguments: Mapping[str, Any]
    call_id: str
    run_id: str
    reason: str
    """Why the call needs approval, in a sentence a human can judge."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    approved: bool
    note: str = ""
    """Shown to the model when the call is refused."""


Approver: TypeAlias = Callable[[ApprovalRequest], bool | Decision | Awaitable[bool | Decision]]
