"""Checking every request before it is sent, as a hook: :class:`CheckHook`.

The check itself (:func:`toolslip.formats.checker.check_request`) knows wire formats, not runs; the hook
is the loop's side of it, so it lives here, above the formats it checks against.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.messages import Request
from ..formats.checker import DEBUG_FORMATS, check_request
from .hooks import Hook, RunContext

__all__ = ["CheckHook"]


class CheckHook(Hook):
    """Checks every request the loop is about to send, as each of ``formats`` would carry it.

    ``Agent(debug=True)`` does the same. A problem raises :class:`~toolslip.core.errors.FormatError` before the
    model is called, so a broken history fails at its cause instead of as an HTTP 400 later.
    """

    def __init__(self, formats: Sequence[str] = DEBUG_FORMATS) -> None:
        self.formats = tuple(formats)

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        check_request(request, self.formats, f"step {ctx.step}, ")
        return request
