"""The web console over the run journal, and its HTTP API: watch runs, read one, decide held calls.

``toolslip console`` serves it (:func:`serve`); :func:`make_app` gives the aiohttp application for an
application's own server. Pages in :mod:`~toolslip.console.pages`, the run index in
:mod:`~toolslip.console.index`, the guard in :mod:`~toolslip.console.security`, the UI message stream for
front-ends in :mod:`~toolslip.console.uistream`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web

from .app import make_app
from .security import new_token
from .state import POLL, Console

__all__ = ["POLL", "Console", "make_app", "new_token", "serve"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")


@contextlib.asynccontextmanager
async def serve(console: Console, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve ``console`` on ``host:port`` (0: a free port) while the block runs; yields its base URL."""
    runner = web.AppRunner(make_app(console), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        bound = server.sockets[0].getsockname()[1] if server is not None and server.sockets else port  # type: ignore[attr-defined]
        shown = f"[{host}]" if ":" in host else host
        yield f"http://{shown}:{bound}"
    finally:
        await runner.cleanup()
