"""toolslip tools served as an MCP server, over stdio or streamable HTTP.

Every call goes through :func:`toolslip.agent.calls.execute_call`, the loop's own runner, so an MCP client gets
exactly what a model would: arguments validated and coerced, failures and timeouts as ``isError``
results that say what to fix. Effects become MCP annotations, and the exact effects ride along in
``_meta`` for toolslip clients (see :mod:`toolslip.mcp.mapping`).
"""

from __future__ import annotations

import itertools
import os
import socket
from collections.abc import Callable
from typing import Any, BinaryIO, cast

import anyio
import mcp_types as mt
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.server.stdio import stdio_server

from ..agent.calls import execute_call
from ..agent.execution import run_in_thread
from ..agent.tools import Toolbox
from ..core.messages import ToolCall
from ..core.version import __version__
from .mapping import annotations_from_effects, content_to_mcp, tool_meta

__all__ = ["build_server", "serve_http", "serve_stdio"]

_call_ids = itertools.count(1)


def build_server(tools: Toolbox, name: str = "toolslip") -> Server[Any]:
    """An SDK low-level server whose ``tools/list`` and ``tools/call`` are answered by ``tools``."""
    listing = mt.ListToolsResult(
        tools=[
            mt.Tool(
                name=t.name,
                description=t.description,
                input_schema=dict(t.parameters),
                annotations=annotations_from_effects(t.effects, t.trusted_output),
                _meta=tool_meta(t.effects, t.trusted_output),
            )
            for t in tools
        ]
    )

    async def list_tools(
        ctx: ServerRequestContext[Any], params: mt.PaginatedRequestParams | None
    ) -> mt.ListToolsResult:
        return listing

    async def call_tool(ctx: ServerRequestContext[Any], params: mt.CallToolRequestParams) -> mt.CallToolResult:
        call = ToolCall(id=f"mcp_{next(_call_ids)}", name=params.name, arguments=params.arguments or {})
        result = await execute_call(call, tools.get(params.name), tools)
        return mt.CallToolResult(content=content_to_mcp(result.content), is_error=result.is_error)

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(tools: Toolbox, name: str = "toolslip") -> None:
    """Serve on stdin/stdout until the client closes stdin (or Ctrl-C, which needs no second press)."""
    server = build_server(tools, name)
    wire = os.dup(0)  # never closed: an abandoned read may still be blocked on it
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # tools (and programs they start) read no protocol from fd 0
    os.close(null)
    lines = cast("anyio.AsyncFile[str]", _Lines(os.fdopen(wire, "rb", closefd=False)))  # only iterated over
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        os.dup2(wire, 0)


class _Lines:
    """The client's lines, each read in a thread nobody waits for.

    The SDK reads stdin in an anyio worker thread that a cancellation must wait for, so Ctrl-C did not
    stop the server until the client sent another line. Only ``async for`` is asked of it.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await run_in_thread(self._stream.readline)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


async def serve_http(
    tools: Toolbox,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    name: str = "toolslip",
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve streamable HTTP at ``http://HOST:PORT/mcp`` until cancelled; ``port=0`` picks a free port.

    ``on_ready`` gets the URL once the socket is bound, before the first request can arrive.
    """
    import uvicorn

    app = build_server(tools, name).streamable_http_app(host=host)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)  # connections made right after on_ready wait in the backlog for uvicorn
    bound = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    if on_ready is not None:
        on_ready(f"http://{host}:{bound}/mcp")
    await server.serve(sockets=[sock])
