"""Tool sets that change from step to step and compose: ``prepare`` per tool, prefixed and filtered views.

A tool's ``prepare(ctx, tool)`` (``@tool(prepare=...)``) is asked before each step and returns the tool to
offer (itself, or a changed copy: a narrower schema, another description) or ``None`` to hide it for this
step: a tool offered only after a login, only to admins (``ctx.deps``), only until it has been used.
``Agent(prepare_tools=fn)`` does the same for the whole set at once (``fn(ctx, tools) -> tools``). The
:class:`PreparedTools` hook that does this is added by the agent when any tool has ``prepare``; a run
without one never pays for it.

What the model was offered is what is enforced: a call of a tool hidden at this step is answered with an
error result and never runs, and a changed tool's schema is the one the call's arguments must fit (the
tool's own validation then runs as usual, and approval, dedup and the gate still see the call). The
offered names are kept in ``ctx.state[OFFERED]``, which the run journal records with the step and which
replay checks on resume (:mod:`toolslip.durable.replay`): a resumed run whose tools would now be offered
differently stops with one sentence instead of replaying calls of tools the application now hides.

Tool sets compose as live views of a :class:`~toolslip.Toolbox`, an MCP server's tools included (they are
read again whenever the source changes): :func:`prefixed` (``gh_`` before every name), :func:`filtered` (a
predicate over tools); approval for a whole set is ``Approval(toolsets=[box])``.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeAlias

from ..core.errors import ArgumentError, ConfigError
from ..core.messages import Request, ToolCall, ToolResult
from .history import HistoryProcessor, HistoryProcessors
from .hooks import Hook, RunContext, ToolAnswer
from .tools import Tool, Toolbox

__all__ = ["OFFERED", "PrepareTools", "PreparedTools", "ToolsetView", "filtered", "prefixed", "with_sending_hooks"]

OFFERED = "offered_tools"
"""Key of ``ctx.state``: ``(names offered this step, {name: the prepared tool when it was changed})``."""

PrepareTools: TypeAlias = Callable[[RunContext, list[Tool]], list[Tool] | Awaitable[list[Tool]]]
"""``Agent(prepare_tools=fn)``: the tools to offer this step, from those offered so far."""


class PreparedTools(Hook):
    """Asks each tool's ``prepare`` (and the agent's ``prepare_tools``) before every step; holds calls to
    what was offered."""

    def __init__(self, prepare_tools: PrepareTools | None = None) -> None:
        self.prepare_tools = prepare_tools

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        offered: list[Tool] = []
        changed: dict[str, Tool] = {}
        others = []  # declarations of no tool of the run (the final-answer tool): always offered
        for spec in request.tools:
            tool = ctx.tools.get(spec.name)
            if tool is None:
                others.append(spec)
                continue
            got = await _maybe(tool.prepare(ctx, tool)) if tool.prepare is not None else tool
            if got is None:
                continue
            if got.name != tool.name:
                raise ConfigError(f"prepare of tool {tool.name!r} renamed it to {got.name!r}; a step may not rename")
            if got is not tool:
                changed[got.name] = got
            offered.append(got)
        if self.prepare_tools is not None:
            offered = list(await _maybe(self.prepare_tools(ctx, offered)))
        names = {t.name for t in offered}
        ctx.state[OFFERED] = (names, {n: t for n, t in changed.items() if n in names})
        return dataclasses.replace(request, tools=(*(t.spec for t in offered), *others))

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or OFFERED not in ctx.state:
            return None
        names, changed = ctx.state[OFFERED]
        if call.name not in names:
            return _refused(call, f"tool {call.name!r} is not available at this step; use one of the tools offered")
        prepared = changed.get(call.name)
        if prepared is not None and call.arguments is not None:
            try:
                prepared.validate(call.arguments)
            except ArgumentError as exc:
                return _refused(call, f"invalid arguments for {call.name}: {exc}")
        return None


def with_sending_hooks(
    hooks: Sequence[Hook],
    processors: Sequence[HistoryProcessor],
    prepare_tools: PrepareTools | None,
    tools: Toolbox,
) -> tuple[Hook, ...]:
    """``hooks`` with the hooks that decide what a request sends put first (so the journal, the gate and the
    budgets see what is really sent): the history processors, then the tools' preparation. An agent copied
    with ``dataclasses.replace`` (a resumed pause) already has them and does not get them twice."""
    present = {type(hook) for hook in hooks}
    out = tuple(hooks)
    if processors and HistoryProcessors not in present:
        out = (HistoryProcessors(processors), *out)
    if (prepare_tools is not None or any(t.prepare is not None for t in tools)) and PreparedTools not in present:
        out = (PreparedTools(prepare_tools), *out)
    return out


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _refused(call: ToolCall, text: str) -> ToolAnswer:
    result = ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, outcome="refused")
    return ToolAnswer(result=result, note="not offered")


# --- views ------------------------------------------------------------------------------------------------


class ToolsetView(Toolbox):
    """A read-only Toolbox computed from another one, again whenever the source changes (an MCP server
    that lists new tools)."""

    def __init__(self, source: Toolbox, derive: Callable[[Iterable[Tool]], Iterable[Tool]]) -> None:
        self._source, self._derive = source, derive
        self._index = None
        self._seen: tuple[object, int] = (None, -1)
        self._view: dict[str, Tool] = {}

    @property
    def _tools(self) -> dict[str, Tool]:
        source = self._source._tools
        if self._seen[0] is not source or self._seen[1] != len(source):
            view: dict[str, Tool] = {}
            for tool in self._derive(source.values()):
                if tool.name in view:
                    raise ConfigError(f"two tools of this tool set are named {tool.name!r}")
                view[tool.name] = tool
            self._view, self._seen = view, (source, len(source))
        return self._view

    @_tools.setter
    def _tools(self, value: dict[str, Tool]) -> None:
        raise ConfigError("a tool set view is read-only: add tools to its source, or combine it in a new Toolbox")

    def add(self, item: object) -> None:
        raise ConfigError("a tool set view is read-only: add tools to its source, or combine it in a new Toolbox")


def prefixed(tools: Toolbox, prefix: str) -> ToolsetView:
    """``tools`` with ``prefix`` before every name (two servers' ``search`` become ``gh_search`` and
    ``jira_search``); the functions are the same."""
    renamed: dict[int, tuple[Tool, Tool]] = {}

    def rename(source: Iterable[Tool]) -> list[Tool]:
        out = []
        for tool in source:
            known = renamed.get(id(tool))
            if known is None or known[0] is not tool:
                known = renamed[id(tool)] = (tool, dataclasses.replace(tool, name=prefix + tool.name))
            out.append(known[1])
        return out

    return ToolsetView(tools, rename)


def filtered(tools: Toolbox, keep: Callable[[Tool], bool]) -> ToolsetView:
    """The tools of ``tools`` for which ``keep(tool)`` is true (``lambda t: t.read_only``)."""
    return ToolsetView(tools, lambda source: [t for t in source if keep(t)])
