"""``toolslip mcp-serve TOOLS.py``: expose a file of @tool functions as an MCP server."""

from __future__ import annotations

import argparse

from ..core._display import plural
from . import EXIT_OK, UsageError
from .argtypes import port
from .files import load_tools_file

__all__ = ["register"]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "mcp-serve",
        help="serve a file of @tool functions as an MCP server (stdio, or streamable HTTP with --http)",
    )
    p.add_argument("tools", help="a Python file whose @tool functions to serve")
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at http://HOST:PORT/mcp")
    p.add_argument("--host", default=None, help="address to bind with --http (default 127.0.0.1)")
    p.add_argument("--port", type=port, default=None, help="port with --http; 0 picks a free one (default 8000)")
    p.add_argument("--name", default="toolslip", help="the server name clients see")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    import anyio

    from ..core.errors import ConfigError
    from ..mcp.server import serve_http, serve_stdio

    if not args.http and (args.host is not None or args.port is not None):
        raise UsageError("--host and --port only apply to --http; add --http, or drop them to serve on stdio")
    tools = load_tools_file(args.tools)
    if not args.http:
        anyio.run(serve_stdio, tools, args.name)
        return EXIT_OK

    def ready(url: str) -> None:
        # stdout is free with --http; a script starting us reads the URL from this first line.
        print(f"serving {plural(len(tools), 'tool')} at {url}", flush=True)

    host = "127.0.0.1" if args.host is None else args.host
    port_ = 8000 if args.port is None else args.port
    try:
        anyio.run(lambda: serve_http(tools, host=host, port=port_, name=args.name, on_ready=ready))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port_}: {exc.strerror or exc}") from None
    return EXIT_OK
