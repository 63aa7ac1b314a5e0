"""A third-party-style MCP server (the SDK's MCPServer) for toolslip's client tests.

It answers with every kind of content, declares annotations or none, and grows a tool at run time so
that the client's list-changed handling can be seen. Run: python fixture_server.py
"""

import base64

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp_types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake").decode()
server = MCPServer("fixture")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True))
def everything() -> CallToolResult:
    """Return one block of each MCP content kind."""
    return CallToolResult(
        content=[
            TextContent(text="plain text"),
            ImageContent(data=PNG, mime_type="image/png"),
            EmbeddedResource(resource=TextResourceContents(uri="file:///notes.txt", text="the notes")),
            EmbeddedResource(resource=BlobResourceContents(uri="file:///logo.png", blob=PNG, mime_type="image/png")),
            EmbeddedResource(
                resource=BlobResourceContents(uri="file:///a.bin", blob="AAAA", mime_type="application/zip")
            ),
            AudioContent(data="AAAA", mime_type="audio/wav"),
            ResourceLink(name="report", uri="https://example.invalid/report.pdf", description="the full report"),
        ]
    )


@server.tool()
def delete_everything(confirm: bool) -> str:
    """No annotations at all: a client must assume the worst."""
    return "nothing was deleted; this is a test server"


@server.tool(
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
)
def set_flag(value: bool) -> CallToolResult:
    """An idempotent, closed-world write that fails when asked to."""
    if not value:
        return CallToolResult(content=[TextContent(text="refused: the flag can only be set")], is_error=True)
    return CallToolResult(content=[], structured_content={"flag": True})


@server.tool()
async def unlock(ctx: Context) -> str:
    """Add the tool `secret` and announce that the tool list changed."""
    server.add_tool(secret)
    await ctx.notify_tools_changed()  # 2026-07-28: delivered on subscriptions/listen streams
    if ctx.request_context.protocol_version != "2026-07-28":
        await ctx.request_context.session.send_tool_list_changed()  # handshake era: a plain notification
    return "unlocked"


def secret() -> str:
    """A tool that exists only after unlock."""
    return "42"


if __name__ == "__main__":
    server.run()
