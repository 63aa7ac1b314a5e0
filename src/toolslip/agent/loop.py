"""The agent loop: ask the model, run the slips it wrote, send the results back, until it stops asking.

The safety belts from the seed are all here: tools are offered on every step; the model's tool-call
message is appended before its results; results are paired by id and returned in call order; the run
ends when the model makes no call, or at a hard step limit with ``stop_reason == "max_steps"`` (never an
exception); every failure of a call becomes an error result the model can read and correct.

The loop knows no provider and no wire format: it talks to a :class:`~toolslip.core.model.Model`.
The module is one piece (about 465 lines) because code mode's seam (a program's calls sent back through
``_run_call``) sits in the one path for a call, and ``run``/``arun`` repeat the agent's options.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from ..code import PROGRAM_TOOL, CodeMode
from ..core.errors import ConfigError
from ..core.events import Event, ModelCalled, ModelResponded, RunFinished, ToolFinished, ToolStarted
from ..core.messages import Message, ModelResponse, Request, ServerTool, Settings, ToolCall, ToolResult
from ..core.model import CURRENT_RUN, Model
from ..core.result import DataT, RunResult, RunStopReason
from ..core.streaming import collect
from ._sync import run_sync
from .answers import Answer, OutputMode, OutputType, Verdict, choose_mode
from .calls import execute_call, not_executed, truncate_output
from .history import HistoryProcessor
from .hooks import Hook, RunContext, ToolAnswer
from .limits import Budget, Limits
from .tools import Tool, Toolbox, ToolLike, as_toolbox
from .toolsets import PrepareTools, with_sending_hooks

__all__ = ["Agent", "RunResult", "RunStopReason", "arun", "run"]

_MODEL_STOPS: dict[str, RunStopReason] = {
    "end_turn": "completed",
    "stop_sequence": "completed",
    "tool_use": "completed",
    "other": "completed",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "content_filter": "refusal",
}


@dataclass(kw_only=True, eq=False)
class Agent(Generic[DataT]):
    """A model, its tools and the loop's settings; ``run``/``arun`` may be called many times."""

    model: Model
    tools: Toolbox = field(default_factory=Toolbox)
    """A ``Toolbox``, or any iterable of tools and functions (made into one, as ``toolslip.run`` does)."""
    system: str | None = None
    max_steps: int = 8
    settings: Settings = field(default_factory=Settings)
    hooks: Sequence[Hook] = ()
    max_concurrency: int = 16
    """Cap on tool executions running at once, across all runs of this agent."""
    server_tools: Sequence[ServerTool] = ()
    """Tools the provider runs itself (``toolslip.server_tool``): declared on every step, never run here."""
    debug: bool = False
    """Check every request before sending it (``toolslip.check``); a broken history raises FormatError."""
    stream: bool | None = None
    """Ask the model to stream (text and tool-call events as they are written). ``None``: stream when the
    model can and the run has an event listener; ``False``: never."""
    limits: Limits | None = None
    """Budgets for each run (tokens, tool calls, dollars); a run's own ``limits=`` replaces them."""
    output_type: OutputType[DataT] | None = None
    """What the run must end in (a pydantic model, dataclass, TypedDict, ``list[...]``, a union, or a JSON
    Schema dict): ``RunResult.data`` holds it validated. ``None``: the answer is free text."""
    output_mode: OutputMode | None = None
    """How the value is asked for: ``native``, ``tool`` or ``prompted`` (see :mod:`toolslip.agent.answers`);
    ``None`` picks the model's default."""
    output_retries: int = 1
    """How many times an answer that does not fit goes back to the model before the run stops."""
    history_processors: Sequence[HistoryProcessor] = ()
    """Run over what each request sends, to fit the window (:mod:`toolslip.agent.history`)."""
    prepare_tools: PrepareTools | None = None
    """``fn(ctx, tools) -> tools``: the tools each step offers (:mod:`toolslip.agent.toolsets`)."""
    mode: Literal["tool", "code"] | CodeMode = "tool"
    """``"code"``: the model answers with a program that calls the tools, each call via the hooks (toolslip.code)."""
    _code: CodeMode | None = field(default=None, init=False, repr=False)
    _answer: Answer[DataT] | None = field(default=None, init=False, repr=False)
    _semaphore: asyncio.Semaphore | None = field(default=None, init=False, repr=False)
    _semaphore_loop: asyncio.AbstractEventLoop | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not callable(getattr(self.model, "complete", None)) or not isinstance(
            getattr(self.model, "name", None), str
        ):
            raise ConfigError(
                f"model must be a model string such as 'openai:gpt-4o-mini' or a toolslip Model (a name and "
                f"async complete(request)), got {type(self.model).__name__} {self.model!r:.60}"
            )
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {self.max_steps}")
        self.tools = as_toolbox(self.tools)  # a list, as pydantic-ai and toolslip.run take, failed mid-run
        self.hooks = with_sending_hooks(self.hooks, self.history_processors, self.prepare_tools, self.tools)
        if self.stream and not callable(getattr(self.model, "stream", None)):
            raise ConfigError(f"stream=True, but the model {self.model.name!r} has no stream() method")
        for hook in self.hooks:
            hook.check(self.tools)
        if self.limits is not None:
            self.limits.check(self.model.name)
        if self.mode != "tool":  # the program itself only reads: each call it makes is judged on its own
            self._code = CodeMode.of(self.mode, Tool.from_schema(PROGRAM_TOOL, "a program", {}, effects="read_only"))
        if self.output_type is not None:
            self._answer = Answer(self.output_type, choose_mode(self.model, self.output_mode))
            self._answer.tools(self.tools.specs())  # a tool named like the final-answer tool fails here

    async def arun(
        self,
        prompt: str | Sequence[Message],
        *,
        run_id: str | None = None,
        on_event: Callable[[Event], None] | None = None,
        history: RunResult | Sequence[Message] | None = None,
        limits: Limits | None = None,
        deps: Any = None,
    ) -> RunResult[DataT]:
        """Run until the model stops calling tools, the step limit is hit or a limit would be passed.

        ``history`` continues a conversation: the earlier run's result (or its messages), to which
        ``prompt`` is added as the next user message. ``limits`` replace the agent's for this run.
        ``deps`` are this run's dependencies (a user id, a database pool): tools, hooks and output
        validators read them from the run context (:mod:`toolslip.agent.context`); they are never journaled.
        """
        if limits is not None:
            limits.check(self.model.name)
        earlier = history.messages if isinstance(history, RunResult) else history
        ctx = RunContext(
            run_id=run_id or uuid.uuid4().hex,
            model_name=self.model.name,
            tools=self.tools,
            messages=self._initial_messages(prompt, earlier or ()),
            emit=on_event,
            deps=deps,
        )
        budget = Budget(limits or self.limits, self.model.name)
        reporting = CURRENT_RUN.set(ctx)
        try:
            return await self._loop(ctx, budget)
        except BaseException as exc:  # hooks close what they opened (trace spans) before it propagates
            for hook in self.hooks:
                await hook.on_error(ctx, exc)
            raise
        finally:
            CURRENT_RUN.reset(reporting)

    def run(self, prompt: str | Sequence[Message], **kwargs: object) -> RunResult[DataT]:
        """Synchronous :meth:`arun` for scripts without a running event loop.

        Calls from one thread share one event loop (see :mod:`toolslip.agent._sync`), so the model's HTTP
        connection is reused from one call to the next."""
        return run_sync(self.arun(prompt, **kwargs))  # type: ignore[arg-type]

    async def iter(
        self, prompt: str | Sequence[Message], *, run_id: str | None = None, deps: Any = None
    ) -> AsyncIterator[Event]:
        """The run as a stream of events, ending with :class:`~toolslip.core.events.RunFinished`."""
        queue: asyncio.Queue[Event | BaseException] = asyncio.Queue()
        task = asyncio.create_task(self.arun(prompt, run_id=run_id, on_event=queue.put_nowait, deps=deps))

        def forward_failure(t: asyncio.Task[RunResult]) -> None:
            if not t.cancelled() and (exc := t.exception()) is not None:
                queue.put_nowait(exc)

        task.add_done_callback(forward_failure)
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, RunFinished):
                    return
        finally:
            if not task.done():
                task.cancel()

    def _initial_messages(self, prompt: str | Sequence[Message], history: Sequence[Message]) -> list[Message]:
        messages = [*history, *([Message.user(prompt)] if isinstance(prompt, str) else prompt)]
        if self.system and not (messages and messages[0].role == "system"):
            messages.insert(0, Message.system(self.system))
        return self._answer.with_instructions(messages) if self._answer is not None else messages

    # --- the loop ---------------------------------------------------------------------------------

    async def _loop(self, ctx: RunContext, budget: Budget) -> RunResult[DataT]:
        response: ModelResponse | None = None
        stop: RunStopReason | str = "max_steps"
        calls_made = retries = 0
        verdict: Verdict | None = None
        while ctx.step < self.max_steps:
            ctx.step += 1
            answer = await self._ask(ctx, budget)
            if answer is None:  # the call would pass a limit: it is not made
                ctx.step -= 1
                stop = budget.reason or "forced"
                break
            response = answer
            ctx.messages.append(response.message)
            ctx.usage = ctx.usage + response.usage
            calls = response.message.tool_calls
            if response.stop_reason == "pause_turn":  # Anthropic: send the paused turn back as is
                continue
            if self._answer is not None and (verdict := self._answer.judge(response, ctx)) is not None:
                if verdict.ok or retries >= self.output_retries or ctx.step == self.max_steps:
                    stop = "completed" if verdict.ok else verdict.stop
                    if (closing := self._answer.closing(verdict, calls)) is not None:
                        ctx.messages.append(closing)
                    break
                retries += 1
                ctx.messages.append(await self._answer_feedback(ctx, verdict, calls))
                calls_made += len(calls) - 1 if calls else 0
                continue
            if not calls:
                stop = _MODEL_STOPS.get(response.stop_reason, "completed")
                break
            if ctx.step == self.max_steps:  # no step left to show results: answer, never execute blindly
                ctx.messages.append(Message.tool(not_executed(c, self.max_steps) for c in calls))
                break
            if over := budget.after_answer(ctx.usage) or budget.before_tools(calls_made, len(calls)):
                ctx.messages.append(Message.tool(not_executed(c, why=budget.why) for c in calls))
                stop = over
                break
            ctx.messages.append(Message.tool(await self._run_calls(ctx, calls)))
            calls_made += len(calls)
            if ctx.stop_reason is not None:
                stop = ctx.stop_reason
                break
        text = response.message.text if response is not None else ""
        answered = verdict is not None and verdict.ok and stop == "completed"
        result: RunResult[DataT] = RunResult(
            output=text or (verdict.text if answered and verdict is not None else ""),
            stop_reason=stop,
            steps=ctx.step,
            messages=ctx.messages,
            usage=ctx.usage,
            tool_calls=calls_made,
            run_id=ctx.run_id,
            cost=budget.cost(ctx.usage),
            data=verdict.value if answered and verdict is not None else None,
            output_error=verdict.error if verdict is not None and not verdict.ok else None,
        )
        for hook in self.hooks:
            await hook.on_finish(ctx, result)
        ctx.event(RunFinished(result=result))
        return result

    async def _answer_feedback(self, ctx: RunContext, verdict: Verdict, calls: Sequence[ToolCall]) -> Message:
        """The turn that sends an answer which did not fit back to the model: a user message, or, for a
        final-answer call, the turn's results (its other calls run, as on any turn) with the error in it."""
        assert self._answer is not None
        say = self._answer.feedback(verdict)
        if verdict.call is None:
            return Message.user(say)
        others = [c for c in calls if c is not verdict.call]
        ran = {r.call_id: r for r in (await self._run_calls(ctx, others) if others else [])}
        error = ToolResult(
            call_id=verdict.call.id, name=verdict.call.name, content=say, is_error=True, outcome="failed"
        )
        return Message.tool(error if c is verdict.call else ran[c.id] for c in calls)

    async def _ask(self, ctx: RunContext, budget: Budget) -> ModelResponse | None:
        """One model call (``None`` when it would pass a limit); tools are offered on every step so the
        model can always ask again."""
        answer = self._answer
        offered = self.tools.specs() if self._code is None else (self._code.spec(list(self.tools)),)
        request = Request(
            model="",
            messages=tuple(ctx.messages),
            tools=offered if answer is None else answer.tools(offered),
            settings=self.settings,
            server_tools=tuple(self.server_tools),
            output=answer.output if answer is not None and answer.mode == "native" else None,
        )
        for hook in self.hooks:
            request = await hook.prepare_request(ctx, request)
        if budget.before_call(ctx.usage, request) is not None:
            return None
        if self.debug:
            from ..formats.checker import check_request

            check_request(request, where=f"step {ctx.step}, ")
        listening = ctx.emit is not None  # events are built only for a listener: this is the hot path
        if listening:
            ctx.event(ModelCalled(step=ctx.step, messages=len(request.messages)))
        response = None
        for hook in self.hooks:
            if (response := await hook.before_model(ctx, request)) is not None:
                break
        replayed = response is not None
        if response is None:
            stream = getattr(self.model, "stream", None) if self.stream or (self.stream is None and listening) else None
            if stream is not None:
                response = await collect(stream(request), ctx.step, ctx.event, self.model.name)
            else:
                response = await self.model.complete(request)
        for hook in self.hooks:
            response = await hook.after_model(ctx, request, response)
        if listening:
            ctx.event(ModelResponded(step=ctx.step, response=response, replayed=replayed))
        return response

    async def _run_calls(self, ctx: RunContext, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """Run one turn's calls; results come back in call order whatever order they finish in.

        Read-only calls run concurrently; any other call is a barrier that runs alone, in the order the
        model wrote it, so two side effects never race and a read after a write sees the write.
        """
        if len(calls) == 1:  # the common turn: nothing to order
            return [await self._run_call(ctx, calls[0])]
        results: list[ToolResult] = []
        batch: list[ToolCall] = []
        for call in calls:
            tool = self.tools.get(call.name)  # the program tool is not there: it runs concurrently, being read-only
            if tool is None or tool.read_only or call.arguments is None:
                batch.append(call)
                continue
            results += await self._gather(ctx, batch)
            batch = []
            results += await self._gather(ctx, [call])
        return results + await self._gather(ctx, batch)

    async def _gather(self, ctx: RunContext, calls: Sequence[ToolCall]) -> list[ToolResult]:
        if len(calls) == 1:  # no gather, no task
            return [await self._run_call(ctx, calls[0])]
        return list(await asyncio.gather(*(self._run_call(ctx, c) for c in calls))) if calls else []

    async def _run_call(self, ctx: RunContext, call: ToolCall) -> ToolResult:
        tool = self._code.tool if self._code is not None and call.name == PROGRAM_TOOL else self.tools.get(call.name)
        if ctx.emit is not None:
            ctx.event(ToolStarted(step=ctx.step, call=call))
            started = time.perf_counter()
        answer: ToolAnswer | None = None
        for hook in self.hooks:
            if (answer := await hook.before_tool(ctx, call, tool)) is not None:
                break
        if answer is not None:
            result, note = answer.result, answer.note
        elif self._code is not None and tool is self._code.tool:  # each call the program makes comes back here
            result, note = await self._code.run(call, list(self.tools), lambda c: self._run_call(ctx, c), ctx.state), ""
        elif tool is not None and tool.inline:  # never yields to the loop, so it cannot overlap another call
            result, note = await execute_call(call, tool, self.tools, ctx), ""
        else:
            async with self._limit():
                result, note = await execute_call(call, tool, self.tools, ctx), ""
        for hook in self.hooks:
            result = await hook.after_tool(ctx, call, tool, result)
        # Truncate last, so hooks (the run journal) keep the full output while the model sees the cut.
        if tool is not None and tool.max_output_chars is not None:
            result = truncate_output(result, tool)
        if ctx.emit is not None:
            seconds = time.perf_counter() - started
            ctx.event(ToolFinished(step=ctx.step, call=call, result=result, seconds=seconds, note=note))
        return result

    def _limit(self) -> asyncio.Semaphore:
        """The agent-wide cap; a new one per event loop, since a semaphore binds to the loop it waits in."""
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._semaphore_loop is not loop:
            self._semaphore, self._semaphore_loop = asyncio.Semaphore(self.max_concurrency), loop
        return self._semaphore


# --- one-call entry points ----------------------------------------------------------------------

ModelLike: TypeAlias = Model | str


def make_agent(
    model: ModelLike,
    tools: Toolbox | Iterable[ToolLike | Toolbox] | None = None,
    *,
    system: str | None = None,
    max_steps: int = 8,
    settings: Settings | None = None,
    hooks: Sequence[Hook] = (),
    server_tools: Sequence[ServerTool] = (),
    output_type: OutputType[DataT] | None = None,
    output_mode: OutputMode | None = None,
    output_retries: int = 1,
    mode: Literal["tool", "code"] | CodeMode = "tool",
) -> Agent[DataT]:
    if isinstance(model, str):
        from ..providers import resolve_model

        model = resolve_model(model)
    return Agent[DataT](
        model=model,
        tools=as_toolbox(tools),
        system=system,
        max_steps=max_steps,
        settings=settings or Settings(),
        hooks=hooks,
        server_tools=server_tools,
        output_type=output_type,
        output_mode=output_mode,
        output_retries=output_retries,
        mode=mode,
    )


async def arun(
    model: ModelLike,
    prompt: str | Sequence[Message],
    tools: Toolbox | Iterable[ToolLike | Toolbox] | None = None,
    *,
    system: str | None = None,
    max_steps: int = 8,
    settings: Settings | None = None,
    hooks: Sequence[Hook] = (),
    server_tools: Sequence[ServerTool] = (),
    on_event: Callable[[Event], None] | None = None,
    output_type: OutputType[DataT] | None = None,
    output_mode: OutputMode | None = None,
    output_retries: int = 1,
    mode: Literal["tool", "code"] | CodeMode = "tool",
    deps: Any = None,
) -> RunResult[DataT]:
    """Run ``prompt`` with ``tools`` on ``model`` (a :class:`Model` or a string like ``openai:gpt-4o``).

    With ``output_type`` the run ends in a validated value, ``RunResult.data`` (see :class:`Agent`).
    ``deps`` reach the tools that ask for the run context (:mod:`toolslip.agent.context`).

    A model made from a string is closed after the run; its connections stay in the event loop's pool
    for the next call (see :mod:`toolslip.providers.http`). To run many prompts, a reused :class:`Agent`
    also saves resolving the string and building the tool list on every call.
    """
    agent: Agent[DataT] = make_agent(
        model,
        tools,
        system=system,
        max_steps=max_steps,
        settings=settings,
        hooks=hooks,
        server_tools=server_tools,
        output_type=output_type,
        output_mode=output_mode,
        output_retries=output_retries,
        mode=mode,
    )
    try:
        return await agent.arun(prompt, on_event=on_event, deps=deps)
    finally:
        close = getattr(agent.model, "aclose", None) if isinstance(model, str) else None
        if close is not None:
            await close()


def run(
    model: ModelLike,
    prompt: str | Sequence[Message],
    tools: Toolbox | Iterable[ToolLike | Toolbox] | None = None,
    **kwargs: object,
) -> RunResult[Any]:
    """Synchronous :func:`arun`; calls from one thread share one event loop and its pooled connections."""
    return run_sync(arun(model, prompt, tools, **kwargs))  # type: ignore[arg-type]
