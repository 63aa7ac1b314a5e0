"""``useChat``'s UI messages as the neutral transcript: earlier tool calls and results survive a follow-up
turn, paired by id, and a malformed part is a one-sentence 400 from ``POST /api/chat``. The part shapes are
those of the ``ai`` package the Node tests install (7.0.185, ``UIMessagePart``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp
import pytest

from toolslip import Agent, Approval, Dedup, Journal, Toolbox, tool
from toolslip.console import Console, serve
from toolslip.console.uimessages import BadUIMessages, ui_transcript
from toolslip.core.messages import File, Image, Message, Reasoning, Text, ToolCall, ToolResult
from toolslip.durable.stores import open_store
from toolslip.testing import ScriptedModel

PAY = {"to": "bob", "amount": 20}
HISTORY: list[dict[str, Any]] = [
    {"id": "u1", "role": "system", "parts": [{"type": "text", "text": "Be brief."}]},
    {
        "id": "u2",
        "role": "user",
        "parts": [
            {"type": "text", "text": "pay bob"},
            {"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,iVBORw0K"},
            {"type": "file", "mediaType": "application/pdf", "url": "https://x.test/a.pdf", "filename": "a.pdf"},
        ],
    },
    {
        "id": "a1",
        "role": "assistant",
        "parts": [
            {"type": "step-start"},
            {"type": "text", "text": "Paying.", "state": "done"},
            {"type": "tool-pay", "toolCallId": "call_1", "state": "output-available", "input": PAY,
             "output": "paid 20 EUR to bob", "approval": {"id": "k1", "approved": True}},
            {"type": "dynamic-tool", "toolName": "rate", "toolCallId": "call_2", "state": "output-error",
             "input": {"currency": "JPY"}, "errorText": "rate service down"},
            {"type": "step-start"},
            {"type": "tool-pay", "toolCallId": "call_3", "state": "output-denied", "input": PAY,
             "approval": {"id": "k3", "approved": False, "reason": "not this month"}},
            {"type": "tool-lookup", "toolCallId": "call_4", "state": "output-available", "input": {"q": "x"},
             "output": {"rows": [1, 2]}},
            {"type": "step-start"},
            {"type": "reasoning", "text": "All done.", "state": "done"},
            {"type": "text", "text": "the tool said: paid 20 EUR to bob", "state": "done"},
            {"type": "source-url", "sourceId": "s1", "url": "https://x.test"},
            {"type": "data-status", "data": {"progress": 1}},
        ],
    },
    {"id": "u3", "role": "user", "parts": [{"type": "text", "text": "what did you pay?"}]},
]  # fmt: skip


def test_earlier_tool_parts_become_calls_and_results_paired_by_id_one_step_at_a_time() -> None:
    assert ui_transcript(HISTORY) == [
        Message.system("Be brief."),
        Message(
            role="user",
            parts=(
                Text(text="pay bob"),
                Image(media_type="image/png", data="iVBORw0K"),
                File(media_type="application/pdf", url="https://x.test/a.pdf", name="a.pdf"),
            ),
        ),
        Message.assistant("Paying.", [
            ToolCall(id="call_1", name="pay", arguments=PAY),
            ToolCall(id="call_2", name="rate", arguments={"currency": "JPY"}),
        ]),
        Message.tool([
            ToolResult(call_id="call_1", name="pay", content="paid 20 EUR to bob"),
            ToolResult(call_id="call_2", name="rate", content="rate service down", is_error=True),
        ]),
        Message.assistant("", [
            ToolCall(id="call_3", name="pay", arguments=PAY),
            ToolCall(id="call_4", name="lookup", arguments={"q": "x"}),
        ]),
        Message.tool([
            ToolResult(call_id="call_3", name="pay", is_error=True,
                       content="The user denied this call: not this month"),
            ToolResult(call_id="call_4", name="lookup", content='{"rows":[1,2]}'),
        ]),
        Message(role="assistant", parts=(Reasoning(text="All done."), Text(text="the tool said: paid 20 EUR to bob"))),
        Message.user("what did you pay?"),
    ]  # fmt: skip


def test_a_call_whose_approval_went_unanswered_is_answered_not_run_so_no_call_is_left_unpaired() -> None:
    asked = {
        "type": "tool-pay",
        "toolCallId": "c9",
        "state": "approval-requested",
        "input": PAY,
        "approval": {"id": "k"},
    }
    streaming = {"type": "tool-pay", "toolCallId": "c10", "state": "input-streaming", "input": {"to": "b"}}
    messages = [
        {"role": "assistant", "parts": [asked, streaming]},
        {"role": "user", "parts": [{"type": "text", "text": "no"}]},
    ]
    call, results, _ = ui_transcript(messages)
    assert call.tool_calls == [ToolCall(id="c9", name="pay", arguments=PAY)]  # no half-written call
    [result] = results.tool_results
    assert result.call_id == "c9" and result.is_error and result.outcome == "not_executed"


CANNOT = "which a user message cannot carry"
BAD = [
    ({"role": "user", "parts": "hi"}, "message 0 must be an object with a list of parts"),
    ({"role": "tool", "parts": []}, "message 0 has role 'tool'; a UI message is from 'user', 'assistant' or 'system'"),
    ({"role": "user", "parts": ["hi"]}, "part 0 of message 0 must be an object with a string 'type'"),
    ({"role": "user", "parts": [{"type": "text"}]}, "part 0 of message 0 (text) needs a string 'text'"),
    ({"role": "user", "parts": [{"type": "tool-pay"}]}, f"part 0 of message 0 has type 'tool-pay', {CANNOT}"),
    ({"role": "user", "parts": [{"type": "widget"}]}, f"part 0 of message 0 has type 'widget', {CANNOT}"),
    ({"role": "assistant", "parts": [{"type": "tool-pay", "state": "output-available", "input": {}}]},
     "part 0 of message 0 (tool-pay) needs a tool name and a string 'toolCallId'"),
    ({"role": "assistant", "parts": [{"type": "tool-pay", "toolCallId": "c", "state": "input-available", "input": 1}]},
     "part 0 of message 0 (tool-pay) needs its 'input' as a JSON object"),
    ({"role": "assistant", "parts": [{"type": "tool-pay", "toolCallId": "c", "state": "done", "input": {}}]},
     "part 0 of message 0 (tool-pay) has an unknown state 'done'"),
    ({"role": "assistant", "parts": [{"type": "tool-pay", "toolCallId": "c", "state": "output-error", "input": {}}]},
     "part 0 of message 0 (tool-pay) needs a string 'errorText'"),
    ({"role": "user", "parts": [{"type": "file", "mediaType": "image/png", "url": "data:image/png;base64,@@"}]},
     "part 0 of message 0 (file) has a data: URL whose base64 is broken"),
]  # fmt: skip


@pytest.mark.parametrize(("message", "says"), BAD)
def test_a_malformed_message_or_part_is_refused_in_one_sentence(message: dict[str, Any], says: str) -> None:
    with pytest.raises(BadUIMessages) as refused:
        ui_transcript([message])
    assert str(refused.value) == says


@tool(effects="side_effect")
def pay(to: str, amount: int) -> str:
    """Pay someone."""
    return f"paid {amount} to {to}"


async def test_the_chat_endpoint_answers_a_malformed_part_with_a_400_naming_it(tmp_path: Path) -> None:
    location = str(tmp_path / "runs.sqlite")
    journal = Journal(location)
    agent = Agent(model=ScriptedModel(["never asked"]), tools=Toolbox([pay]), hooks=journal.wrap(Dedup(), Approval()))
    console = Console(store=open_store(location), token="t", agent=agent, journal=journal)
    broken = [*HISTORY[:2], {"role": "assistant", "parts": [{"type": "tool-pay", "toolCallId": "c", "state": "?"}]}]
    async with serve(console) as url, aiohttp.ClientSession(headers={"Authorization": "Bearer t"}) as s:
        async with s.post(f"{url}/api/chat", json={"id": "chat", "messages": broken}) as r:
            assert r.status == 400
            assert await r.json() == {"error": "part 0 of message 2 (tool-pay) has an unknown state '?'"}
