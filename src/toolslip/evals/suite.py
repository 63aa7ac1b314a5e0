"""Suites as code: a task is a prompt, its tools (or a fresh environment) and a check, in plain Python.

A check receives the :class:`Outcome` of one trial and either returns nothing (pass), a bool, or a
reward in [0, 1]; an ``AssertionError`` fails the trial with its message. The trajectory helpers
(:func:`called`, :func:`never_called`, :func:`at_most_steps`) raise such errors with a message that
shows what the agent really did, so a failure in the report explains itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

from ..agent.tools import Toolbox, ToolLike, as_toolbox
from ..core._files import import_user_file
from ..core.errors import ConfigError
from ..core.messages import Message, ToolCall, ToolResult
from ..core.result import RunResult
from ..testing import Turn

__all__ = [
    "Check",
    "Outcome",
    "Suite",
    "Task",
    "at_most_steps",
    "called",
    "load_suite",
    "never_called",
]


@dataclass(kw_only=True)
class Outcome:
    """What one trial produced, as the check sees it."""

    result: RunResult
    env: Any = None
    """The environment the task's ``env`` factory built for this trial (None without one)."""
    inner_calls: Sequence[ToolCall] = ()
    """In code mode, the calls the run's programs made (ids ``<program call id>/<n>``), in order."""
    inner_results: Sequence[ToolResult] = ()

    @property
    def text(self) -> str:
        """The agent's final answer."""
        return self.result.output

    @property
    def data(self) -> Any:
        """The validated answer of a task with an ``output_type`` (``None`` when it did not fit)."""
        return self.result.data

    @property
    def steps(self) -> int:
        return self.result.steps

    @property
    def calls(self) -> list[ToolCall]:
        """Every tool call the model wrote, in order; in code mode a program stands for the calls it made, so
        a check reads the same in both modes (a program that made none stays itself)."""
        return [i for m in self.result.messages if m.role == "assistant" for c in m.tool_calls for i in self._made(c)]

    @property
    def results(self) -> list[ToolResult]:
        """The results of :attr:`calls`, in order (a program's own result when it made no call)."""
        return [
            i
            for m in self.result.messages
            if m.role == "tool"
            for r in m.tool_results
            for i in ([x for x in self.inner_results if x.call_id.startswith(f"{r.call_id}/")] or [r])
        ]

    def _made(self, call: ToolCall) -> list[ToolCall]:
        return [c for c in self.inner_calls if c.id.startswith(f"{call.id}/")] or [call]


Check: TypeAlias = Callable[[Outcome], bool | float | None]


@dataclass(kw_only=True, frozen=True)
class Task:
    """One task of a suite; every trial of it starts from the same clean state."""

    id: str
    prompt: str | Sequence[Message]
    """A user prompt, or a whole conversation to continue."""
    check: Check
    tools: Toolbox | Sequence[ToolLike] | None = None
    """Tools shared by every trial; use ``env`` instead when tools hold state."""
    env: Callable[[], Any] | None = None
    """Builds a fresh environment per trial; its ``tools`` attribute gives the trial's tools."""
    system: str | None = None
    max_steps: int | None = None
    """Overrides the suite's step limit for this task."""
    output_type: Any = None
    """What the run must end in (as ``Agent(output_type=...)``): the check reads it as ``outcome.data``."""
    reference: Sequence[Turn] = ()
    """The turns a correct agent would produce. The ``reference`` model replays them, which checks
    that the suite's checks pass a right answer; ``flaky:P`` replays them with probability P."""

    def __post_init__(self) -> None:
        if self.tools is not None and self.env is not None:
            raise ConfigError(f"task {self.id!r}: give either tools or env, not both")

    def build(self) -> tuple[Toolbox, Any]:
        """The tools and environment for one fresh trial."""
        if self.env is None:
            return as_toolbox(self.tools), None
        env = self.env()
        tools = getattr(env, "tools", None)
        if tools is None:
            raise ConfigError(f"task {self.id!r}: the env factory returned {type(env).__name__} with no .tools")
        return as_toolbox(tools), env


@dataclass(kw_only=True)
class Suite:
    """Named tasks plus the defaults they share."""

    name: str
    tasks: Sequence[Task]
    system: str | None = None
    max_steps: int = 8
    path: str | None = field(default=None, compare=False)
    """The file the suite was loaded from; a Ray worker loads it again from there."""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for task in self.tasks:
            if task.id in seen:
                raise ConfigError(f"suite {self.name!r}: two tasks are named {task.id!r}; task ids must be unique")
            seen.add(task.id)
        if not self.tasks:
            raise ConfigError(f"suite {self.name!r} has no tasks")

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise ConfigError(f"suite {self.name!r} has no task {task_id!r}")

    def position(self, task_id: str) -> int:
        """The task's place in the suite, which orders a report's rows (-1 for no task of the suite)."""
        return next((i for i, t in enumerate(self.tasks) if t.id == task_id), -1)


# --- trajectory assertions ----------------------------------------------------------------------


def _show(call: ToolCall) -> str:
    args = ", ".join(f"{k}={v!r}" for k, v in (call.arguments or {}).items())
    return f"{call.name}({args if call.arguments is not None else call.raw_arguments})"


def _made(outcome: Outcome) -> str:
    return ", ".join(_show(c) for c in outcome.calls) or "no calls"


def called(outcome: Outcome, name: str, /, **arguments: Any) -> ToolCall:
    """Assert that ``name`` was called with (at least) these arguments; returns the matching call."""
    for call in outcome.calls:
        if call.name == name and call.arguments is not None and _matches(call.arguments, arguments):
            return call
    wanted = _show(ToolCall(id="", name=name, arguments=arguments)) if arguments else name
    raise AssertionError(f"expected a call {wanted}; calls made: {_made(outcome)}")


def _matches(actual: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    return all(key in actual and actual[key] == value for key, value in wanted.items())


def never_called(outcome: Outcome, name: str) -> None:
    """Assert that ``name`` was never called."""
    if any(c.name == name for c in outcome.calls):
        raise AssertionError(f"{name} must not be called; calls made: {_made(outcome)}")


def at_most_steps(outcome: Outcome, limit: int) -> None:
    """Assert that the run took at most ``limit`` model calls."""
    if outcome.steps > limit:
        raise AssertionError(f"took {outcome.steps} steps, at most {limit} allowed; calls made: {_made(outcome)}")


# --- loading a suite file -----------------------------------------------------------------------


def load_suite(path: str) -> Suite:
    """Import a suite file: its module-level ``Suite``, or else all its ``Task`` objects as one suite.

    The suite may import the tools next to it (:func:`~toolslip.core._files.import_user_file`).
    """
    file = Path(path)
    module = import_user_file(path, "suite file")
    suites = [v for v in vars(module).values() if isinstance(v, Suite)]
    if len(suites) > 1:
        raise ConfigError(f"{path} defines {len(suites)} suites; keep one Suite per file")
    if suites:
        suite = suites[0]
    else:
        tasks = [v for v in vars(module).values() if isinstance(v, Task)]
        if not tasks:
            raise ConfigError(f"{path} defines no Suite and no Task; see docs/evals.md")
        suite = Suite(name=file.stem, tasks=tasks)
    suite.path = str(file.resolve())
    return suite
