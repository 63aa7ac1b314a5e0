"""toolslip.check finds each classic mistake, repairs what is safe, and passes everything the loop produces."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolslip
from toolslip import Agent, Message, Request, Toolbox, tool
from toolslip.checker import CheckHook, check, detect_format
from toolslip.errors import FormatError
from toolslip.formats import FORMATS, get_format
from toolslip.formats.openai_functions import request_to_wire as legacy_request
from toolslip.testing import ScriptedModel, Turn, call, raw_call

FIXTURES = Path(__file__).parent / "fixtures"


def codes(report: toolslip.CheckReport) -> list[tuple[int | None, str]]:
    return [(p.index, p.code) for p in report.problems]


# --- seeded-bad transcripts: every mistake is found where it is -----------------------------------

CHAT_BAD: dict[str, Any] = {
    "model": "m",
    "tools": [
        {"type": "function", "function": {"name": "fx", "input_schema": {"type": "object"}}},
        {"type": "function", "name": "calc", "parameters": {"type": "object"}},
        {"type": "function", "function": {"name": "math.sum", "parameters": {"type": "object"}}},
    ],
    "messages": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "fx", "arguments": {"x": 1}}},
                {"id": "b", "type": "function", "function": {"name": "fx", "arguments": "{}"}},
                {"id": "c", "type": "function", "function": {"name": "fx", "arguments": "{}"}},
                {"id": "d", "type": "function", "function": {"name": "fx", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": "B"},
        {"role": "tool", "tool_call_id": "a", "content": "A"},
        {"role": "tool", "tool_call_id": "ghost", "content": "?"},
        {"role": "user", "content": "next"},
        {"role": "tool", "tool_call_id": "d", "content": "late"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "fx", "arguments": "{}"}},
                {"id": "", "type": "function", "function": {"name": "fx", "arguments": "{}"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        {"role": "function", "name": "fx", "content": "legacy"},
    ],
}

ANTHROPIC_BAD: dict[str, Any] = {
    "model": "m",
    "max_tokens": 100,
    "system": "Be exact.",
    "messages": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "fx", "input": '{"x": 1}'},
                {"type": "tool_use", "id": "t2", "name": "fx", "input": "not json"},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "here:"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "2"},
                {"type": "tool_result", "tool_use_id": "t1", "content": "1"},
            ],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t3", "name": "fx", "input": {}}]},
        {"role": "tool", "tool_call_id": "t3", "content": "3"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t4", "name": "fx", "input": {}}]},
        {"role": "user", "content": "what now?"},
    ],
}
ANTHROPIC_TOOLS = [{"name": "fx", "parameters": {"type": "object"}}]

LEGACY_BAD: dict[str, Any] = {
    "model": "m",
    "functions": [{"name": "fx", "parameters": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "hi"},
        {"role": "function", "name": "fx", "content": "before any call"},
        {"role": "assistant", "content": None, "function_call": {"name": "fx", "arguments": {"a": 1}}},
        {"role": "user", "content": "?"},
        {"role": "tool", "tool_call_id": "x", "content": "wrong role"},
    ],
}

RESPONSES_BAD: dict[str, Any] = {
    "model": "m",
    "input": [
        {"role": "user", "content": "hi"},
        {"type": "function_call", "call_id": "c1", "name": "fx", "arguments": "{}"},
        {"type": "function_call", "call_id": "c1", "name": "fx", "arguments": {"x": 1}},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "function_call_output", "call_id": "c1", "output": "1"},
        {"type": "function_call_output", "call_id": "zz", "output": "?"},
        {"type": "message", "role": "tool", "content": "no such role"},
    ],
}


def test_openai_chat_mistakes_are_each_found() -> None:
    report = check(CHAT_BAD)
    assert report.format == "openai-chat"
    assert codes(report) == [
        (None, "schema_key"),  # input_schema in an OpenAI declaration
        (None, "declaration_shape"),  # a Responses-style flat declaration
        (None, "bad_name"),  # math.sum
        (1, "arguments_type"),  # arguments sent as an object
        (1, "missing_result"),  # c
        (2, "out_of_order"),  # b before a
        (4, "orphan_result"),  # ghost
        (6, "not_adjacent"),  # d answered after a user message
        (7, "duplicate_id"),  # a again
        (7, "missing_id"),
        (8, "wrong_role"),  # Anthropic tool_result blocks
        (9, "wrong_role"),  # a legacy function result
    ]
    fix = next(p for p in report.problems if p.code == "missing_result")
    assert (
        str(fix)
        == "messages[1].tool_calls[2]: call 'c' has no result. Fix: add an is_error result saying \"not executed\""
    )


def test_anthropic_mistakes_are_each_found() -> None:
    bad = {**ANTHROPIC_BAD, "tools": ANTHROPIC_TOOLS}
    assert codes(check(bad)) == [
        (None, "schema_key"),  # parameters instead of input_schema
        (1, "arguments_type"),  # input as a JSON string (fixable)
        (1, "arguments_type"),  # input as text that is not JSON
        (2, "results_first"),  # text before tool_result blocks
        (2, "out_of_order"),
        (4, "wrong_role"),  # role "tool"
        (5, "missing_result"),  # t4, a user message instead
    ]
    assert (None, "tools_dropped") in codes(check(ANTHROPIC_BAD))  # a follow-up without tools


def test_legacy_and_responses_mistakes_are_each_found() -> None:
    assert codes(check(LEGACY_BAD)) == [
        (1, "orphan_result"),  # a function result before any call of fx
        (2, "arguments_type"),
        (2, "missing_result"),
        (4, "wrong_role"),  # a role "tool" message
    ]
    assert codes(check(RESPONSES_BAD)) == [  # no tools: fine for OpenAI, which takes such a history
        (2, "arguments_type"),
        (2, "duplicate_id"),  # c1 twice; the hosted web_search_call is not an unanswered call
        (5, "orphan_result"),
        (6, "wrong_role"),
    ]


def without(body: dict[str, Any], key: str, *drop: int) -> dict[str, Any]:
    return {**body, key: [m for i, m in enumerate(body[key]) if i not in drop]}


# The same transcripts minus what no format module can read (and so no repair can rewrite).
READABLE = {
    "openai-chat": without(CHAT_BAD, "messages", 9),
    "anthropic": {
        **ANTHROPIC_BAD,
        "tools": ANTHROPIC_TOOLS,
        "messages": [
            *ANTHROPIC_BAD["messages"][:1],
            {
                "role": "assistant",
                "content": [
                    ANTHROPIC_BAD["messages"][1]["content"][0],
                    {"type": "tool_use", "id": "t2", "name": "fx", "input": {}},
                ],
            },
            *ANTHROPIC_BAD["messages"][2:],
        ],
    },
    "openai-functions": without(LEGACY_BAD, "messages", 4),
    "openai-responses": without(RESPONSES_BAD, "input", 6),
}


@pytest.mark.parametrize("name", READABLE)
def test_fix_repairs_what_is_safe_and_says_what_changed(name: str) -> None:
    bad = READABLE[name]
    original = copy.deepcopy(bad)
    report = check(bad, fix=True)
    assert report.format == name
    assert bad == original  # the input is not modified
    fixable = [p for p in report.problems if p.fixable]
    assert fixable and len(report.changes) == len(fixable)
    after = check(report.fixed, report.format)
    assert not [p for p in after.problems if p.fixable]  # everything fixable is fixed...
    left = {p.code for p in report.problems if not p.fixable}
    assert {p.code for p in after.problems} <= left  # ...and nothing new appears
    get_format(report.format).request_from_wire(report.fixed)  # the repaired body reads


def test_what_cannot_be_read_cannot_be_repaired_and_says_why() -> None:
    with pytest.raises(
        FormatError,
        match=r"cannot repair this transcript \(messages\[1\]\.content\[1\]\.input: "
        r"expected an object, got a string\); fix by hand first: messages\[1\]\.content\[1\]\.input",
    ):
        check({**ANTHROPIC_BAD, "tools": ANTHROPIC_TOOLS}, fix=True)


def test_a_missing_result_is_padded_with_an_explicit_error() -> None:
    body = {
        "model": "m",
        "tools": [{"name": "fx", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fx", "input": {}}]},
            {"role": "user", "content": "and?"},
        ],
    }
    report = check(body, "anthropic", fix=True)
    assert report.changes == ('messages[1].content[0]: add an is_error result saying "not executed"',)
    padded = report.fixed["messages"][2]
    assert padded["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "t1",
        "is_error": True,
        "content": "not executed: no result was recorded for this call",
    }
    assert report.fixed["messages"][3] == {"role": "user", "content": "and?"}


# --- golden bodies and server tools are clean -----------------------------------------------------


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_golden_request_passes(name: str) -> None:
    for path in sorted((FIXTURES / name.replace("-", "_")).glob("*.json")):
        for key, body in json.loads(path.read_text()).items():
            if "messages" in body or "input" in body:
                assert detect_format(body) == name, f"{path.name}:{key}"
                assert check(body).problems == (), f"{path.name}:{key}"


def test_responses_chained_by_previous_response_id_answer_calls_held_by_the_server() -> None:
    body = {
        "model": "m",
        "tools": [{"type": "function", "name": "fx", "parameters": {}}],
        "input": [{"type": "function_call_output", "call_id": "call_9", "output": "7.18"}],
    }
    assert codes(check(body)) == [(0, "orphan_result")]
    assert check({**body, "previous_response_id": "resp_1"}).ok


def test_server_tool_blocks_are_not_unanswered_calls() -> None:
    fixture = json.loads((FIXTURES / "anthropic" / "thinking_images.json").read_text())
    body = fixture["request"]
    body = {**body, "messages": [*body["messages"], {"role": "assistant", "content": fixture["response"]["content"]}]}
    kinds = [b["type"] for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    assert "server_tool_use" in kinds and "web_search_tool_result" in kinds
    assert check(body, "anthropic").ok


# --- everything the loop produces passes, in every format -----------------------------------------


@tool(effects="read_only")
def fx(amount: float, currency: str) -> str:
    """Convert to CNY."""
    return f"{amount * 7.18:g} CNY"


@tool(effects="side_effect")
def save(note: str) -> str:
    """Save a note."""
    return "saved"


SCENARIOS: dict[str, Callable[[], list[Turn]]] = {
    "one call": lambda: [call("fx", amount=1, currency="USD"), "7.18"],
    "parallel mixed effects": lambda: [
        [call("fx", amount=1, currency="USD"), call("save", note="x"), call("fx", amount=2, currency="USD")],
        "done",
    ],
    "failures": lambda: [[raw_call("fx", '{"amount": 1'), call("nope"), call("fx", amount="x")], "sorry"],
    "step limit": lambda: [
        call("fx", amount=1, currency="USD"),
        call("save", note="a"),
        [call("save", note="b"), call("save", note="c")],
    ],
    "long": lambda: [call("fx", amount=i, currency="USD") for i in range(5)] + ["ok"],
}
MAX_STEPS = {"step limit": 3, "long": 8}


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_loop_transcripts_pass_in_every_format(scenario: str) -> None:
    tools = Toolbox([fx, save])
    agent = Agent(
        model=ScriptedModel(SCENARIOS[scenario]()),
        tools=tools,
        system="Be exact.",
        max_steps=MAX_STEPS.get(scenario, 4),
        debug=True,
    )
    result = await agent.arun("Convert, please.")
    assert result.stop_reason == ("max_steps" if scenario == "step limit" else "completed")
    request = Request(model="m", messages=tuple(result.messages), tools=tools.specs())
    for name in FORMATS:
        parallel = any(len(m.tool_calls) > 1 for m in result.messages)
        if name == "openai-functions" and parallel:
            body = legacy_request(request, split=True)
        else:
            body = get_format(name).request_to_wire(request)
        report = check(body, name)
        assert report.problems == (), (name, [str(p) for p in report.problems])


async def test_debug_mode_stops_a_broken_history_before_the_model_is_called() -> None:
    broken = [
        Message.user("hi"),
        Message.assistant("", [call("fx", amount=1, currency="USD")]),
        Message.user("never mind the result"),
    ]
    model = ScriptedModel(["ok"])
    with pytest.raises(
        FormatError, match=r"step 1, as openai-chat: messages\[1\]\.tool_calls\[0\]: call .* has no result"
    ):
        await Agent(model=model, tools=Toolbox([fx]), debug=True).arun(broken)
    assert model.requests == []
    hooked = Agent(model=ScriptedModel(["ok"]), tools=Toolbox([fx]), hooks=[CheckHook(["anthropic"])])
    with pytest.raises(FormatError, match=r"step 1, as anthropic: messages\[1\]\.content\[0\]"):
        await hooked.arun(broken)
    assert (await Agent(model=ScriptedModel(["ok"]), tools=Toolbox([fx])).arun(broken)).ok  # not in debug mode


def test_a_list_of_tool_declarations_is_not_a_conversation() -> None:
    declarations = [
        {"type": "function", "function": {"name": "fx", "parameters": {"type": "object"}}},
        {"name": "calc", "input_schema": {"type": "object"}},
    ]
    with pytest.raises(FormatError, match="list of tool declarations, not a conversation"):
        toolslip.check(declarations)
