"""The run context: what a tool, a hook and an output validator know about the run they are part of.

A tool receives only the model's arguments, yet in a service the tool that reads "my orders" needs to know
*whose* orders, and a database pool to read them with. Capturing those in a closure per request works
until the tool runs in a child process, is defined once at import time, or must be tested alone. So the
caller hands them to the run (``agent.run(prompt, deps=...)``) and a tool that asks for them gets them::

    @tool(effects="read_only")
    def my_orders(ctx: RunContext[Shop], status: str) -> list[str]:
        return ctx.deps.orders(ctx.deps.user_id, status)

The first parameter, annotated ``RunContext`` (or ``RunContext[Deps]``, or the alias ``Context``), is
filled in by the loop and never appears in the schema the model sees. It is the same object the hooks
receive, so a hook reading ``ctx.deps`` sees what the tools see; a tool gets a copy made for its own call
(:meth:`RunContext.for_call`), which adds the call and its :attr:`~RunContext.idempotency_key`: the
key a payment API's ``Idempotency-Key`` header wants, the same for the same call of the same run however
often the run is resumed, since a resumed run replays the model's recorded calls, ids and all.

``deps`` belong to the caller, never to the journal: a journaled run resumed later gets them again from
whoever resumes it (a database pool cannot be written to disk, and a user id read back from disk is one
an attacker could have edited). Under ``isolate="process"`` the tool's copy is pickled into the child,
so there ``deps`` must be picklable; the tools, the hooks' scratch state and the event listener stay in
the parent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Generic, Protocol

import orjson
from typing_extensions import TypeVar

from ..core.messages import Message, ToolCall, Usage

if TYPE_CHECKING:
    from ..core.events import Event

__all__ = ["Context", "DepsT", "RunContext", "Tools", "takes_context"]


class Tools(Protocol):
    """What the context says of the run's tools (a :class:`~toolslip.agent.tools.Toolbox`). A protocol,
    because the tools module needs this one (to find a tool's context parameter) and a leaf that several
    layers read must import none of them."""

    @property
    def names(self) -> list[str]: ...
    @property
    def index(self) -> Any: ...
    def get(self, name: str) -> Any: ...
    def __getitem__(self, name: str) -> Any: ...
    def __contains__(self, name: object) -> bool: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...


DepsT = TypeVar("DepsT", default=Any)
"""The type of a run's dependencies (``RunContext[Shop]``); ``Any`` when nobody says."""


@dataclass(kw_only=True, eq=False)
class RunContext(Generic[DepsT]):
    """The state of one run, shared by the loop, its hooks and the tools that ask for it."""

    run_id: str
    model_name: str
    tools: Tools
    messages: list[Message]
    deps: DepsT = None  # type: ignore[assignment]  # a run without deps has None; its tools never ask
    """What the caller passed as ``run(..., deps=...)``: a user id, a database pool, an HTTP client."""
    step: int = 0
    usage: Usage = field(default_factory=Usage)
    state: dict[str, Any] = field(default_factory=dict)
    """Scratch space for hooks, keyed by the hook's own name."""
    stop_reason: str | None = None
    """Set by :meth:`stop` to end the run after the current turn."""
    emit: Callable[[Event], None] | None = None
    """Delivers events to the run's listener."""
    call: ToolCall | None = None
    """The call this copy was made for (:meth:`for_call`); ``None`` on the run's own context."""
    _run: RunContext[DepsT] | None = field(default=None, repr=False)
    """The run's own context, when this is a copy made for one call: :meth:`stop` must reach the run."""

    def stop(self, reason: str) -> None:
        """End the run after this turn with ``reason`` as its stop reason (e.g. ``"paused"``)."""
        (self._run or self).stop_reason = reason

    def event(self, event: Event) -> None:
        if self.emit is not None:
            self.emit(event)

    def for_call(self, call: ToolCall) -> RunContext[DepsT]:
        """The copy a tool receives: this step's view of the run, plus the call it is answering.

        A copy, because calls of one turn run concurrently and each must see its own call; it shares the
        run's transcript and scratch state, and its :meth:`stop` stops the run."""
        return replace(self, call=call, _run=self._run or self)

    @property
    def idempotency_key(self) -> str:
        """A stable key for this call as a real-world action: the same run, call id and arguments give the
        same key, so the outside system can refuse a second execution (a resumed run replays the model's
        recorded calls with their ids; a holder that lost its lease and woke inside the tool sends the key
        its successor sends)."""
        if self.call is None:
            raise RuntimeError("idempotency_key belongs to a call: read it from the context a tool receives")
        arguments = orjson.dumps(self.call.arguments, option=orjson.OPT_SORT_KEYS) if self.call.arguments else b""
        digest = hashlib.sha256(b"\0".join((self.run_id.encode(), self.call.id.encode(), arguments)))
        return digest.hexdigest()[:32]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled for a tool in a child process: what a tool reads crosses, what belongs to the parent's
        loop (the tools, hooks' state, the listener, the run it would stop) does not."""
        return (_rebuilt, (self.run_id, self.model_name, self.messages, self.deps, self.step, self.usage, self.call))


def _rebuilt(
    run_id: str, model_name: str, messages: list[Message], deps: Any, step: int, usage: Usage, call: ToolCall | None
) -> RunContext[Any]:
    ctx: RunContext[Any] = RunContext(run_id=run_id, model_name=model_name, tools=_NO_TOOLS, messages=messages)
    ctx.deps, ctx.step, ctx.usage, ctx.call = deps, step, usage, call
    return ctx


class _NoTools:
    """A child process's view of the run's tools: none (they run in the parent)."""

    names: list[str] = []
    index = None

    def get(self, name: str) -> Any:
        return None

    def __getitem__(self, name: str) -> Any:
        raise KeyError(name)

    def __contains__(self, name: object) -> bool:
        return False

    def __iter__(self) -> Iterator[Any]:
        return iter(())

    def __len__(self) -> int:
        return 0


_NO_TOOLS = _NoTools()

Context = RunContext
"""The same class under a shorter name: ``def tool(ctx: Context, ...)``."""


def takes_context(annotation: object) -> bool:
    """Whether a parameter's (resolved) annotation asks for the run context: ``RunContext``,
    ``RunContext[X]`` or ``Context``."""
    origin = getattr(annotation, "__origin__", annotation)
    return isinstance(origin, type) and issubclass(origin, RunContext)
