"""Code mode: the model answers with one program that calls the tools, and the loop runs it.

The model is offered a single tool, ``run_python(code)``, whose description lists every real tool as a
Python function (:mod:`toolslip.code.signatures`). Because the program travels as one tool call's
argument, code mode works on every wire and through ``toolslip serve``, streamed or not. The loop runs
the program in the sandbox (:mod:`toolslip.code.sandbox`); each call the program makes becomes a
:class:`~toolslip.core.messages.ToolCall` with the id ``<program call id>/<n>`` (n counts the program's
calls from 0, so a replay of the same program meets the same ids) and goes through the loop's own path
for one call, every hook included (journal, dedup, approval, the injection gate, the secret guard), with
its own ``ToolStarted``/``ToolFinished`` events.

What the program sees of a call: the result's text, read as JSON when it is JSON (a number, a dict, a
list) and as a string otherwise. A call that failed, was refused or held raises ``RuntimeError``
with the result's text at the call, so a program never goes on with an error message where it expected
data; it may catch it. What the program printed and the value of its last line go back to the model as
the result of ``run_python``; a program that fails (a syntax error, an exception, a limit) goes back as
an error result with the traceback and the calls that did run, for the model to correct.

The program is fixed before any tool answers: what a tool returns is a value, never code, so text a third
party wrote can change the data a program passes on (which the gate judges per call) but not which calls
it makes in which order, except through the program's own ``if``s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from ..core.errors import ConfigError
from ..core.messages import ToolCall, ToolResult, ToolSpec
from ..providers.local_code import CODE_FUNCTIONS
from .sandbox import InnerAnswer, ProgramOutcome, SandboxLimits, run_program
from .signatures import Declared, parameter_names, python_stub

__all__ = [
    "CODE_FUNCTIONS",
    "INNER_CALLS",
    "INNER_RESULTS",
    "PROGRAM_TOOL",
    "CodeMode",
    "Offered",
    "as_value",
    "functions_of",
    "report",
    "unfenced",
]

PROGRAM_TOOL = "run_python"
"""The one tool the model is offered in code mode."""
INNER_RESULTS = "code.results"
"""Key in ``RunContext.state``: every result a program's calls got, in order. The injection gate's
provenance reads them, because a program passes data on before its own result reaches the transcript."""
INNER_CALLS = "code.calls"
"""Key in ``RunContext.state``: every call a program made, in order (the gate's rules look a source's
call up there, as they look up a direct call in the transcript)."""

_INTRO = """Run a Python program that calls the functions below; use it to get data and to act.
Call them as plain functions (positional or keyword arguments). Compute with Python (sums, loops, ifs).
`print()` what you need to see, or end with an expression: its value is shown to you.
The program runs in a sandbox: no files, no network, no imports besides math, json, re, datetime, asyncio.
To run several read-only calls at once: `a, b = await asyncio.gather(f(1), f(2))`.
A failed call raises RuntimeError with its message. Write one program; answer the user after seeing its output.

"""


class Offered(Declared, Protocol):
    """A tool as code mode needs it: its declaration, and whether calls to it may overlap."""

    @property
    def read_only(self) -> bool: ...


class CodeMode:
    """What :class:`~toolslip.Agent` with ``mode="code"`` adds: the program tool's declaration, and running it."""

    def __init__(self, limits: SandboxLimits | None = None) -> None:
        self.limits = limits or SandboxLimits()
        self.tool: Any = None
        """The loop's own ``Tool`` for ``run_python`` (read-only: each call the program makes is judged
        on its own), which the hooks see; set by :meth:`of`."""
        self._spec: tuple[tuple[str, ...], ToolSpec] | None = None

    @classmethod
    def of(cls, mode: str | CodeMode, tool: Any) -> CodeMode:
        """The code mode an ``Agent(mode=...)`` names, with the loop's ``tool`` for ``run_python``; one clear
        sentence for a mode that is not one."""
        if not isinstance(mode, CodeMode) and mode != "code":
            raise ConfigError(f"mode must be 'tool' or 'code', got {mode!r}")
        found = mode if isinstance(mode, CodeMode) else cls()
        found.tool = tool
        return found

    def spec(self, tools: Sequence[Offered]) -> ToolSpec:
        """``run_python(code)``, its description listing ``tools`` as Python functions."""
        stubs = tuple(python_stub(t) for t in tools)
        if self._spec is not None and self._spec[0] == stubs:
            return self._spec[1]
        spec = ToolSpec(
            name=PROGRAM_TOOL,
            description=_INTRO + "\n\n".join(stubs),
            parameters={
                "type": "object",
                "properties": {"code": {"type": "string", "description": "The Python program to run."}},
                "required": ["code"],
            },
            extra={
                CODE_FUNCTIONS: {
                    "stubs": stubs,
                    "names": [t.name for t in tools],
                    "specs": tuple(
                        ToolSpec(name=t.name, description=t.description, parameters=t.parameters) for t in tools
                    ),
                }
            },
        )
        self._spec = (stubs, spec)
        return spec

    async def run(
        self,
        call: ToolCall,
        tools: Sequence[Offered],
        inner: Callable[[ToolCall], Awaitable[ToolResult]],
        state: dict[str, Any] | None = None,
    ) -> ToolResult:
        """Run the program in ``call``; each of its tool calls goes to ``inner`` (the loop's path for one call).

        ``state`` is the run's ``RunContext.state``: every inner call and result is added to its
        :data:`INNER_CALLS` and :data:`INNER_RESULTS` as it happens.
        """
        source = (call.arguments or {}).get("code")
        if not isinstance(source, str) or not source.strip():
            text = f"{PROGRAM_TOOL} needs the program as its `code` argument (a string of Python)."
            return ToolResult(call_id=call.id, name=call.name, content=text, is_error=True, outcome="failed")
        state = {} if state is None else state
        results: list[ToolResult] = state.setdefault(INNER_RESULTS, [])
        calls: list[ToolCall] = state.setdefault(INNER_CALLS, [])
        first = len(results)
        made = [0]

        def one(name: str, arguments: dict[str, Any]) -> Awaitable[InnerAnswer]:
            # The id is taken here, when the program makes the call, so a replay numbers calls the same way
            # even when some of them run concurrently and finish in another order.
            inner_call = ToolCall(id=f"{call.id}/{made[0]}", name=name, arguments=arguments)
            made[0] += 1
            calls.append(inner_call)
            return _answered(inner(inner_call), results)

        functions = {t.name: parameter_names(t.parameters) for t in tools}
        read_only = frozenset(t.name for t in tools if t.read_only)
        outcome = await run_program(unfenced(source), functions, one, read_only=read_only, limits=self.limits)
        ran = results[first:]
        return ToolResult(
            call_id=call.id,
            name=call.name,
            content=report(outcome, ran),
            is_error=outcome.error is not None,
            untrusted=any(r.untrusted for r in ran),  # their data may be in what the program printed
            outcome="ran" if outcome.error is None or ran else "failed",
        )


async def _answered(pending: Awaitable[ToolResult], results: list[ToolResult]) -> InnerAnswer:
    result = await pending
    results.append(result)
    return as_value(result)


def as_value(result: ToolResult) -> InnerAnswer:
    """What the program gets back from a call (see the module docstring)."""
    # A call cut off by a crash and not run again is no error (it may have happened): its text is the value.
    if result.is_error or result.outcome in ("refused", "held"):
        return InnerAnswer(error=f"{result.name}: {result.text}")
    text = result.text
    try:
        return InnerAnswer(value=json.loads(text))
    except ValueError:
        return InnerAnswer(value=text)


def report(outcome: ProgramOutcome, ran: Sequence[ToolResult]) -> str:
    """The program's result as the model reads it."""
    lines: list[str] = []
    if outcome.printed.strip():
        lines.append(outcome.printed.rstrip())
    if outcome.error is not None:
        lines.append(f"The program failed:\n{outcome.error}")
        if ran:
            # What each call gave, not only that it ran: a program that failed on a value of an unexpected
            # shape (text where it did arithmetic) can be written again with the values themselves.
            done = "\n".join(f"- {r.name}: {'failed: ' if r.is_error else ''}{_short(r.text)}" for r in ran)
            lines.append(f"Calls it made before failing (their effects happened; do not repeat them):\n{done}")
    elif outcome.value is not None:
        shown = outcome.value if isinstance(outcome.value, str) else repr(outcome.value)
        lines.append(f"Result: {shown}")
    return "\n".join(lines) or "The program ran; it printed nothing and its last line has no value."


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text) - limit} more characters)"


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_+-]*[ \t]*\n(.*?)\n?```\s*$", re.DOTALL)


def unfenced(source: str) -> str:
    """The program without the Markdown fence many models put around it."""
    found = _FENCE.match(source)
    return found.group(1) if found else source


def functions_of(spec: ToolSpec) -> Mapping[str, Any] | None:
    """The stubs and names a program tool's declaration carries, for a grammar (``None``: not a program tool)."""
    found = spec.extra.get(CODE_FUNCTIONS)
    return found if isinstance(found, Mapping) else None
