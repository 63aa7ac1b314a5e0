"""The sandbox bridge: a program runs in pydantic-monty, and each call to a tool pauses it for the host.

`pydantic-monty <https://github.com/pydantic/monty>`_ is Pydantic's interpreter for Python written by
models: it runs in a worker subprocess, has no file system, network, environment or host imports (an
``open`` or ``os.listdir`` is an OS call this bridge never answers, so it raises ``PermissionError``; an
``import socket`` is ``ModuleNotFoundError``; its own pure modules such as ``math``, ``json``, ``re`` and
``asyncio`` work), and it stops a program at a time and a memory limit. A call to one of the offered
functions *suspends* the program: the bridge gets the name and arguments, the host runs the call (through
every hook of the loop, see :mod:`toolslip.code.mode`) and resumes the program with the value, or with an
exception raised at the call.

Concurrency: a call the program awaits (``await fx(...)``, or an argument of ``asyncio.gather(...)``) is
answered with a future, so read-only calls gathered together run at the same time; a call written plainly
(``fx(...)``) returns its value, which is what most programs (and every small model) write. Which call
sites are awaited is read from the program's syntax tree, matched to the position monty reports. A call
that is not read-only never overlaps another: it waits for the running ones, then runs alone, as in the
loop's own turns.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.errors import ConfigError

__all__ = ["InnerAnswer", "ProgramOutcome", "SandboxLimits", "run_program"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxLimits:
    """How far one program may go. Time is the program's own execution: waiting for a tool is not counted."""

    seconds: float = 5.0
    memory: int = 64 * 2**20
    """Bytes of the sandbox's heap."""
    calls: int = 100
    """Tool calls one program may make."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InnerAnswer:
    """What one tool call gave the program: a value, or the text of the exception raised at the call."""

    value: Any = None
    error: str | None = None


@dataclass(kw_only=True)
class ProgramOutcome:
    """How a program ended: what it printed, the value of its last expression, or the error that ended it."""

    printed: str = ""
    value: Any = None
    error: str | None = None
    calls: int = 0
    """Tool calls the program made."""


InnerCall = Callable[[str, dict[str, Any]], Awaitable[InnerAnswer]]
"""Runs the tool ``name`` with keyword ``arguments`` for the program."""


def _monty() -> Any:
    try:
        import pydantic_monty
    except ImportError:  # pragma: no cover - the extra is part of the dev install
        raise ConfigError("code mode runs programs in pydantic-monty: pip install 'toolslip[code]'") from None
    return pydantic_monty


async def run_program(
    source: str,
    functions: Mapping[str, Sequence[str]],
    call: InnerCall,
    *,
    read_only: frozenset[str] = frozenset(),
    limits: SandboxLimits | None = None,
) -> ProgramOutcome:
    """Run ``source`` with ``functions`` (name -> parameter names, for positional arguments) answered by ``call``."""
    monty = _monty()
    bridge = _Bridge(monty, functions, call, read_only, limits or SandboxLimits(), _awaited_calls(source))
    printed = monty.CollectString()
    session_limits = {
        "max_feed_duration_secs": bridge.limits.seconds,
        "max_memory": bridge.limits.memory,
        "max_suspensions": bridge.limits.calls + 20,  # name lookups and future waits count too
    }
    try:
        async with monty.AsyncMonty(min_processes=1, max_processes=1) as pool:
            async with pool.checkout(limits=session_limits, os_policy={"sleep": "zero"}) as session:
                stubs = {name: _never_called for name in functions}
                snap = await session.feed_start(source, external_lookup=stubs, print_callback=printed)
                while not isinstance(snap, monty.MontyComplete):
                    snap = await bridge.answer(snap)
                bridge.outcome.printed, bridge.outcome.value = printed.output, snap.output
    except monty.MontyError as exc:
        bridge.outcome.printed = printed.output
        bridge.outcome.error = _describe(monty, exc)
    finally:
        for task in bridge.pending.values():
            task.cancel()
        # The pool's objects are dropped and collected now: left until interpreter exit, their native teardown
        # aborted the process (SIGABRT, exit 134) after the right output in 4 of 30 runs of the docs' example,
        # against 0 of 30 collected here (interleaved; pydantic-monty 1.4.0, and 1.7.0 aborts too).
        pool = session = snap = None
        gc.collect()
    return bridge.outcome


class _Bridge:
    """Answers each suspension of one program: tool calls, the futures it awaits, and the OS calls it may not make."""

    def __init__(
        self,
        monty: Any,
        functions: Mapping[str, Sequence[str]],
        call: InnerCall,
        read_only: frozenset[str],
        limits: SandboxLimits,
        awaited: frozenset[tuple[int, int]],
    ) -> None:
        self.monty, self.functions, self.call, self.read_only = monty, functions, call, read_only
        self.limits, self.awaited = limits, awaited
        self.outcome = ProgramOutcome()
        self.pending: dict[int, asyncio.Task[InnerAnswer]] = {}

    async def answer(self, snap: Any) -> Any:
        """The next suspension (or the end) after answering this one."""
        if isinstance(snap, self.monty.AsyncNameLookupSnapshot):
            return await snap.resume_auto()
        if isinstance(snap, self.monty.AsyncFutureSnapshot):
            ids = [i for i in snap.pending_call_ids if i in self.pending]
            done, _ = await asyncio.wait([self.pending[i] for i in ids], return_when=asyncio.FIRST_COMPLETED)
            return await snap.resume(
                {i: _settled(self.pending.pop(i).result()) for i in ids if self.pending[i] in done}
            )
        if snap.is_os_function:  # files, network, imports of host modules: refused, so the program sees an error
            return await snap.resume_not_handled()
        name = str(snap.function_name)
        if name not in self.functions:
            unknown = f"name {name!r} is not defined; the functions are {', '.join(self.functions)}"
            return await snap.resume({"exc_type": "NameError", "message": unknown})
        if self.outcome.calls >= self.limits.calls:
            limit = f"the program made more than {self.limits.calls} tool calls"
            return await snap.resume({"exc_type": "RuntimeError", "message": limit})
        try:
            arguments = _bind(name, self.functions[name], snap.args, snap.kwargs)
        except TypeError as exc:
            return await snap.resume({"exc_type": "TypeError", "message": str(exc)})
        self.outcome.calls += 1
        alone = name not in self.read_only
        if alone and self.pending:  # the barrier: a call that may change the world waits for the running ones
            await asyncio.wait(list(self.pending.values()))
        if (snap.position.start, snap.position.end) not in self.awaited:
            return await snap.resume(_settled(await self.call(name, arguments)))
        task = asyncio.ensure_future(self.call(name, arguments))
        self.pending[snap.call_id] = task
        if alone:  # and it runs alone: nothing starts until it has finished
            await asyncio.wait([task])
        return await snap.resume({"future": ...})


def _settled(found: InnerAnswer) -> dict[str, Any]:
    if found.error is not None:
        return {"exc_type": "RuntimeError", "message": found.error}
    return {"return_value": found.value}


def _never_called(*args: Any, **kwargs: Any) -> None:  # pragma: no cover - every call is answered by hand
    raise RuntimeError("a tool's stub was called directly")


def _bind(name: str, params: Sequence[str], args: Sequence[Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Positional and keyword arguments as the JSON object a tool call carries."""
    if len(args) > len(params):
        raise TypeError(f"{name}() takes {len(params)} positional arguments but {len(args)} were given")
    bound = dict(zip(params, args, strict=False))
    for key, value in kwargs.items():
        key = key[:-1] if key.endswith("_") and key[:-1] in params else key  # ``from_`` for a keyword ``from``
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument {key!r}")
        bound[key] = value
    try:
        return dict(json.loads(json.dumps(bound, default=_plain)))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}() arguments must be plain data (numbers, text, lists, dicts): {exc}") from None


def _plain(value: Any) -> Any:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not plain data")


def _describe(monty: Any, exc: Exception) -> str:
    if isinstance(exc, monty.MontyCrashedError):
        return "the program was stopped: it ran over its time or memory limit (" + str(exc)[:200] + ")"
    display = getattr(exc, "display", None)
    text = display() if callable(display) else str(exc)
    return str(text).strip()


_GATHERERS = {"gather", "create_task", "ensure_future", "wait", "as_completed"}


def _awaited_calls(source: str) -> frozenset[tuple[int, int]]:
    """Character spans of the calls the program awaits or gathers: those are answered with futures."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()  # the sandbox reports it
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    lines = source.splitlines(keepends=True)

    def offset(line: int, col: int) -> int:  # ast columns count UTF-8 bytes; monty's spans count characters
        text = lines[line - 1] if line - 1 < len(lines) else ""
        return starts[line - 1] + len(text.encode()[:col].decode(errors="ignore"))

    spans: set[tuple[int, int]] = set()

    def add(node: ast.AST) -> None:
        if isinstance(node, ast.Call) and node.end_lineno is not None and node.end_col_offset is not None:
            spans.add((offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)))

    for node in ast.walk(tree):
        if isinstance(node, ast.Await):
            add(node.value)
        elif isinstance(node, ast.Call) and _called_name(node.func) in _GATHERERS:
            for argument in node.args:
                for inner in ast.walk(argument) if isinstance(argument, ast.Starred) else (argument,):
                    if isinstance(inner, ast.ListComp | ast.GeneratorExp | ast.SetComp):
                        add(inner.elt)
                    else:
                        add(inner)
    return frozenset(spans)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""
