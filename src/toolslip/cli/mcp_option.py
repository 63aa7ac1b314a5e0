"""The ``--mcp CMD`` option any command can take: tools from MCP servers next to (or instead of) a file.

``run`` wires it as::

    add_mcp_option(parser)
    ...
    async with mcp_sources(args) as servers:
        agent = Agent(model, tools=Toolbox([file_tools, *servers]))
        await agent.arun(question)

The servers are started when the block is entered and always stopped when it is left.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..mcp import McpTools

__all__ = ["add_mcp_option", "mcp_sources"]


def add_mcp_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="CMD",
        help='an MCP server to take tools from: a command line ("uvx mcp-server-time") or an http(s):// URL; '
        "repeat for several servers",
    )


@asynccontextmanager
async def mcp_sources(args: argparse.Namespace) -> AsyncIterator[list[McpTools]]:
    """Connect to every ``--mcp`` server (listing each one's tools once); stop them all on exit."""
    from ..mcp import from_spec

    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(from_spec(spec)) for spec in args.mcp]
