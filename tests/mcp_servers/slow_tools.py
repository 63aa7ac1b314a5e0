"""A toolslip tools file for the MCP tests: a slow call that reports its cancellation, and a crash."""

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from toolslip import Image, ToolError, tool

MARKS = Path(os.environ.get("TOOLSLIP_TEST_MARKS", os.devnull))


def _mark(text: str) -> None:
    with MARKS.open("a") as f:
        f.write(text + "\n")


@tool(effects="read_only")
async def slow(seconds: float) -> str:
    """Sleep, writing 'started' and then 'finished' or 'cancelled' to the marks file."""
    _mark(f"started {os.getpid()}")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        _mark("cancelled")
        raise
    _mark("finished")
    return f"slept {seconds}"


@tool(effects="read_only")
def slow_sync(seconds: float) -> str:
    """Block a worker thread, as a CPU-bound or blocking tool does; the server cannot stop it early."""
    _mark(f"started {os.getpid()}")
    time.sleep(seconds)
    _mark("finished")
    return f"slept {seconds}"


@tool(effects=["side_effect", "egress"])
def crash() -> str:
    """Write to stderr and end the server process at once (killed: an ``os._exit`` in a tool's worker thread
    would only fail the call, see toolslip.agent._exits)."""
    print("about to crash: disk on fire", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


@tool(effects=["idempotent", "destructive"], trusted_output=True)
def refuse(city: str) -> str:
    """Fail with a message of the tool's own choosing."""
    raise ToolError(f"no data for {city}; try Beijing")


@tool(effects="read_only", trusted_output=True)
def picture() -> Image:
    """Return a tiny image."""
    return Image(media_type="image/png", data="iVBORw0KGgo=")
