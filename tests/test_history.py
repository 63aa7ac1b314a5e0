"""History processors keep a long tool-heavy run inside an 8,192-token window, and every request stays valid.

The model here is a scripted one with a real window: it counts each request as OpenAI counts a chat
request (o200k tokens of every message, call and declaration, with the per-message framing) and refuses
one over 8,192 tokens with the error the provider gives. It also checks every request it is sent with
``toolslip check``'s own check in the two strictest formats, so a processor that split a call from its
result fails the run at that step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from toolslip import Agent, Message, ModelResponse, ProviderError, Request, Toolbox, ToolCall, ToolResult, Usage, tool
from toolslip.agent.history import (
    CLEARED,
    HistoryProcessor,
    Summarize,
    clear_tool_results,
    keep_last_turns,
    provider_context_management,
    trim_to_tokens,
)
from toolslip.core.errors import ConfigError
from toolslip.core.model import Model
from toolslip.core.result import RunResult
from toolslip.formats.checker import check_request
from toolslip.quality.tokens import request_tokens
from toolslip.testing import FunctionModel

WINDOW = 8192
STEPS = 200
WORDS = "the quarterly ledger shows revenue costs margins accounts receivable payable inventory".split()


@tool
def read_page(page: int) -> str:
    """Read one page of the report."""
    return f"page {page}: " + " ".join(WORDS[(page + i) % len(WORDS)] for i in range(600))  # ~4,000 characters


def wire_tokens(request: Request) -> int:
    """The request's input tokens as OpenAI counts a chat request (text, calls, framing, declarations)."""
    return request_tokens(request)


class WindowedModel:
    """Reads page after page for ``steps`` steps, then answers; refuses a request over its window."""

    name = "windowed"

    def __init__(self, steps: int = STEPS, window: int = WINDOW) -> None:
        self.steps, self.window, self.largest, self.asked = steps, window, 0, 0

    async def complete(self, request: Request) -> ModelResponse:
        self.asked += 1
        check_request(request, where=f"request {self.asked}, ")  # raises FormatError: the run fails here
        tokens = wire_tokens(request)
        self.largest = max(self.largest, tokens)
        if tokens > self.window:
            raise ProviderError(
                f"This model's maximum context length is {self.window} tokens. However, your messages resulted "
                f"in {tokens} tokens. (context_length_exceeded)",
                status=400,
            )
        done = sum(1 for m in request.messages if m.role == "assistant")  # a cut transcript has fewer
        page = self.asked
        if page > self.steps:
            message = Message.assistant(f"read {self.steps} pages; {done} turns were in my context")
        else:
            message = Message.assistant(calls=[ToolCall(id=f"c{page}", name="read_page", arguments={"page": page})])
        usage = Usage(input_tokens=tokens, output_tokens=10)
        return ModelResponse(message=message, stop_reason="tool_use" if page <= self.steps else "end_turn", usage=usage)


def run(
    processors: Sequence[HistoryProcessor], model: WindowedModel | None = None
) -> tuple[RunResult[None], WindowedModel]:
    model = model or WindowedModel()
    agent: Agent[None] = Agent(
        model=model, tools=Toolbox([read_page]), max_steps=STEPS + 1, history_processors=processors
    )
    return asyncio.run(agent.arun("Read every page of the report.")), model


def test_without_a_processor_the_window_is_exceeded() -> None:
    with pytest.raises(ProviderError, match="context_length_exceeded"):
        run(())


@pytest.mark.parametrize(
    "processor",
    [keep_last_turns(3), clear_tool_results(keep_last=2), trim_to_tokens(6000)],
    ids=["keep_last_turns", "clear_tool_results", "trim_to_tokens"],
)
def test_a_200_step_run_finishes_in_an_8k_window(processor: HistoryProcessor) -> None:
    result, model = run([processor])
    assert result.stop_reason == "completed"
    assert result.steps == STEPS + 1
    assert model.largest <= WINDOW
    # the run's own transcript keeps every result in full: processors change only what is sent
    results = [r for m in result.messages for r in m.tool_results]
    assert len(results) == STEPS and all(len(r.text) > 3000 for r in results)


def _first_kept_steps(processor: HistoryProcessor, steps: int) -> list[str]:
    """The id of the first call each request of a ``steps``-step run still holds."""
    seen: list[str] = []
    model = WindowedModel(steps=steps)
    complete = model.complete

    async def record(request: Request) -> ModelResponse:
        seen.append(
            next(c.id for m in request.messages for c in m.tool_calls) if request.messages[-1].role == "tool" else ""
        )
        return await complete(request)

    model.complete = record  # type: ignore[method-assign]
    result, _ = run([processor], model)
    assert result.stop_reason == "completed" and model.largest <= WINDOW
    return seen


def test_trimmed_steps_stay_out_so_one_request_begins_as_the_one_before_it() -> None:
    # a provider's prompt cache serves a request's start only if it is the last request's start
    firsts = _first_kept_steps(trim_to_tokens(6000, low=3000), steps=60)
    moves = sum(a != b for a, b in zip(firsts[1:], firsts[2:], strict=False))
    assert firsts[-1] != "c1"  # steps were left out
    assert 1 <= moves <= 15, firsts  # the cut moves about once per four steps past the budget
    # with no room below the budget the cut moves at every step past it, as it did before issue 38's fix
    every = _first_kept_steps(trim_to_tokens(6000, low=6000), steps=60)
    assert sum(a != b for a, b in zip(every[1:], every[2:], strict=False)) >= 40


def test_trim_to_tokens_refuses_a_low_mark_outside_its_budget() -> None:
    with pytest.raises(ConfigError, match="low between 1 and max_tokens"):
        trim_to_tokens(1000, low=2000)


def test_summarising_compaction_asks_the_summariser_a_few_times_not_every_step() -> None:
    asked: list[Request] = []

    def summarise(request: Request) -> str:
        asked.append(request)
        return f"Read pages up to {request.messages[-1].text.count('called read_page')} more; nothing else to note."

    processor = Summarize(FunctionModel(summarise), max_tokens=6000, keep_last=2)
    result, model = run([processor])
    assert result.stop_reason == "completed"
    assert model.largest <= WINDOW
    assert 5 <= len(asked) <= 60, len(asked)  # extended now and then, not rewritten at every step
    # the summariser's own request fits a small model's window too
    assert max(wire_tokens(r) for r in asked) < 4096


def test_cleared_results_keep_their_calls_and_say_what_was_there() -> None:
    seen: list[Request] = []
    model = WindowedModel(steps=6)
    complete = model.complete

    async def record(request: Request) -> ModelResponse:
        seen.append(request)
        return await complete(request)

    model.complete = record  # type: ignore[method-assign]
    run([clear_tool_results(keep_last=2)], model)
    last = seen[-1].messages
    results = [r for m in last for r in m.tool_results]
    calls = [c for m in last for c in m.tool_calls]
    assert [r.call_id for r in results] == [c.id for c in calls] == [f"c{i}" for i in range(1, 7)]
    cleared = [r.text for r in results[:-2]]
    assert cleared == [CLEARED.format(chars=len(read_page.fn(page=i))) for i in range(1, 5)]
    assert all(r.text.startswith("page") for r in results[-2:])


def test_keep_last_turns_keeps_the_question_and_says_what_was_left_out() -> None:
    messages = [Message.system("be brief"), Message.user("read it")]
    for i in range(5):
        call = ToolCall(id=f"c{i}", name="read_page", arguments={"page": i})
        messages += [Message.assistant(calls=[call])]
        messages += [Message.tool([read_page_result(call)])]
    kept = keep_last_turns(2)(messages)
    assert [m.role for m in kept] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert kept[1].text.startswith("read it") and "3 earlier steps were left out" in kept[1].text
    check_request(Request(model="m", messages=tuple(kept), tools=Toolbox([read_page]).specs()))


def read_page_result(call: ToolCall) -> ToolResult:
    return ToolResult(call_id=call.id, name=call.name, content="x" * 500)


def test_a_later_question_is_the_one_kept_in_a_chat() -> None:
    call = ToolCall(id="c1", name="read_page", arguments={"page": 1})
    messages = [
        Message.system("s"),
        Message.user("first question"),
        Message.assistant("first answer"),
        Message.user("second question"),
        Message.assistant(calls=[call]),
        Message.tool([read_page_result(call)]),
        Message.assistant("second answer"),
    ]
    kept = keep_last_turns(1)(messages)
    assert [m.role for m in kept] == ["system", "user", "assistant"]
    assert kept[1].text.startswith("second question")


def test_one_huge_output_is_cut_with_a_note_by_trim_to_tokens() -> None:
    @tool
    def dump() -> str:
        """Dump everything."""
        return "row " * 90_000  # ~350 KB

    def answer(request: Request) -> str | ToolCall:
        check_request(request)
        if wire_tokens(request) > WINDOW:
            raise ProviderError("context_length_exceeded", status=400)
        return "done" if request.messages[-1].role == "tool" else ToolCall(id="d", name="dump", arguments={})

    agent: Agent[None] = Agent(
        model=FunctionModel(answer), tools=Toolbox([dump]), history_processors=[trim_to_tokens(6000)]
    )
    result = agent.run("dump it")
    assert result.output == "done"
    assert len(result.messages[-2].tool_results[0].text) == 360_000  # the run keeps it whole


def test_provider_context_management_names_each_providers_field() -> None:
    anthropic = provider_context_management("anthropic:claude-sonnet-4-6", trigger_tokens=50_000, keep_tool_uses=2)
    (edit,) = anthropic["context_management"]["edits"]
    assert edit["type"] == "clear_tool_uses_20250919" and edit["keep"] == {"type": "tool_uses", "value": 2}
    assert provider_context_management("openai-responses:gpt-5") == {"truncation": "auto"}
    with pytest.raises(ConfigError, match="no context management of its own"):
        provider_context_management("gemini:gemini-2.5-flash")


@pytest.mark.slow
def test_the_embedded_model_writes_the_summary(local: Model) -> None:
    """Summarising compaction by the embedded model: one summary in a short run that would not fit without it."""
    model = WindowedModel(steps=5, window=3000)
    processor = Summarize(local, max_tokens=2500, keep_last=2, max_input_chars=3000, max_summary_tokens=120)
    seen: list[Request] = []
    complete = model.complete

    async def record(request: Request) -> ModelResponse:
        seen.append(request)
        return await complete(request)

    model.complete = record  # type: ignore[method-assign]
    result, _ = run([processor], model)
    assert result.stop_reason == "completed" and model.largest <= 3000
    question = seen[-1].messages[0].text
    summary = question.split("summarised to save context]\n", 1)[1]
    assert len(summary.split()) >= 3, question  # the embedded model wrote something, and it was sent


def test_a_copied_agent_keeps_one_history_hook() -> None:
    """``resume_paused`` copies the agent with ``dataclasses.replace``: its processors must not run twice."""
    import dataclasses

    from toolslip.agent.history import HistoryProcessors

    agent: Agent[None] = Agent(model=WindowedModel(), history_processors=[keep_last_turns(2)])
    copied = dataclasses.replace(agent, hooks=(*agent.hooks,))
    assert [type(h) for h in copied.hooks] == [HistoryProcessors]
