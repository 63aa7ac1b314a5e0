"""Tools: data plus a callable.

A :class:`Tool` is what the model sees (name, description, JSON Schema of its arguments) plus what the
program runs (a sync or async function) plus what running it does to the world (its effects, see
:mod:`toolslip.core.effects`). ``@tool`` builds one from a typed function: the schema comes from the type
hints through pydantic, descriptions from the docstring, and the same pydantic model validates and
coerces the model's arguments before the function runs, so a wrong type becomes an error result that
names the field instead of an exception deep inside the function.

The schemas and validators themselves are made in :mod:`toolslip.agent.schemas`; pydantic and jsonschema
are imported on first use, so ``import toolslip`` stays cheap.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..core.effects import CONSERVATIVE, Effect, EffectsLike, is_read_only, is_side_effecting, parse_effects
from ..core.errors import ToolDefinitionError, ToolError
from ..core.messages import Text, ToolSpec
from ._exits import ExitCalled
from .context import RunContext
from .docstrings import parse_docstring
from .execution import Isolation, isolation_problem, run_tool_function
from .outputs import ToolOutput, field_names, field_values, serialize_output
from .schemas import Validator, arguments_model, clean_schema, jsonschema_validator, pydantic_validator

if TYPE_CHECKING:
    from ..quality.index import ToolIndex

__all__ = ["Tool", "ToolLike", "ToolOutput", "Toolbox", "as_toolbox", "serialize_output", "tool"]

_DECLARATION = frozenset({"name", "description", "parameters", "strict"})
_declarations = [0]
"""Bumped when any tool's declaration is set, so :meth:`Toolbox.specs` can keep its tuple until then."""


@dataclass(kw_only=True, eq=False)
class Tool:
    """A tool the model can call. Build one with :func:`tool` or :meth:`Tool.from_schema`."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    """JSON Schema (an ``object``) of the arguments."""
    fn: Callable[..., Any] | None = field(default=None, repr=False)
    """Called with the validated arguments as keywords; ``None`` for a declaration-only tool."""
    effects: frozenset[Effect] = CONSERVATIVE
    trusted_output: bool = False
    """True when the output cannot carry third-party text (computed from the user's own input)."""
    untrusted_fields: frozenset[str] = frozenset()
    """Keys of the (JSON) output whose values an outsider can write, at any depth (a channel's name, an
    email's subject): with ``trusted_output``, only those values are untrusted, not the whole result."""
    timeout: float | None = None
    """Seconds before the call is cancelled and the model gets a timeout error."""
    max_output_chars: int | None = None
    idempotency_key: Callable[[Mapping[str, Any]], str] | None = field(default=None, repr=False)
    """Maps arguments to a key: calls with equal keys are the same real-world action."""
    strict: bool | None = None
    validator: Validator | None = field(default=None, repr=False)
    """Checks and coerces arguments into keyword arguments; raises :class:`ArgumentError`."""
    isolate: Isolation = "thread"
    """Where a sync function runs: ``"thread"`` (a worker thread, abandoned if it must stop),
    ``"process"`` (a child process, killed on timeout or cancellation) or ``"none"`` (on the event loop:
    for short functions that never block, no thread hop); see :mod:`toolslip.agent.execution`."""
    dedup: bool | None = None
    """Answer a repeat of a successful call from its result (:class:`~toolslip.durable.dedup.Dedup`); ``None``:
    yes for side-effecting tools. ``False`` for tools where two identical calls mean two actions."""
    takes_context: bool = False
    """Whether ``fn``'s first parameter is the run context (:mod:`toolslip.agent.context`), passed before the
    model's arguments; ``@tool`` sees it in the annotation."""
    prepare: Callable[..., Any] | None = field(default=None, repr=False)
    """``prepare(ctx, tool) -> Tool | None`` (sync or async), asked before each step: offer the tool as is,
    changed (a narrower schema, another description) or not at all (:mod:`toolslip.agent.toolsets`)."""

    inline: bool = field(init=False, repr=False)
    """Whether a call runs right on the event loop (a plain ``def`` with ``isolate="none"``): it never
    yields, so the loop runs it without taking a concurrency slot. Kept up to date as ``fn`` and ``isolate``
    are set, since the loop asks on every call."""

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _DECLARATION:  # what the model is shown changed: every Toolbox builds its specs again
            _declarations[0] += 1
        elif name == "fn" or name == "isolate":
            fn, isolate = self.__dict__.get("fn"), self.__dict__.get("isolate")
            inline = isolate == "none" and fn is not None and not inspect.iscoroutinefunction(fn)
            object.__setattr__(self, "inline", inline)

    def __post_init__(self) -> None:
        # A timeout of 0 would fail every call; 0 output chars would send every result empty.
        if self.timeout is not None and not self.timeout > 0:
            raise ToolDefinitionError(
                f"tool {self.name!r}: timeout must be a number of seconds > 0, got {self.timeout}"
            )
        if self.max_output_chars is not None and self.max_output_chars < 1:
            raise ToolDefinitionError(
                f"tool {self.name!r}: max_output_chars must be at least 1, got {self.max_output_chars}"
            )
        if self.isolate not in ("none", "thread", "process"):
            raise ToolDefinitionError(
                f"tool {self.name!r}: isolate must be 'thread' or 'process' (or 'none': on the event loop), "
                f"got {self.isolate!r}"
            )
        if self.isolate == "none" and self.timeout is not None and not inspect.iscoroutinefunction(self.fn):
            raise ToolDefinitionError(
                f"tool {self.name!r}: a call with isolate='none' runs on the event loop, where nothing can stop "
                "it, so it cannot have a timeout; use isolate='thread' (or 'process') with timeout="
            )
        if self.isolate == "process" and self.fn is not None and (problem := isolation_problem(self.fn)):
            raise ToolDefinitionError(f"tool {self.name!r}: {problem}")

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        fn: Callable[..., Any] | None = None,
        *,
        effects: EffectsLike = None,
        trusted_output: bool = False,
        untrusted_fields: Iterable[str] = (),
        timeout: float | None = None,
    ) -> Tool:
        """A tool from a raw JSON Schema; arguments are checked with jsonschema (Draft 2020-12)."""
        if parameters.get("type", "object") != "object":
            raise ToolDefinitionError(f"tool {name!r}: parameters must be a JSON Schema of type 'object'")
        return cls(
            name=name,
            description=description,
            parameters=dict(parameters),
            fn=fn,
            effects=parse_effects(effects),
            trusted_output=trusted_output,
            untrusted_fields=field_names(untrusted_fields),
            timeout=timeout,
            validator=jsonschema_validator(parameters),
        )

    @classmethod
    def from_declaration(
        cls,
        declaration: Mapping[str, Any],
        fn: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        effects: EffectsLike = None,
        trusted_output: bool = False,
        timeout: float | None = None,
        max_output_chars: int | None = None,
        idempotency_key: Callable[[Mapping[str, Any]], str] | None = None,
        strict: bool | None = None,
        untrusted_fields: Iterable[str] = (),
        isolate: Isolation = "thread",
        dedup: bool | None = None,
    ) -> Tool:
        """A tool from a provider's declaration as it is, plus the function that runs it.

        ``declaration`` may be spelled as OpenAI Chat (``{"type": "function", "function": {...}}``), the
        Responses API (flat), Anthropic (``input_schema``) or legacy ``functions`` write it; the name,
        description, schema and ``strict`` come from it unless given here. The other options are
        ``@tool``'s. Arguments are checked against the schema (JSON Schema Draft 2020-12).
        """
        from ..core.errors import FormatError
        from ..formats import read_declaration

        try:
            _, spec = read_declaration(declaration, "declaration")
        except FormatError as exc:
            raise ToolDefinitionError(f"cannot make a tool from this declaration: {exc}") from None
        try:
            tool = cls.from_schema(
                name or spec.name,
                description if description is not None else spec.description,
                spec.parameters,
                fn,
                effects=effects,
                trusted_output=trusted_output,
                untrusted_fields=untrusted_fields,
                timeout=timeout,
            )
        except ValueError as exc:  # a bad effects value, as @tool reports it
            raise ToolDefinitionError(f"tool {name or spec.name!r}: {exc}") from None
        return dataclasses.replace(
            tool,
            max_output_chars=max_output_chars,
            idempotency_key=idempotency_key,
            strict=strict if strict is not None else spec.strict,
            isolate=isolate,
            dedup=dedup,
        )

    @property
    def spec(self) -> ToolSpec:
        """The declaration the model sees."""
        return ToolSpec(name=self.name, description=self.description, parameters=self.parameters, strict=self.strict)

    @property
    def read_only(self) -> bool:
        return is_read_only(self.effects)

    @property
    def side_effecting(self) -> bool:
        return is_side_effecting(self.effects)

    @property
    def deduplicated(self) -> bool:
        """Whether :class:`~toolslip.durable.dedup.Dedup` answers repeats of this tool's successful calls."""
        return self.side_effecting if self.dedup is None else self.dedup

    def untrusted_parts(self, output: ToolOutput) -> tuple[bool, tuple[str, ...]]:
        """Is any of ``output`` third-party text, and which pieces are when only some of it is.

        Pieces are spelled as they appear in the text (JSON-escaped). Output that is not JSON, or whose
        declared fields cannot be found, is untrusted whole: the safe reading of a declaration that
        does not fit.
        """
        if not self.trusted_output:
            return True, ()
        if not self.untrusted_fields:
            return False, ()
        text = output if isinstance(output, str) else "".join(p.text for p in output if isinstance(p, Text))
        try:
            value = json.loads(text)
        except ValueError:
            return True, ()
        pieces = tuple(dict.fromkeys(field_values(value, self.untrusted_fields)))
        return bool(pieces), pieces

    def validate(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check and coerce ``arguments``; raise :class:`ArgumentError` naming the wrong fields."""
        if self.validator is None:
            return dict(arguments)
        return self.validator(arguments)

    async def invoke(self, arguments: Mapping[str, Any], ctx: RunContext | None = None) -> ToolOutput:
        """Validate, run (as :attr:`isolate` says) and serialize the output; ``ctx`` is the context made
        for this call, passed first to a tool that asks for it."""
        if self.fn is None:
            raise ToolDefinitionError(f"tool {self.name!r} has no function to run")
        kwargs = self.validate(arguments)
        if self.takes_context and ctx is None:
            raise ToolError(f"{self.name} reads the run context, and was called outside a run, with none to give it")
        args = (ctx,) if self.takes_context else ()
        try:
            if not self.inline:
                return serialize_output(await run_tool_function(self.fn, kwargs, self.isolate, args))
            value = self.fn(*args, **kwargs)  # a short tool's hot path: called here, with no coroutine around it
            return serialize_output(await value if inspect.isawaitable(value) else value)
        except SystemExit as exc:
            # Caught here, inside the call's own task: asyncio re-raises a SystemExit that leaves a task out
            # of the event loop, and the whole command then exited with the tool's status, saying nothing.
            how = "os._exit" if isinstance(exc, ExitCalled) else "sys.exit"  # os._exit: see agent/_exits.py
            raise ToolError(
                f"{self.name} called {how}({exc.code!r}) instead of returning; nothing it returned was kept"
            ) from None


# --- @tool --------------------------------------------------------------------------------------


@overload
def tool(fn: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    effects: EffectsLike = None,
    trusted_output: bool = False,
    untrusted_fields: Iterable[str] = (),
    timeout: float | None = None,
    max_output_chars: int | None = None,
    idempotency_key: Callable[[Mapping[str, Any]], str] | None = None,
    strict: bool | None = None,
    isolate: Isolation = "thread",
    dedup: bool | None = None,
    prepare: Callable[..., Any] | None = None,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    effects: EffectsLike = None,
    trusted_output: bool = False,
    untrusted_fields: Iterable[str] = (),
    timeout: float | None = None,
    max_output_chars: int | None = None,
    idempotency_key: Callable[[Mapping[str, Any]], str] | None = None,
    strict: bool | None = None,
    isolate: Isolation = "thread",
    dedup: bool | None = None,
    prepare: Callable[..., Any] | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool`; usable bare (``@tool``) or with options.

    The description is the docstring's prose; parameter descriptions come from its Args / Parameters /
    ``:param:`` section or from ``Annotated[..., Field(description=...)]``. Parameters without a default
    are required. ``isolate="process"`` runs a sync function in a child process that a timeout or
    Ctrl-C kills, ``isolate="none"`` runs a short one on the event loop (no thread hop); ``dedup=False``
    lets identical calls run each time (two coffees are two orders); ``prepare`` decides per step whether and
    how the tool is offered.
    """

    def build(f: Callable[..., Any]) -> Tool:
        tool_name = _checked_function(f, name)
        doc_description, doc_params = parse_docstring(f.__doc__)
        model, wants_context = arguments_model(f, tool_name, doc_params)
        try:
            parsed_effects = parse_effects(effects)
        except ValueError as exc:
            raise ToolDefinitionError(f"tool {tool_name!r}: {exc}") from None
        if tool_name == "<lambda>":
            raise ToolDefinitionError("a lambda has no name the model can call; write tool(name='...')(lambda ...)")
        return Tool(
            name=tool_name,
            description=description if description is not None else doc_description,
            parameters=clean_schema(model.model_json_schema()),
            fn=f,
            effects=parsed_effects,
            trusted_output=trusted_output,
            untrusted_fields=field_names(untrusted_fields),
            timeout=timeout,
            max_output_chars=max_output_chars,
            idempotency_key=idempotency_key,
            strict=strict,
            validator=pydantic_validator(model, tool_name),
            isolate=isolate,
            dedup=dedup,
            takes_context=wants_context,
            prepare=prepare,
        )

    return build(fn) if fn is not None else build


def _checked_function(f: object, name: str | None) -> str:
    """The tool's name, once ``f`` is known to be a function the model can call by name."""
    if isinstance(f, str):
        raise ToolDefinitionError(
            f"tool() takes a function, got the string {f!r}; to name a tool write @tool(name=...)"
        )
    if isinstance(f, type) or not (inspect.isfunction(f) or inspect.ismethod(f) or inspect.isbuiltin(f)):
        raise ToolDefinitionError(f"tool() takes a function or a bound method, got {type(f).__name__} {f!r:.60}")
    tool_name = name or f.__name__
    first = next(iter(inspect.signature(f).parameters), None)
    if inspect.isfunction(f) and "." in f.__qualname__.replace(".<locals>.", "") and first in ("self", "cls"):
        raise ToolDefinitionError(
            f"tool {tool_name!r} is a method: the model cannot supply {first!r}; decorate the bound method "
            f"(tool(instance.{f.__name__})) or a plain function"
        )
    return tool_name


# --- Toolbox ------------------------------------------------------------------------------------

ToolLike = Tool | Callable[..., Any]


class Toolbox:
    """An ordered set of tools with unique names."""

    _specs: tuple[dict[str, Tool], int, tuple[ToolSpec, ...]] | None = None

    def __init__(self, tools: Iterable[ToolLike | Toolbox] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._index: tuple[dict[str, Tool], ToolIndex] | None = None  # and the tools it was built from
        for item in tools:
            self.add(item)

    def add(self, item: ToolLike | Toolbox) -> None:
        if isinstance(item, Toolbox):
            for t in item:
                self.add(t)
            return
        t = item if isinstance(item, Tool) else tool(item)
        if t.name in self._tools:
            raise ToolDefinitionError(f"two tools are named {t.name!r}; tool names must be unique")
        self._tools[t.name] = t
        self._index = self._specs = None

    def search(self, query: str, k: int = 5, *, floor: float = 0.0) -> list[Tool]:
        """The ``k`` tools that best match ``query`` (BM25, see :mod:`toolslip.quality.search`), best first; none
        scoring under ``floor``."""
        return [self._tools[hit.name] for hit in self.index.search(query, k, floor=floor)]

    @property
    def index(self) -> ToolIndex:
        """The search index over these tools, built on first use and again when the tools change."""
        if self._index is None or self._index[0] is not self._tools:  # an MCP server may replace its list
            from ..quality.index import ToolIndex

            self._index = (self._tools, ToolIndex(self._tools.values()))
        return self._index[1]

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def __getitem__(self, name: str) -> Tool:
        return self._tools[name]

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> tuple[ToolSpec, ...]:
        """The declarations, in order: the same tuple on every step until a tool is added or changed, so the
        wire formats encode it once (the loop offers the tools on every step)."""
        cached = self._specs
        if cached is None or cached[0] is not self._tools or cached[1] != _declarations[0]:
            cached = self._specs = (self._tools, _declarations[0], tuple(t.spec for t in self._tools.values()))
        return cached[2]


def as_toolbox(tools: Toolbox | Iterable[ToolLike | Toolbox] | None) -> Toolbox:
    """Accept a Toolbox, a list of tools/functions, or ``None``."""
    if isinstance(tools, Toolbox):
        return tools
    if isinstance(tools, Tool) or callable(tools):
        one = getattr(tools, "name", None) or getattr(tools, "__name__", "tool")
        raise ToolDefinitionError(f"tools must be a list of tools or a Toolbox, got one tool; write [{one}]")
    return Toolbox(tools or ())
