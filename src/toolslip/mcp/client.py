"""MCP servers as tool sources: a live :class:`~toolslip.Toolbox` whose tools call the server.

``async with stdio("uvx", "mcp-server-time") as time_tools:`` (see :mod:`toolslip.mcp.transports`)
starts the server, lists its tools once and keeps them; every :class:`~toolslip.Tool` it holds is an
ordinary tool whose function sends ``tools/call``, so the loop, hooks, timeouts and approval treat it
like a local one. The list is fetched again only when the server says it changed
(``notifications/tools/list_changed`` in the handshake era, a ``subscriptions/listen`` event on
2026-07-28 connections).

Leaving the block always stops the server, whether the block ended normally, raised, or was cancelled
by Ctrl-C: the SDK closes stdin, waits, then kills the server's process group, and a small guard process
(:mod:`toolslip.mcp._guard`) kills the server if this process itself is killed.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack
from typing import IO, Any, TypedDict

import anyio
import anyio.abc
import mcp_types as mt
from mcp import Client, MCPError
from mcp.client import Transport
from mcp.client.subscriptions import ListenNotSupportedError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from typing_extensions import Unpack

from ..agent.tools import Tool, Toolbox, ToolLike, ToolOutput
from ..core.errors import ConfigError, McpError, ToolError
from ..core.messages import ToolSpec
from .mapping import content_from_mcp, effects_from_mcp_tool, matches

__all__ = ["Connect", "McpTools", "SourceOptions"]

_BAD_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_STDERR_TAIL = 2000
Connect = Callable[[AsyncExitStack, "McpTools"], Awaitable[Transport]]
"""Opens what the transport needs on the stack (which closes it) and returns the transport."""


class SourceOptions(TypedDict, total=False):
    """Options every MCP server source takes (:func:`~toolslip.mcp.stdio`, :func:`~toolslip.mcp.http`)."""

    prefix: str
    """Prepended to every tool name, to keep two servers' names apart."""
    include: Sequence[str] | None
    """Tool names or globs to keep (all when ``None``), matched against the server's names."""
    exclude: Sequence[str] | None
    """Tool names or globs to drop."""
    timeout: float | None
    """Seconds a call may take before it is cancelled (the server is told); 60 by default."""
    connect_timeout: float
    """Seconds to start, connect and list the tools; 30 by default."""
    protocol: str
    """``"auto"`` (2026-07-28 when the server speaks it, else the handshake era) or ``"legacy"``."""


class McpTools(Toolbox):
    """The tools of one MCP server, usable wherever a :class:`~toolslip.Toolbox` is.

    Build it with :func:`stdio` or :func:`http` and enter it with ``async with``; the tools exist only
    while it is entered. Pass it as ``tools=`` to see list changes live, or combine it with local tools
    in a ``Toolbox([server, my_tool])`` (a snapshot of the current list).
    """

    def __init__(self, label: str, connect: Connect, **options: Unpack[SourceOptions]) -> None:
        super().__init__()
        self.label = label
        """The command line or URL, used in every error message."""
        self.prefix = options.get("prefix", "")
        self.include, self.exclude = options.get("include"), options.get("exclude")
        self.timeout = options.get("timeout", 60.0)
        self.connect_timeout = options.get("connect_timeout", 30.0)
        self.protocol = options.get("protocol", "auto")
        self.remote_names: dict[str, str] = {}
        """Our tool name -> the server's tool name (they differ by the prefix and unsafe characters)."""
        self.list_count = 0
        """How many times the tool list was fetched (once, plus once per change notification)."""
        self._connect = connect
        self._stderr: IO[bytes] | None = None
        """A temporary file the server's stderr goes to (stdio servers), kept until the block ends."""
        self._client: Client | None = None
        self._owner: asyncio.Task[None] | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._closing = asyncio.Event()
        self._stale = self._refreshing = False

    # --- the tool source ----------------------------------------------------------------------

    async def __aenter__(self) -> McpTools:
        if self._owner is not None:
            raise McpError(f"MCP server {self.label!r} is already connected; enter it once")
        # The connection lives in a task of its own, so the SDK's cancel scopes are entered and left in
        # one task whatever the caller does, and stopping can be shielded from the caller's cancellation.
        self._closing = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._owner = asyncio.create_task(self._serve(ready), name=f"MCP server {self.label}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.connect_timeout)
        except BaseException as exc:
            self._owner.cancel()
            try:
                await self._stop()
                if isinstance(exc, TimeoutError):
                    raise McpError(self._describe(f"did not answer within {self.connect_timeout:g} s")) from None
                if isinstance(exc, Exception) and not isinstance(exc, McpError):
                    raise McpError(self._describe(f"could not connect: {_reason(exc)}")) from None
                raise
            finally:
                self._close_stderr()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        try:
            await self._stop()
        finally:
            self._close_stderr()

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        try:
            async with AsyncExitStack() as stack:
                transport = await self._connect(stack, self)
                client = Client(transport, message_handler=self._on_message, mode=self.protocol)
                self._client = await stack.enter_async_context(client)
                async with anyio.create_task_group() as self._tasks:
                    await self._load()
                    caps = self._client.server_capabilities.tools
                    if self._modern and caps is not None and caps.list_changed:
                        await self._tasks.start(self._listen)
                    ready.set_result(None)
                    await self._closing.wait()
                    self._tasks.cancel_scope.cancel()
        except BaseException as exc:
            if ready.done():
                raise
            ready.set_exception(exc)
        finally:
            self._client, self._tasks, self._tools = None, None, {}

    async def _stop(self) -> None:
        """Stop the server and wait until it is gone, even if the caller is cancelled meanwhile."""
        owner, self._owner = self._owner, None
        self._closing.set()
        cancelled = False
        while owner is not None and not owner.done():
            try:
                await asyncio.shield(owner)
            except asyncio.CancelledError:
                cancelled = cancelled or not owner.done()
            except Exception:  # the server died; its calls already said so
                pass
        if cancelled:
            raise asyncio.CancelledError

    @property
    def stderr(self) -> str:
        """The last lines the server wrote to stderr (stdio servers only)."""
        if self._stderr is None:
            return ""
        fd = self._stderr.fileno()
        size = os.fstat(fd).st_size
        # pread leaves the file offset alone: the server shares it and appends there.
        return os.pread(fd, _STDERR_TAIL, max(0, size - _STDERR_TAIL)).decode("utf-8", "replace").strip()

    def add(self, item: ToolLike | Toolbox) -> None:
        raise ConfigError(
            f"MCP server {self.label!r}: its tool list belongs to the server; "
            "combine it with local tools in a new Toolbox([server, tool, ...])"
        )

    def __iter__(self) -> Iterator[Tool]:
        self._require_connected()
        return super().__iter__()

    def specs(self) -> tuple[ToolSpec, ...]:
        self._require_connected()  # an agent must not run on silently empty tools after the block ended
        return super().specs()

    # --- listing ------------------------------------------------------------------------------

    @property
    def _modern(self) -> bool:
        return self._client is not None and self._client.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def _load(self) -> None:
        client = self._require_connected()
        listed: list[mt.Tool] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            listed += page.tools
            if (cursor := page.next_cursor) is None:
                break
        self.list_count += 1
        wanted = [t for t in listed if self._wanted(t.name)]
        tools = [self._make_tool(t) for t in wanted]
        self.remote_names = {t.name: r.name for t, r in zip(tools, wanted, strict=True)}
        self._tools = {t.name: t for t in tools}  # one assignment: a run in progress sees old or new

    def _wanted(self, name: str) -> bool:
        return (self.include is None or matches(name, self.include)) and not matches(name, self.exclude)

    def _make_tool(self, remote: mt.Tool) -> Tool:
        effects, trusted = effects_from_mcp_tool(remote)
        name = _BAD_NAME_CHARS.sub("_", self.prefix + remote.name)[:64]

        async def call(**arguments: Any) -> ToolOutput:
            return await self._call(remote.name, arguments)

        return Tool.from_schema(
            name,
            remote.description or remote.title or "",
            remote.input_schema,
            call,
            effects=effects,
            trusted_output=trusted,
            timeout=self.timeout,
        )

    async def _on_message(self, message: mt.ServerNotification | Exception) -> None:
        # Handshake-era servers announce changes spontaneously; 2026-07-28 ones only on a listen stream.
        if isinstance(message, mt.ToolListChangedNotification) and not self._modern:
            self._refresh_soon()

    async def _listen(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        client = self._require_connected()
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                task_status.started()
                async for _event in subscription:
                    self._refresh_soon()
        except (MCPError, ListenNotSupportedError, RuntimeError):
            task_status.started()  # no change events from this server: the first list stays

    def _refresh_soon(self) -> None:
        self._stale = True
        if not self._refreshing and self._tasks is not None:
            self._refreshing = True
            self._tasks.start_soon(self._refresh)

    async def _refresh(self) -> None:
        try:
            while self._stale:  # changes announced during a fetch get one more fetch, not one each
                self._stale = False
                await self._load()
        except (MCPError, McpError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass  # the server is going away; calls will say so
        finally:
            self._refreshing = False

    # --- calling ------------------------------------------------------------------------------

    async def _call(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        client = self._require_connected()
        try:
            result = await client.call_tool(name, arguments)
        except (MCPError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise McpError(self._describe(f"tool {name!r}: {_reason(exc)}")) from None
        content = content_from_mcp(result)
        if result.is_error:
            raise ToolError(content)
        return content

    def _require_connected(self) -> Client:
        if self._client is None:
            raise McpError(
                f"MCP server {self.label!r} is not connected; use it inside "
                "`async with toolslip.mcp.stdio(...) as tools:` (or http(...))"
            )
        return self._client

    def _describe(self, problem: str) -> str:
        tail = self.stderr
        said = f"; its stderr ends: {tail[-500:]!r}" if tail else ""
        return f"MCP server {self.label!r}: {problem}{said}"


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__
