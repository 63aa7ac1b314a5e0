"""How a tool's function runs, and how a call that must stop is stopped.

* An ``async def`` runs on the event loop; a timeout or a cancellation stops it at its next ``await``.
* A plain ``def`` (``isolate="thread"``, the default) runs in one of toolslip's own *daemon* worker
  threads. Python cannot stop a thread, so a call that times out or is cancelled is *abandoned*: its
  thread runs on, its result is dropped, and nothing ever waits for it. That is why this is not
  ``asyncio.to_thread``: ``asyncio.run`` joins the loop's default executor before it returns, and the
  interpreter joins every ``concurrent.futures`` worker at exit, so one stuck call held the whole
  process (a 60 s tool with a 2 s timeout kept the command alive for 60 s; Ctrl-C needed three presses).
* ``isolate="process"`` runs the function in a child process, killed with its whole process group on
  timeout or cancellation: the only way to really stop code that does not cooperate.
* ``isolate="none"`` calls a plain ``def`` directly on the event loop, for short functions that never
  block (arithmetic, a dict lookup): no thread hop, which costs more CPU than such a function itself
  (``benchmarks/loop_overhead.py``). While it runs, nothing else on the loop does, so it takes no timeout.

The child is a fresh interpreter (``subprocess``), not a ``fork``: forking a process that has threads
(the event loop's, these workers, a model's) copies locks some other thread held, and the child can
deadlock on them. A fresh interpreter cannot pickle a function by reference when the function lives in
a tools file loaded by path (``toolslip run tools.py``) or in ``__main__``, so the parent sends where the
function lives (module name, file, qualified name) and the child imports that file under the same module
name, which also lets classes defined there (pydantic arguments, exceptions) travel by pickle. A child
serves one call at a time and is kept for the next call, so its imports are paid once (see
:mod:`toolslip.agent._isolated`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import inspect
import os
import pickle
import queue
import signal
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeAlias, TypeVar

from ..core.errors import ToolError
from ._exits import exits_raise

__all__ = [
    "ChildDied",
    "Isolation",
    "isolation_problem",
    "run_in_process",
    "run_in_thread",
    "run_tool_function",
    "timeout_outcome",
]

Isolation: TypeAlias = Literal["none", "thread", "process"]
"""Where a sync tool runs: on the event loop itself, a daemon worker thread (abandoned when it must stop) or a
child process (killed)."""

T = TypeVar("T")


async def run_tool_function(
    fn: Callable[..., Any], kwargs: Mapping[str, Any], isolate: Isolation, args: tuple[Any, ...]
) -> Any:
    """Call a tool's function with ``args`` (the run context) and its validated arguments; cancelling the await
    stops it as well as it can."""
    if isolate == "process":
        return await run_in_process(fn, kwargs, args)
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    value = fn(*args, **kwargs) if isolate == "none" else await run_in_thread(fn, *args, **kwargs)
    if inspect.isawaitable(value):  # a sync function that returned a coroutine
        value = await value
    return value


def timeout_outcome(fn: Callable[..., Any] | None, isolate: Isolation = "thread") -> str:
    """What a timeout did to a call, for the model: ``timed out after 2 s and <this>``."""
    if isolate == "process":
        return "its process was killed"
    if fn is None or inspect.iscoroutinefunction(fn):
        return "was cancelled"
    # Honest about a thread: a side effect it was making may still happen after the model is told.
    return "was abandoned, but its thread could not be stopped and may still finish what it was doing"


# --- threads ------------------------------------------------------------------------------------

_IDLE_SECONDS = 30.0
"""An idle worker thread ends after this long without work."""


class _Job:
    __slots__ = ("call", "future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], call: Callable[[], Any]) -> None:
        self.loop, self.future, self.call = loop, future, call

    def run(self) -> None:
        if self.future.cancelled():  # cancelled while queued: never start it
            return
        try:
            value, error = self.call(), None
        except BaseException as exc:  # handed to the awaiting coroutine, like asyncio.to_thread does
            value, error = None, exc
        try:
            self.loop.call_soon_threadsafe(_settle, self.future, value, error)
        except RuntimeError:  # the loop is closed: whoever waited is gone, and so is the result
            pass


def _settle(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if future.cancelled():  # the call was abandoned (timeout, Ctrl-C): drop what it produced
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class _Workers:
    """Daemon threads that take one job at a time; a busy (possibly stuck) one is simply not reused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[_Job]] = []

    def submit(self, job: _Job) -> None:
        with self._lock:
            jobs = self._idle.pop() if self._idle else None
        if jobs is None:
            jobs = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(jobs,), name="toolslip-tool", daemon=True).start()
        jobs.put(job)

    def _serve(self, jobs: queue.SimpleQueue[_Job]) -> None:
        while True:
            try:
                job = jobs.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if jobs in self._idle:
                        self._idle.remove(jobs)
                        return
                continue  # a job was handed to this worker just as it timed out
            job.run()
            del job  # do not keep the last call's arguments alive while idle
            with self._lock:
                self._idle.append(jobs)

    def reset(self) -> None:
        """After ``fork`` the child has none of these threads: forget them."""
        self._lock = threading.Lock()
        self._idle = []


_workers = _Workers()


async def run_in_thread(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``asyncio.to_thread`` whose thread nobody waits for: cancelling the await abandons the call.

    The function runs in the caller's context (contextvars), in a daemon worker thread. A call that is
    cancelled before a worker picks it up never starts.
    """
    loop = asyncio.get_running_loop()
    if loop is not _signals.loop:
        _signals.wake(loop)
    future: asyncio.Future[T] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, exits_raise(fn), *args, **kwargs)
    _workers.submit(_Job(loop, future, call))
    return await future


class _SignalWakeup:
    """Makes a signal wake the event loop even when the kernel delivers it to a worker thread.

    Python runs signal handlers (asyncio.run's Ctrl-C handler among them) only in the main thread, the
    next time it runs Python code. A SIGINT delivered to a worker blocked in ``read()`` or ``sleep()``
    left the main thread asleep in ``select()``, and the Ctrl-C was lost (1 press in about 25). With a
    wakeup fd that the loop reads, the C-level handler's byte wakes the loop, which then runs the handler.
    """

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self._pair: tuple[socket.socket, socket.socket] | None = None
        self._reading: asyncio.AbstractEventLoop | None = None
        """The loop our reader is registered with."""

    def wake(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set the wakeup fd, and only its loop runs the handlers
        reader, writer = socket.socketpair()
        reader.setblocking(False)
        writer.setblocking(False)
        try:
            previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
            ours = self._pair is not None and previous == self._pair[1].fileno()
            if previous != -1 and not ours:  # someone else's (asyncio.add_signal_handler): it wakes the loop
                signal.set_wakeup_fd(previous)
                raise ValueError(previous)
            loop.add_reader(reader.fileno(), _drain, reader)
        except (ValueError, NotImplementedError, OSError):
            reader.close()
            writer.close()
            return
        self._close_pair()  # the previous loop's (one loop per asyncio.run)
        self._pair, self._reading = (reader, writer), loop

    def close(self) -> None:
        """At exit: stop writing to our socket, and close it."""
        if self._pair is not None and threading.current_thread() is threading.main_thread():
            with contextlib.suppress(ValueError):
                previous = signal.set_wakeup_fd(-1)
                if previous not in (-1, self._pair[1].fileno()):
                    signal.set_wakeup_fd(previous)  # someone else's: put it back
        self._close_pair()

    def _close_pair(self) -> None:
        if self._pair is not None:
            # The loop we served may live on (the sync entry keeps one per thread): it must forget our reader
            # before the socket closes, or the next file opened under that number is never watched by it
            # (its selector would only update the callback of the stale entry) and a read on it never wakes.
            if self._reading is not None and not self._reading.is_closed():
                self._reading.remove_reader(self._pair[0].fileno())
            for sock in self._pair:
                sock.close()
            self._pair = self._reading = None


def _drain(reader: socket.socket) -> None:
    with contextlib.suppress(OSError):
        reader.recv(4096)  # the handler itself runs in the main thread as soon as it runs Python code


_signals = _SignalWakeup()


# --- child processes ----------------------------------------------------------------------------

_FRAME = struct.Struct(">Q")
_MAX_IDLE_CHILDREN = 4
_BOOT = "import sys; sys.path[:0] = {path!r}; from toolslip.agent._isolated import main; main()"


def isolation_problem(fn: Callable[..., Any]) -> str | None:
    """Why ``fn`` cannot run in a child process (it must be found there by module and name), or ``None``."""
    if not inspect.isfunction(fn):
        return f"isolate='process' needs a plain function, got {type(fn).__name__}"
    if "<" in fn.__qualname__ or "." in fn.__qualname__:  # <locals>, <lambda>, methods
        return (
            f"isolate='process' needs a function defined at the top level of a module, so that the child "
            f"process can import it; {fn.__qualname__!r} is not"
        )
    return None


def _where(fn: Callable[..., Any]) -> tuple[str, str | None, str]:
    """(module name, module file, qualified name): what the child needs to find ``fn``."""
    module = sys.modules.get(fn.__module__)
    file = getattr(module, "__file__", None)
    return fn.__module__, str(Path(file).resolve()) if file else None, fn.__qualname__


class ChildDied(Exception):
    """The child process running an isolated call ended without answering (crash, ``os._exit``, killed)."""


class _Child:
    """One child interpreter serving calls one at a time over pipes (length-prefixed pickles)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._killed = False

    def call(self, request: bytes) -> tuple[bool, Any]:
        """Send one call and wait for its answer; runs in a worker thread."""
        process = self._start()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(_FRAME.pack(len(request)) + request)
            process.stdin.flush()
            header = process.stdout.read(_FRAME.size)
            body = process.stdout.read(_FRAME.unpack(header)[0]) if len(header) == _FRAME.size else b""
        except (OSError, ValueError):  # the pipe broke: the child is gone
            header = body = b""
        if not body:
            self.kill()
            raise ChildDied(f"the tool's process ended without answering (exit status {process.wait()})")
        ok, value = pickle.loads(body)
        return ok, value

    def _start(self) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._killed:  # cancelled before it got going
                raise ChildDied("the call was stopped before its process started")
            if self._process is None:
                root = str(Path(__file__).resolve().parent.parent)
                self._process = subprocess.Popen(
                    [sys.executable, "-c", _BOOT.format(path=[root])],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    start_new_session=True,  # its own group: Ctrl-C is ours to handle, killpg gets grandchildren
                )
                _children.track(self, True)
            return self._process

    def kill(self) -> None:
        """Kill the child and everything it started; safe from any thread, at any time."""
        with self._lock:
            self._killed = True
            self._kill_locked()

    def _kill_locked(self) -> None:
        if self._process is not None and self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._process.pid, signal.SIGKILL)
            self._process.wait()
            _children.track(self, False)
        if self._process is not None:
            for pipe in (self._process.stdin, self._process.stdout):
                with contextlib.suppress(OSError):
                    pipe.close()  # type: ignore[union-attr]  # both are pipes

    def end_input(self) -> None:
        """Tell an idle child to end: it exits when its input closes."""
        if self._process is not None and self._process.stdin is not None:
            with contextlib.suppress(OSError):
                self._process.stdin.close()

    def close(self) -> None:
        """Let an idle child end on its own, killing it if it has not within a second."""
        self.end_input()
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=1)
        self.kill()


class _Children:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.idle: list[_Child] = []
        self.started: set[_Child] = set()

    def take(self) -> _Child:
        with self._lock:
            return self.idle.pop() if self.idle else _Child()

    def give_back(self, child: _Child) -> None:
        with self._lock:
            keep = len(self.idle) < _MAX_IDLE_CHILDREN
            if keep:
                self.idle.append(child)
        if not keep:
            child.close()

    def track(self, child: _Child, running: bool) -> None:
        with self._lock:
            (self.started.add if running else self.started.discard)(child)

    def close_all(self) -> None:
        """At exit: idle children end on their own, busy ones (abandoned calls) are killed."""
        with self._lock:
            idle, self.idle = self.idle, []
            busy = [c for c in self.started if c not in idle]
        for child in busy:
            child.kill()
        for child in idle:
            child.end_input()
        for child in idle:
            child.close()

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]  # after fork: the children belong to the parent


_children = _Children()


def _at_exit() -> None:
    """Stop the children and the signal wakeup, with Ctrl-C ignored meanwhile.

    A Ctrl-C that came as the command ended (while an idle child was being waited for) raised
    KeyboardInterrupt inside this handler, and Python printed it as a traceback under the run's last
    line. The process is ending anyway; this takes at most a second per idle child, then kills it.
    """
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        _children.close_all()
        _signals.close()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


atexit.register(_at_exit)


def _after_fork() -> None:
    _workers.reset()
    _children.reset()


os.register_at_fork(after_in_child=_after_fork)


async def run_in_process(fn: Callable[..., Any], kwargs: Mapping[str, Any], args: tuple[Any, ...] = ()) -> Any:
    """Run a top-level function in a child process; cancelling the await kills the process group.

    The return value comes back serialized as tool output; an exception comes back as the same type
    when it can be unpickled, else as an exception of the same name carrying its message. ``args`` (the
    run context) and ``kwargs`` must pickle."""
    try:
        arguments = pickle.dumps((args, dict(kwargs)), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:  # e.g. a database pool in the run's deps: say which, before any child starts
        why = f"{type(exc).__name__}: {exc}. Pass picklable deps, or use isolate='thread'"
        raise ToolError(
            f"{fn.__name__} runs in a child process, where its arguments or deps cannot go: {why}"
        ) from None
    request = pickle.dumps((sys.path, _where(fn), arguments), protocol=pickle.HIGHEST_PROTOCOL)
    child = _children.take()
    try:
        ok, value = await run_in_thread(child.call, request)
    except BaseException:  # timed out, cancelled, Ctrl-C, or the child died: it must not run on
        child.kill()
        raise
    _children.give_back(child)
    if ok:
        return value
    raise _exception(value)


def _exception(reply: tuple[str, str, bytes | None]) -> BaseException:
    name, message, pickled = reply
    if pickled is not None:
        with contextlib.suppress(Exception):
            exc = pickle.loads(pickled)
            if isinstance(exc, BaseException):
                return exc
    stand_in: type[Exception] = type(name, (Exception,), {"__module__": __name__})
    return stand_in(message)
