"""Ask the provider for one call per turn whenever a side-effecting tool is on offer.

The loop already runs side-effecting calls one at a time in the order the model wrote them. Some users
also want the model itself not to batch them: a transfer decided in the same breath as the balance check
that should have informed it. This hook sets ``Settings.parallel_tool_calls = False`` (sent as
``parallel_tool_calls: false`` to OpenAI and ``disable_parallel_tool_use: true`` to Anthropic) on steps
where a side-effecting tool is offered. It costs turns: a model that would batch three reads now needs
three steps, so it is an option, not the default.
"""

from __future__ import annotations

from dataclasses import replace

from ..agent.hooks import Hook, RunContext
from ..core.messages import Request

__all__ = ["SerialSideEffects"]


class SerialSideEffects(Hook):
    """Turns off parallel tool calls at the provider on steps that offer a side-effecting tool."""

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        if request.settings.parallel_tool_calls is not None:  # the caller chose explicitly
            return request
        offered = (ctx.tools.get(spec.name) for spec in request.tools)
        if any(tool is None or tool.side_effecting for tool in offered):
            return replace(request, settings=replace(request.settings, parallel_tool_calls=False))
        return request
