"""How to reach an MCP server: a subprocess over stdio, a URL over streamable HTTP, or a CLI string.

Each returns an unconnected :class:`~toolslip.mcp.client.McpTools`; ``async with`` connects it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TextIO, cast

from mcp import StdioServerParameters
from mcp.client import Transport
from mcp.client.stdio import get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from typing_extensions import Unpack

from ..agent.tools import Tool
from ..core.errors import ConfigError
from .client import McpTools, SourceOptions

__all__ = ["from_spec", "http", "list_tools", "stdio"]

_GUARD = str(Path(__file__).with_name("_guard.py"))


def stdio(
    command: str,
    *args: str,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    **options: Unpack[SourceOptions],
) -> McpTools:
    """An MCP server started as a subprocess speaking stdio: ``stdio("uvx", "mcp-server-time")``.

    ``env`` adds environment variables: the server otherwise gets only a safe minimum (HOME, PATH, ...),
    never your API keys. ``options``: ``prefix``, ``include``, ``exclude``, ``timeout``,
    ``connect_timeout``, ``protocol`` (see :class:`~toolslip.mcp.client.SourceOptions`).
    """
    path = (env or {}).get("PATH", get_default_environment().get("PATH"))
    found = shutil.which(command, path=path)
    if found is None:
        raise ConfigError(f"MCP server command {command!r} was not found on PATH; give its full path")
    guarded = os.name == "posix"
    params = StdioServerParameters(
        command=sys.executable if guarded else found,
        args=["-I", "-S", _GUARD, str(os.getpid()), found, *args] if guarded else list(args),
        env=dict(env or {}),
        cwd=cwd,
    )

    async def connect(stack: AsyncExitStack, source: McpTools) -> Transport:
        source._stderr = tempfile.TemporaryFile()
        # The SDK types errlog as TextIO but only hands its file descriptor to the subprocess.
        return stdio_client(params, errlog=cast(TextIO, source._stderr))

    return McpTools(" ".join([command, *args]), connect, **options)


def http(url: str, *, headers: Mapping[str, str] | None = None, **options: Unpack[SourceOptions]) -> McpTools:
    """A remote MCP server over streamable HTTP: ``http("https://example.com/mcp", headers={...})``.

    ``headers`` go with every request (e.g. ``Authorization``); ``options`` are as for :func:`stdio`.
    """
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"MCP server URL {url!r} must start with http:// or https://")

    async def connect(stack: AsyncExitStack, source: McpTools) -> Transport:
        import httpx2

        # The SDK's own defaults: 30 s to connect or write, 300 s to read a held-open event stream.
        http_client = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(headers or {}), timeout=httpx2.Timeout(30.0, read=300.0))
        )
        return streamable_http_client(url, http_client=http_client)

    return McpTools(url, connect, **options)


def from_spec(spec: str, **options: Unpack[SourceOptions]) -> McpTools:
    """A server from one string, as the command line takes it: an ``http(s)://`` URL or a command line.

    ``from_spec("uvx mcp-server-time --local-timezone UTC")`` is ``stdio("uvx", "mcp-server-time", ...)``
    (split like a POSIX shell would).
    """
    if spec.startswith(("http://", "https://")):
        return http(spec, **options)
    try:
        argv = shlex.split(spec)
    except ValueError as exc:
        raise ConfigError(f"MCP server command {spec!r} cannot be split into words: {exc}") from None
    if not argv:
        raise ConfigError("MCP server command is empty; give a command line or an http(s):// URL")
    return stdio(argv[0], *argv[1:], **options)


async def list_tools(spec: str, **options: Unpack[SourceOptions]) -> list[Tool]:
    """Connect, list the server's tools and disconnect: names, schemas and effects, for lint or a listing.

    Their functions cannot be called afterwards: the server is gone.
    """
    async with from_spec(spec, **options) as source:
        return list(source)
