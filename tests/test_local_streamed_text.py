"""The embedded model's stream: what it streams is what it answers, whatever its first pass turns out to be.

The decoding itself is replaced by scripted passes (llama.cpp's part is covered by the SDK tests in
``test_server_streamed_text.py``); what is under test is the model's own rule for what may be streamed and how
an answer decoded after a repeated call goes on from text already streamed. Each pass's prompt is recorded.
"""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolslip.core.messages import Message, OutputSchema, Request, ToolCall, ToolResult, ToolSpec
from toolslip.core.streaming import ResponseDone, TextChunk
from toolslip.providers import local
from toolslip.providers.local_decode import Generated, Stopped

ADD = ToolSpec(name="add", description="Add two numbers.", parameters={"type": "object"})
CALL = ToolCall(id="c1", name="add", arguments={"a": 17, "b": 25})
AFTER_RESULT = (
    Message.user("What is 17 + 25?"),
    Message.assistant("", [CALL]),
    Message(role="tool", parts=(ToolResult(call_id="c1", name="add", content="42"),)),
)
IN_WORDS = (Message.user("What is seventeen plus twenty-five?"), *AFTER_RESULT[1:])
"""The same turn, the question giving no figure: its answer streams (see local_figures.computing)."""
REPEAT = '<tool_call>\n{"name": "add", "arguments": {"a": 17, "b": 25}}\n</tool_call>'


async def answer(
    monkeypatch: pytest.MonkeyPatch,
    passes: list[list[str]],
    *,
    calls: int = 0,
    output: OutputSchema | None = None,
    messages: tuple[Message, ...] = AFTER_RESULT,
) -> tuple[str, str, list[str]]:
    """The streamed text, the answer's text and the prompts of a request after a tool result, each pass
    of decoding writing the pieces given for it."""
    prompts: list[str] = []

    async def scripted(loaded: Any, prompt: str, options: Any, grammar: Any) -> AsyncIterator[str | Generated]:
        pieces = passes[len(prompts)]
        prompts.append(prompt)
        for piece in pieces:
            yield piece
        yield Generated(text="".join(pieces), finish="stop", prompt_tokens=10, completion_tokens=len(pieces))

    monkeypatch.setattr(local, "_pieces", scripted)
    template = SimpleNamespace(render=lambda messages, tools: f"PROMPT({len(messages)} messages)")
    model = local.LocalModel(path=Path("unused.gguf"), grammar=False)
    # the window check (providers/local_window.py) counts the prompt's tokens: one per character here
    llama = SimpleNamespace(n_ctx=lambda: 8192, tokenize=lambda text, **_: list(text))
    loaded = SimpleNamespace(template=template, llama=llama, lock=threading.Lock())
    monkeypatch.setattr(model, "load", lambda: loaded)
    streamed, final = "", None
    async for event in model.stream(Request(model="", messages=messages, tools=(ADD,), output=output)):
        if isinstance(event, TextChunk):
            streamed += event.text
        elif isinstance(event, ResponseDone):
            final = event.response
    assert final is not None and len(final.message.tool_calls) == calls
    return streamed, final.message.text, prompts


async def test_an_answer_after_a_repeated_call_goes_on_from_the_text_already_streamed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    passes = [["To use", " the ", REPEAT], [" add tool: 42."]]
    streamed, text, prompts = await answer(monkeypatch, passes, messages=IN_WORDS)
    assert streamed == text == "To use the add tool: 42."  # not "To use the 42." nor a bare "42."
    assert prompts[1].endswith("To use the")  # the second pass was asked to go on from what was said
    # to work on the question's own figures, the answer is held whole: nothing streamed, nothing to go on from
    streamed, text, prompts = await answer(monkeypatch, [["To use", " the ", REPEAT], ["It is 42."]])
    assert streamed == text == "It is 42." and prompts[1] == "PROMPT(3 messages)"


async def test_call_syntax_before_a_repeated_call_is_never_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    repeat = json.dumps({"name": "add", "arguments": {"a": 17, "b": 25}})
    streamed, text, prompts = await answer(monkeypatch, [["(", repeat], ["The sum is 42."]])
    assert streamed == text == "The sum is 42."
    assert prompts[1].endswith("messages)")


async def test_the_space_before_a_new_call_is_not_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    new_call = REPEAT.replace('"a": 17, "b": 25', '"a": 5, "b": 8')  # not answered yet: the turn is this call
    streamed, text, prompts = await answer(monkeypatch, [["Adding ", "now ", new_call]], calls=1)
    assert streamed == text == "Adding now" and len(prompts) == 1


async def test_a_cancelled_generation_leaves_no_pending_task_behind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A Ctrl-C'd chat turn printed "Task was destroyed but it is pending!" into the session (issue 36): the
    task waiting for the next piece was left pending when the generation was cancelled, and collected later."""

    def generate(llama: Any, prompt: str, options: Any, *, grammar: Any, cancel: Any, emit: Any) -> Generated:
        while not cancel.wait(0.01):
            emit("word ")
        raise Stopped

    monkeypatch.setattr(local, "generate", generate)
    aborter = SimpleNamespace(current=None, finished=lambda: None)
    loaded = SimpleNamespace(llama=None, lock=threading.Lock(), aborter=aborter)

    async def consume() -> None:
        async for _ in local._pieces(loaded, "prompt", {}, None):  # type: ignore[arg-type]
            pass

    reading = asyncio.ensure_future(consume())
    await asyncio.sleep(0.2)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    assert await asyncio.to_thread(loaded.lock.acquire, timeout=10)  # the worker thread saw the cancel and ended
    loaded.lock.release()
    await asyncio.sleep(0.05)
    gc.collect()
    assert "Task was destroyed but it is pending" not in caplog.text


async def test_a_program_in_code_mode_is_never_streamed_as_answer_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program is text that becomes a call: streamed, the screen showed it and then the run failed, as the
    answer (empty: the program is a call) did not begin with what was streamed."""
    from toolslip import Tool, tool
    from toolslip.code import PROGRAM_TOOL, CodeMode

    @tool(effects="read_only")
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    spec = CodeMode.of("code", Tool.from_schema(PROGRAM_TOOL, "a program", {})).spec([add])
    written = ["total = add(17, 25)\n", "print(total)\n", "```"]

    async def scripted(loaded: Any, prompt: str, options: Any, grammar: Any) -> AsyncIterator[str | Generated]:
        for piece in written:
            yield piece
        yield Generated(text="".join(written), finish="stop", prompt_tokens=10, completion_tokens=3)

    monkeypatch.setattr(local, "_pieces", scripted)
    template = SimpleNamespace(render=lambda messages, tools: "PROMPT")
    model = local.LocalModel(path=Path("unused.gguf"), grammar=False)
    llama = SimpleNamespace(n_ctx=lambda: 8192, tokenize=lambda text, **_: list(text))
    monkeypatch.setattr(model, "load", lambda: SimpleNamespace(template=template, llama=llama, lock=threading.Lock()))
    streamed, final = "", None
    async for event in model.stream(Request(model="", messages=(Message.user("What is 17 + 25?"),), tools=(spec,))):
        if isinstance(event, TextChunk):
            streamed += event.text
        elif isinstance(event, ResponseDone):
            final = event.response
    assert final is not None and streamed == final.message.text == ""
    [program] = final.message.tool_calls
    assert program.name == PROGRAM_TOOL and "add(17, 25)" in (program.arguments or {})["code"]


async def _first_turn(
    monkeypatch: pytest.MonkeyPatch,
    question: str,
    passes: list[tuple[list[str], str]],
    output: OutputSchema | None = None,
    messages: tuple[Message, ...] = (),
    tools: tuple[ToolSpec, ...] = (ADD,),
) -> tuple[str, Any, list[str]]:
    """The streamed text, the response and the prompts of a first turn (no call yet; or the turn after
    ``messages`` instead of ``question``), each pass of decoding writing the pieces given for it and ending for
    the reason given (``stop`` or ``length``)."""
    prompts: list[str] = []

    async def scripted(loaded: Any, prompt: str, options: Any, grammar: Any) -> AsyncIterator[str | Generated]:
        pieces, finish = passes[len(prompts)]
        prompts.append(prompt)
        for piece in pieces:
            yield piece
        yield Generated(text="".join(pieces), finish=finish, prompt_tokens=10, completion_tokens=len(pieces))

    monkeypatch.setattr(local, "_pieces", scripted)
    template = SimpleNamespace(render=lambda messages, tools: f"PROMPT({[m.text for m in messages]}, {len(tools)})")
    model = local.LocalModel(path=Path("unused.gguf"), grammar=False)
    llama = SimpleNamespace(n_ctx=lambda: 8192, tokenize=lambda text, **_: list(text))
    monkeypatch.setattr(model, "load", lambda: SimpleNamespace(template=template, llama=llama, lock=threading.Lock()))
    streamed, final = "", None
    request = Request(model="", messages=messages or (Message.user(question),), tools=tools, output=output)
    async for event in model.stream(request):
        if isinstance(event, TextChunk):
            streamed += event.text
        elif isinstance(event, ResponseDone):
            final = event.response
    return streamed, final, prompts


async def test_a_call_on_a_figure_nobody_gave_is_not_run_and_the_turn_is_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made_up = '{"name": "add", "arguments": {"a": 120, "b": 1}}'  # as the 0.5B model wrote fx(120, "USD")
    again = '{"name": "add", "arguments": {"a": 120, "b": 2}}'  # asked to write it again, it made 120 up again
    streamed, response, prompts = await _first_turn(
        monkeypatch,
        "What's the capital of France?",
        [([made_up], "stop"), ([again], "stop"), (["It is Paris."], "stop")],
    )
    assert streamed == response.message.text == "It is Paris." and response.message.tool_calls == []
    assert response.extra["dropped_calls"] == ({"name": "add", "arguments": {"a": 120, "b": 2}},)
    assert "A call on 120 would be a guess" in prompts[1]
    # the answer's prompt offers no tool and no longer asks for calls
    assert prompts[2].endswith(", 0)") and "Call a tool" not in prompts[2] and "Call a tool" in prompts[0]
    # a call on the question's own figures runs
    _, kept, _ = await _first_turn(
        monkeypatch, "What is 17 + 25?", [(['{"name": "add", "arguments": {"a": 17, "b": 25}}'], "stop")]
    )
    assert [c.arguments for c in kept.message.tool_calls] == [{"a": 17, "b": 25}]
    assert "dropped_calls" not in kept.extra


SUM = OutputSchema(name="Sum", schema={"type": "object", "properties": {"total": {"type": "number"}}})


async def test_a_typed_answers_call_on_a_made_up_figure_is_written_again_and_never_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    guess = '{"name": "add", "arguments": {"a": 17, "b": 0.62}}'  # as the 1.5B model wrote calc("(320+15000)*0.62")
    fixed = '{"name": "add", "arguments": {"a": 17, "b": 25}}'
    _, response, prompts = await _first_turn(
        monkeypatch, "What is 17 + 25?", [([guess], "stop"), ([fixed], "stop")], output=SUM
    )
    assert [c.arguments for c in response.message.tool_calls] == [{"a": 17, "b": 25}]
    assert "A call on 0.62 would be a guess" in prompts[1] and "0.62" not in prompts[0]
    assert "dropped_calls" not in response.extra and "asked_again" not in response.extra
    assert response.extra["rewritten_calls"] == ({"name": "add", "arguments": {"a": 17, "b": 0.62}},)
    # written on a made-up figure again, the call is dropped and the typed answer decoded instead
    again = '{"name": "add", "arguments": {"a": 17, "b": 0.7}}'
    _, dropped, prompts = await _first_turn(
        monkeypatch, "What is 17 + 25?", [([guess], "stop"), ([again], "stop"), (['{"total": 42}'], "stop")], SUM
    )
    assert dropped.message.text == '{"total": 42}' and dropped.message.tool_calls == []
    assert dropped.extra["dropped_calls"] == ({"name": "add", "arguments": {"a": 17, "b": 0.7}},)
    assert len(prompts) == 3 and prompts[2].endswith(", 0)")  # the answer's prompt offers no tool


async def test_a_typed_answer_asked_again_stands_only_if_it_makes_no_more_figures_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = '{"total": 42, "each": 21}'  # 21 is nobody's figure: asked again
    worse = '{"total": 42.5, "each": 21}'  # as the 1.5B model miscopied the trip's 3002.6 as 3002.65
    _, text, prompts = await answer(monkeypatch, [[first], [worse]], output=SUM)
    assert text == first and len(prompts) == 2
    other = '{"total": 42, "each": 20}'  # as many figures of its own: the answer asked again stands
    _, text, _ = await answer(monkeypatch, [[first], [other]], output=SUM)
    assert text == other


async def test_a_call_cut_short_by_the_output_limit_is_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    cut = '{"name": "add", "arguments": {"a": 17, "b": 2500000000000000000000000000000000'
    streamed, response, _ = await _first_turn(
        monkeypatch, "What is 17 + 25?", [([cut], "length"), (["I could not work it out."], "stop")]
    )
    assert streamed == response.message.text == "I could not work it out." and response.message.tool_calls == []
    assert response.extra["dropped_calls"][0]["name"] == "add"


async def test_a_call_on_a_made_up_figure_after_text_on_screen_is_not_run_and_the_answer_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sampled at 0.7, the 1.5B model wrote a sentence and then ``calc("320*6.73 + 15000*0.11")``, rates of its
    own: with text already on screen the call was neither written again nor dropped, and it ran."""
    made_up = '<tool_call>\n{"name": "add", "arguments": {"a": 120, "b": 1}}\n</tool_call>'
    streamed, response, prompts = await _first_turn(
        monkeypatch,
        "What's the capital of France?",
        [(["Let me think", " ", made_up], "stop"), ([" it over: Paris."], "stop")],
    )
    assert streamed == response.message.text == "Let me think it over: Paris." and response.message.tool_calls == []
    assert response.extra["dropped_calls"] == ({"name": "add", "arguments": {"a": 120, "b": 1}},)
    assert len(prompts) == 2 and prompts[1].endswith("Let me think")  # not written again: the answer goes on


async def test_a_call_that_takes_a_figure_a_call_already_took_is_written_again_with_its_tool_still_offered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reuse = '{"name": "add", "arguments": {"a": 17, "b": 3}}'  # as the 1.5B model wrote calc("320 + 15000")
    fresh = '{"name": "add", "arguments": {"a": 8, "b": 9}}'  # small counts: neither given nor made up
    _, response, prompts = await _first_turn(
        monkeypatch, "", [([reuse], "stop"), ([fresh], "stop")], messages=AFTER_RESULT
    )
    assert "17 went into a tool call already: use the result that call gave." in prompts[1]
    assert prompts[1].endswith(", 1)")  # add, the tool it went into, is still offered
    assert response.extra["rewritten_calls"] == ({"name": "add", "arguments": {"a": 17, "b": 3}},)
    assert [c.arguments for c in response.message.tool_calls] == [{"a": 8, "b": 9}]
    # taken again once asked again, it is dropped and the turn answered
    _, dropped, prompts = await _first_turn(
        monkeypatch, "", [([reuse], "stop"), ([reuse], "stop"), (["17 + 25 is 42."], "stop")], messages=AFTER_RESULT
    )
    assert dropped.message.text == "17 + 25 is 42." and dropped.message.tool_calls == []
    assert dropped.extra["dropped_calls"] == ({"name": "add", "arguments": {"a": 17, "b": 3}},)


async def test_a_text_answer_with_figures_of_its_own_while_the_question_waits_for_a_tool_must_become_a_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sampled at 0.7, the 1.5B model worked the seed's trip out in its head before any call ("320 × 7.31 =
    2369.60 元"), and asked again, did so again: an answer stood where a call was due."""
    right = '{"name": "add", "arguments": {"a": 17, "b": 25}}'
    streamed, response, prompts = await _first_turn(
        monkeypatch, "What is 17 + 25?", [(["It is 43."], "stop"), ([right], "stop")]
    )
    assert streamed == "" and [c.arguments for c in response.message.tool_calls] == [{"a": 17, "b": 25}]
    assert "An answer with 43 would be a guess" in prompts[1]
    # in its head again: the first answer stands, its figure marked, and no third pass is made
    _, again, prompts = await _first_turn(
        monkeypatch, "What is 17 + 25?", [(["It is 43."], "stop"), (["It is 44."], "stop")]
    )
    assert again.message.text.startswith("It is 43.") and "[not from a tool: 43" in again.message.text
    assert len(prompts) == 2 and again.message.tool_calls == []
    # with nothing left for a tool to take, an answer to a question with no figure streams up to the figure
    # nothing gave, and is marked
    streamed, after, prompts = await _first_turn(monkeypatch, "", [(["17 + 25 is ", "43."], "stop")], messages=IN_WORDS)
    assert after.message.text.startswith("17 + 25 is 43.\n\n[not from a tool: 43") and len(prompts) == 1
    assert streamed == after.message.text
    # one to work on the question's figures is held whole and asked again, nothing of it shown
    passes = [(["17 + 25 is ", "43."], "stop"), (["17 + 25 is 42."], "stop")]
    streamed, after, prompts = await _first_turn(monkeypatch, "", passes, messages=AFTER_RESULT)
    assert streamed == after.message.text == "17 + 25 is 42." and after.extra["asked_again"] == "17 + 25 is 43."
    assert "An answer with 43 would be a guess" in prompts[1]


async def test_an_answer_after_a_tool_that_failed_is_held_and_one_with_data_of_its_own_is_asked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "成都今天多少度？" with no data for 成都: the 1.5B model answered "... is 22 degrees Celsius", and the text
    before 22 was already on screen, so the answer could only be marked."""
    failed = (
        Message.user("What is 17 + 25?"),
        Message.assistant("", [CALL]),
        Message(role="tool", parts=(ToolResult(call_id="c1", name="add", content="error: add is down"),)),
    )
    streamed, response, prompts = await _first_turn(
        monkeypatch,
        "",
        [(["The sum ", "is 43."], "stop"), (["I could not add them: the tool failed."], "stop")],
        messages=failed,
    )
    assert streamed == response.message.text == "I could not add them: the tool failed."
    assert "Tell me you could not find it." in prompts[1] and "Call the tool" not in prompts[1]


async def test_of_the_calls_written_into_one_answer_only_those_on_guesses_and_copies_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sampled at 0.7, the 1.5B model wrote the seed's trip as prose with ``fx(320, "USD")`` and ``fx(15000, "JPY")``
    three times each and ``calc("571.30 / 4")`` among them: every call was dropped, the right ones too."""
    right = '{"name": "add", "arguments": {"a": 17, "b": 25}}'
    guess = '{"name": "add", "arguments": {"a": 571.3, "b": 4}}'
    mixed = f"So 17 + 25 makes 43.\n{right}\n{right}\n{guess}"
    _, response, prompts = await _first_turn(monkeypatch, "What is 17 + 25?", [([mixed], "stop"), ([mixed], "stop")])
    assert [c.arguments for c in response.message.tool_calls] == [{"a": 17, "b": 25}]
    assert [c["arguments"] for c in response.extra["dropped_calls"]] == [{"a": 17, "b": 25}, {"a": 571.3, "b": 4}]
    assert "A call on 571.3 would be a guess" in prompts[1] and len(prompts) == 2
    assert response.message.text == "So 17 + 25 makes 43."  # text beside a call is the turn's, not the answer


async def test_the_answer_after_a_repeated_call_whose_results_all_failed_is_told_the_tools_found_no_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The 1.5B model called the weather tool again for 成都 after its error, and the answer decoded instead said
    "22 degrees Celsius" (10 °C for Lhasa): told the tools found no data, it said so."""
    failed = (
        Message.user("What is 17 + 25?"),
        Message.assistant("", [CALL]),
        Message(role="tool", parts=(ToolResult(call_id="c1", name="add", content="error: add is down"),)),
    )
    _, response, prompts = await _first_turn(
        monkeypatch, "", [([REPEAT], "stop"), (["The add tool found no data."], "stop")], messages=failed
    )
    assert response.message.text == "The add tool found no data." and response.message.tool_calls == []
    assert "The tools had no data for this question. Tell me you could not find it." in prompts[1]
    _, _, prompts = await _first_turn(monkeypatch, "", [([REPEAT], "stop"), (["42."], "stop")], messages=AFTER_RESULT)
    assert "had no data" not in prompts[1]  # a result that answered: the answer is asked for as before


async def test_the_lines_said_after_results_that_all_failed_are_taken_out_of_an_answer_that_says_them_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked "杭州现在多少度？我该穿外套吗？" with no data for 杭州, the 1.5B model answered "The tools did not have
    data for this question. Tell me you could not find it. Now answer my question (杭州现在多少度？我该穿外套吗？)
    using the tool results above." (greedy, a clean clone): two of its sentences were the lines said to it."""
    failed = (
        Message.user("What is 17 + 25?"),
        Message.assistant("", [CALL]),
        Message(role="tool", parts=(ToolResult(call_id="c1", name="add", content="error: add is down"),)),
    )
    echo = [
        "The add tool had no data. Tell me you could not find it. ",
        "Now answer my question (What is 17 + 25?) ",
        "using the tool results above.",
    ]
    streamed, response, _ = await _first_turn(monkeypatch, "", [([REPEAT], "stop"), (echo, "stop")], messages=failed)
    assert response.message.text == "The add tool had no data."
    assert streamed == response.message.text  # held whole: nothing of the lines was on screen
    # nothing but the lines: nothing else to show, so the answer stands as it is
    only = ["Tell me you could not find it."]
    _, response, _ = await _first_turn(monkeypatch, "", [([REPEAT], "stop"), (only, "stop")], messages=failed)
    assert response.message.text == "Tell me you could not find it."


async def test_a_call_due_that_is_written_on_a_guess_is_written_once_more_without_its_tool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked again after an answer worked out in its head, the 1.5B model called ``calc("15000 * 0.11")``, a rate
    of its own, where ``fx`` gave the rate: the call was dropped and the answer decoded from its head again."""
    mul = ToolSpec(name="mul", description="Multiply two numbers.", parameters={"type": "object"})
    guess = '{"name": "add", "arguments": {"a": 17, "b": 0.5}}'
    right = '{"name": "mul", "arguments": {"a": 17, "b": 25}}'
    passes = [(["It is 43."], "stop"), ([guess], "stop"), ([right], "stop")]
    _, response, prompts = await _first_turn(monkeypatch, "What is 17 + 25?", passes, tools=(ADD, mul))
    assert [(c.name, c.arguments) for c in response.message.tool_calls] == [("mul", {"a": 17, "b": 25})]
    assert len(prompts) == 3 and "dropped_calls" not in response.extra
    assert response.usage.output_tokens == 3  # every pass counted: one piece each


async def test_an_answer_asked_again_that_gives_fewer_of_the_results_does_not_replace_the_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After the trip's four right calls, the 1.5B model (sampled) explained with rates of its own beside 3002.6 and
    750.65; asked again, it wrote "I apologize for the confusion ... not designed to calculate the cost per person"."""
    passes = [(["It is 42, or 45.5 with tax."], "stop"), (["I apologize, the tool cannot do this."], "stop")]
    _, response, prompts = await _first_turn(monkeypatch, "", passes, messages=AFTER_RESULT)
    assert len(prompts) == 2 and response.message.text.startswith(
        "It is 42, or 45.5 with tax.\n\n[not from a tool: 45.5"
    )
    # the question is quoted after the results once nothing waits for a tool: the answer is due
    assert "Now answer my question (What is 17 + 25?) using the tool results above." in prompts[0]
