"""The embedded model's window: tool results that would overflow it are cut to fit, with a note (no weights).

The count here is characters (one token per character), so every figure is exact; the real provider counts
the rendered prompt's tokens with the model's own tokenizer (tests/providers/test_local_steering.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolslip.messages import Message, ToolCall, ToolResult
from toolslip.providers.local_window import fit_window


def _chars(messages: Sequence[Message]) -> int:
    return sum(len(m.text) + sum(len(r.text) for r in m.tool_results) for m in messages)


def _conversation(*outputs: str) -> list[Message]:
    calls = [ToolCall(id=f"c{i}", name="read_log", arguments={"name": str(i)}) for i in range(len(outputs))]
    results = [ToolResult(call_id=f"c{i}", name="read_log", content=out) for i, out in enumerate(outputs)]
    return [Message.user("What does the log say?"), Message.assistant(calls=calls), Message.tool(results)]


def test_a_conversation_that_fits_comes_back_unchanged() -> None:
    messages = _conversation("short", "also short")
    assert fit_window(messages, _chars, room=1000) == messages


def test_a_huge_result_is_cut_to_fit_with_a_note_and_its_start_kept() -> None:
    huge = "".join(f"line {i}\n" for i in range(50_000))  # 538,890 characters
    messages = _conversation("small result", huge)
    fitted = fit_window(messages, _chars, room=8000)
    assert _chars(fitted) <= 8000
    small, cut = fitted[-1].tool_results
    assert small.text == "small result"  # the longest result is cut first, the short one is left alone
    assert cut.text.startswith(huge[:1000])
    assert "more characters not shown" in cut.text and "8000-token window" in cut.text
    assert messages[-1].tool_results[1].text == huge  # the caller's messages keep every character


def test_several_large_results_are_all_cut_until_the_prompt_fits() -> None:
    messages = _conversation("a" * 30_000, "b" * 20_000, "c" * 10_000)
    fitted = fit_window(messages, _chars, room=6000)
    assert _chars(fitted) <= 6000
    assert all("not shown" in r.text for r in fitted[-1].tool_results)


def test_with_nothing_left_to_cut_the_messages_come_back_for_the_caller_to_refuse() -> None:
    messages = [Message.user("x" * 10_000)]
    assert fit_window(messages, _chars, room=100) == messages


def _long_run(steps: int) -> list[Message]:
    """A run of ``steps`` exchanges whose results a history processor already cleared to placeholders."""
    messages = [Message.system("Read every page."), Message.user("Read the whole book, page by page.")]
    for n in range(steps):
        call = ToolCall(id=f"c{n}", name="read_page", arguments={"page": n})
        placeholder = f"[result of read_page cleared to save room: page {n}]"
        messages += [Message.assistant(calls=[call]), Message.tool([ToolResult(call_id=f"c{n}", content=placeholder)])]
    return messages


def test_past_the_last_cut_the_oldest_exchanges_leave_the_prompt_and_the_system_prompt_says_so() -> None:
    # clear_tool_results alone on the embedded model: at step 138 of 200 the cleared steps filled the window
    messages = _long_run(200)
    fitted = fit_window(messages, _chars, room=4000)
    assert _chars(fitted) <= 4000
    assert fitted[1] == messages[1]  # the question stays
    kept = [c.id for m in fitted for c in m.tool_calls]
    assert kept == [f"c{n}" for n in range(200 - len(kept), 200)] and len(kept) >= 2  # the newest, in order
    assert f"[{200 - len(kept)} earlier tool call(s) and their results are left out" in fitted[0].text
    assert fitted[0].text.startswith("Read every page.")
    for i, m in enumerate(fitted):  # every call still has its results right after it
        if m.tool_calls:
            assert [r.call_id for r in fitted[i + 1].tool_results] == [c.id for c in m.tool_calls]
    assert len(messages) == 402  # the caller's messages are untouched


def test_the_newest_exchange_stays_even_when_that_is_not_enough() -> None:
    messages = _long_run(1)
    assert fit_window(messages, _chars, room=10) == messages


def test_old_exchanges_leave_in_blocks_so_the_prompt_start_stays_the_same_for_many_steps() -> None:
    # A cut moving by one exchange each step changes the prompt's start each step, and llama.cpp reads the
    # whole window again; left out sixteen at a time, consecutive steps share their start.
    starts = []
    for steps in range(150, 182):
        fitted = fit_window(_long_run(steps), _chars, room=4000)
        assert _chars(fitted) <= 4000
        first = next(c.id for m in fitted for c in m.tool_calls)
        starts.append((fitted[0].text, first))
    assert len(set(starts)) <= 3  # 32 steps, at most three different prompt starts
    assert len(set(starts)) >= 2  # and the cut does move as the run grows
