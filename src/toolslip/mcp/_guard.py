"""Launches an MCP server so that it dies with the agent, even when the agent is killed with SIGKILL.

Run as ``python -I -S _guard.py AGENT_PID COMMAND ARGS...`` (by path, standard library only, so it starts
in milliseconds). The MCP SDK already shuts servers down on a clean exit, an exception or Ctrl-C; what it
cannot cover is its own process being killed outright, which leaves a server that is busy in a tool call
(and so not reading stdin to notice the EOF) running for ever. The guard is the server's parent and the
leader of its process group:

* on Linux it asks the kernel for SIGTERM when the agent dies (``PR_SET_PDEATHSIG``); elsewhere a thread
  polls the parent pid;
* on SIGTERM, SIGHUP or SIGINT it sends SIGTERM to its whole process group (the server and anything it
  spawned), then SIGKILL after a grace period;
* it does not hold the server's stdin/stdout open, so the agent still sees the server's EOF.
"""

import os
import signal
import subprocess
import sys
import threading
import time

GRACE_SECONDS = 2.0
_PR_SET_PDEATHSIG = 1


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop(signum)


def _watch_parent(agent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM) == 0:
            return

    def poll() -> None:
        while os.getppid() == agent:
            time.sleep(0.25)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=poll, daemon=True).start()


def main(argv: list[str]) -> int:
    agent, command = int(argv[0]), argv[1:]
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, _raise_stop)
    try:
        _watch_parent(agent)
        if os.getppid() != agent:  # the agent died before the watch was armed
            return 1
        try:
            child = subprocess.Popen(command)
        except OSError as exc:
            print(f"cannot start MCP server {command[0]!r}: {exc}", file=sys.stderr)
            return 127
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        return child.wait()
    except _Stop as stop:
        received: int = stop.args[0]
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(signum, signal.SIG_IGN)
        os.killpg(0, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        while time.monotonic() < deadline and _children_left():
            time.sleep(0.02)
        os.killpg(0, signal.SIGKILL)  # stragglers the server spawned, and the guard itself
        return 128 + received


def _children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return False
    return True


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
