"""Running a subprocess from a tool so that a timeout really stops it.

``asyncio.wait_for`` cancels the awaiting coroutine, but a child process (and whatever *it* started)
keeps running. :func:`run_process` starts the child in its own session, so it leads a new process group,
and kills the whole group when the call is cancelled (the tool's timeout cancels it)::

    @tool(timeout=30)
    async def run_tests(path: str) -> str:
        done = await run_process(["pytest", "-q", path])
        return done.output
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ProcessOutput", "run_process"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessOutput:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout then stderr, plus the exit status when it is not 0: what a model needs to read."""
        status = f"\n[exit status {self.returncode}]" if self.returncode else ""
        return self.stdout + self.stderr + status


async def run_process(
    argv: Sequence[str],
    *,
    input: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> ProcessOutput:
    """Run ``argv`` to completion; when cancelled, its whole process group is killed.

    Bound it with the tool's ``timeout`` (or ``asyncio.timeout``): the cancellation they deliver is what
    kills the group.
    """
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    try:
        stdout, stderr = await process.communicate(input.encode() if input is not None else None)
    except BaseException:  # cancelled by a timeout, Ctrl-C: nothing the call started may outlive it
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await asyncio.shield(process.wait())
        raise
    return ProcessOutput(
        returncode=process.returncode if process.returncode is not None else -1,
        stdout=stdout.decode(errors="replace"),
        stderr=stderr.decode(errors="replace"),
    )
