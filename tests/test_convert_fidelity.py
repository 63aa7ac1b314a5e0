"""Conversion fidelity on material nobody on the team wrote (issue 30): one test per class.

- A result's error flag travels as data through the formats that have none of their own, and a reader
  never takes it from text it did not write.
- Reasoning keeps its kind (the reasoning itself or a summary of it) and its entries.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from toolslip.conversion import convert

FLAGLESS = ("openai-chat", "openai-responses", "openai-functions")


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, ensure_ascii=False) == json.dumps(b, sort_keys=True, ensure_ascii=False)


def anthropic_history(*results: dict[str, Any]) -> dict[str, Any]:
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "lookup", "input": {}} for i in range(len(results))]
    blocks = [{"type": "tool_result", "tool_use_id": f"t{i}", **r} for i, r in enumerate(results)]
    return {
        "model": "m",
        "max_tokens": 10,
        "tools": [{"name": "lookup", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "Look it up."},
            {"role": "assistant", "content": calls},
            {"role": "user", "content": blocks},
        ],
    }


# --- the error flag ---------------------------------------------------------------------------------


def test_an_error_flag_goes_through_every_flagless_format_and_comes_back_unchanged() -> None:
    body = anthropic_history(
        {"content": "2 validation errors for Query", "is_error": True},
        {"content": "Error: Product not found", "is_error": True},  # its own text starts so: kept as it is
        {"content": [{"type": "text", "text": "bad"}, {"type": "text", "text": "input"}], "is_error": True},
        {"content": "Error: none"},  # a success whose text starts so
    )
    for target in FLAGLESS:
        there = convert(body, from_="anthropic", to=target, split_calls=True)
        assert sum("is_error flag" in str(loss) for loss in there.lost) == 3, target  # the spelling is reported
        back = convert(there.data, from_=target, to="anthropic").data
        assert results(back) == results(body), target  # legacy functions re-create ids and split turns
        assert target == "openai-functions" or same(back, body), target


def results(body: dict[str, Any]) -> list[tuple[Any, bool]]:
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    return [(b["content"], b.get("is_error", False)) for b in blocks if b["type"] == "tool_result"]


def test_text_that_starts_with_error_is_no_error_unless_the_mark_says_so() -> None:
    success = "Error: none; all 3 rows were imported"  # a successful tool's words
    chat = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "Import."},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "load", "arguments": "{}"}},
                    {"id": "c2", "type": "function", "function": {"name": "load", "arguments": "{}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": success},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "Error: disk"}]},
        ],
        "tools": [{"type": "function", "function": {"name": "load", "parameters": {"type": "object"}}}],
    }
    anthropic = convert(chat, from_="openai-chat", to="anthropic").data
    results = anthropic["messages"][2]["content"]
    assert [r.get("is_error", False) for r in results] == [False, False]
    assert results[0]["content"] == success and results[1]["content"][0]["text"] == "Error: disk"
    for target in FLAGLESS:  # nor marked on its way anywhere
        data = convert(anthropic, from_="anthropic", to=target, split_calls=True).data
        assert json.dumps(data).count('"Error: "') == 0, target


def test_an_identity_conversion_changes_no_byte_of_a_result() -> None:
    chat_results = [
        "Error: x",
        [{"type": "text", "text": "Error: "}, {"type": "text", "text": "x"}],
        [{"type": "text", "text": "Error: "}],
        [{"type": "text", "text": "Error: "}, {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}],
        [{"type": "text", "text": "Error: y"}, {"type": "text", "text": "x"}],
    ]
    for content in chat_results:
        body = {
            "model": "m",
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": content},
            ],
        }
        assert same(convert(body, from_="openai-chat", to="openai-chat").data, body), content
        responses = {
            "model": "m",
            "input": [
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": content if isinstance(content, str) else [{**p, "type": "input_text"} for p in content],
                },
            ],
        }
        if "cache_control" not in json.dumps(content):  # a Chat part's extra key; no such key in Responses
            assert same(convert(responses, from_="openai-responses", to="openai-responses").data, responses), content


# --- reasoning ----------------------------------------------------------------------------------------


def responses_turn(reasoning: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "m",
        "input": [
            {"role": "user", "content": "2+2?"},
            {"type": "reasoning", **reasoning},
            {"role": "assistant", "content": "4"},
            {"role": "user", "content": "And 3+3?"},
        ],
    }


def test_raw_reasoning_stays_raw_and_a_summary_a_summary_through_chat() -> None:
    raw = {"summary": [], "content": [{"type": "reasoning_text", "text": "The user asks 2+2. That is 4."}]}  # gpt-oss
    summary = {"summary": [{"type": "summary_text", "text": "**Adding** two numbers."}]}  # o-series
    for reasoning in (raw, summary):
        body = responses_turn(reasoning)
        for via in ("openai-chat", "openai-functions"):
            chat = convert(body, from_="openai-responses", to=via)
            assert not chat.lost
            assert same(convert(chat.data, from_=via, to="openai-responses").data, body), (via, reasoning)


def test_openrouter_reasoning_details_are_written_back_as_read_or_reported() -> None:
    details = [
        {"type": "reasoning.text", "text": "Two plus two.", "format": "anthropic-claude-v1", "signature": "sig"},
        {"type": "reasoning.encrypted", "data": "ENC", "format": "openai-responses-v1", "id": "rs_1"},
        {"type": "reasoning.summary", "summary": "Adding.", "format": "openai-responses-v1"},
        {"type": "reasoning.text", "format": "unknown"},  # no text at all: none is added
    ]
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "reasoning": "Two plus two.", "reasoning_details": details},
            {"role": "user", "content": "And 3+3?"},
        ],
    }
    assert same(convert(body, from_="openai-chat", to="openai-chat").data, body)
    there = convert(body, from_="openai-chat", to="openai-responses", on_loss="drop")
    lost = [str(loss) for loss in there.lost]
    for what in ("parts[0].signature", "parts[1]: encrypted", "parts[0].format", "parts[2].format", "reasoning:"):
        assert any(what in loss for loss in lost), (what, lost)
    back = convert(there.data, from_="openai-responses", to="openai-chat").data["messages"][1]
    assert back["reasoning_details"] == [  # a summary is still a summary, the text still the text
        {"type": "reasoning.text", "text": "Two plus two."},
        {"type": "reasoning.summary", "summary": "Adding."},
    ]


# --- refused although the target can say it ---------------------------------------------------------


def chat_body(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "Hi"}], **fields}


def test_what_every_target_can_say_is_not_refused() -> None:
    png = "data:image/png;base64,iVBORw0KGgo="
    chat_cases = {
        "n: 1, the default": chat_body(n=1),
        "a named tool_choice without type": chat_body(
            tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
            tool_choice={"function": {"name": "f"}},
        ),
        "an image part with extra keys": {
            "model": "m",
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": png}, "text": None},
                        {"type": "image_url", "image_url": {"url": png}, "cache_control": {"type": "ephemeral"}},
                    ],
                }
            ],
        },
    }
    for case, body in chat_cases.items():
        assert same(convert(body, from_="openai-chat", to="openai-chat").data, body), case
        for target in ("anthropic", "openai-responses"):
            out = convert(body, from_="openai-chat", to=target, on_loss="drop")  # nothing refused...
            assert not [loss for loss in out.lost if loss.handled == "dropped" and "field" not in loss.what], case
            convert(body, from_="openai-chat", to=target, on_loss="error")  # ...under the strict policy either
    named = convert(chat_cases["a named tool_choice without type"], from_="openai-chat", to="anthropic").data
    assert named["tool_choice"] == {"type": "tool", "name": "f"}
    images = convert(chat_cases["an image part with extra keys"], from_="openai-chat", to="anthropic").data
    assert [b["type"] for b in images["messages"][0]["content"]] == ["image", "image"]

    empty_assistant = {
        "model": "m",
        "input": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "Still there?"},
        ],
    }
    assert same(convert(empty_assistant, from_="openai-responses", to="openai-responses").data, empty_assistant)
    for target in ("openai-chat", "anthropic"):
        convert(empty_assistant, from_="openai-responses", to=target)

    notes = base64.b64encode(b"Meeting notes: ship on Friday.").decode()
    document = chat_body(
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Summarise."},
                    {"type": "file", "file": {"filename": "notes.txt", "file_data": f"data:text/plain;base64,{notes}"}},
                ],
            }
        ]
    )
    anthropic = convert(document, from_="openai-chat", to="anthropic").data
    assert anthropic["messages"][0]["content"][1] == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "Meeting notes: ship on Friday."},
        "title": "notes.txt",
    }
    assert same(convert(anthropic, from_="anthropic", to="anthropic").data, anthropic)
