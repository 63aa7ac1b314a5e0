"""toolslip.convert: what a target cannot express is reported, never dropped quietly."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolslip
from toolslip.conversion import convert
from toolslip.errors import CannotExpress, FormatError
from toolslip.formats import get_format

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str, key: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())[key]


def test_thinking_blocks_survive_anthropic_to_anthropic_byte_for_byte() -> None:
    for key in ("request", "response"):
        wire = fixture("anthropic/thinking_images", key)
        out = convert(wire, from_="anthropic", to="anthropic").data
        assert json.dumps(out, sort_keys=True) == json.dumps(wire, sort_keys=True)


def test_server_tool_blocks_to_openai_are_an_error_unless_dropped() -> None:
    wire = fixture("anthropic/thinking_images", "response")
    with pytest.raises(CannotExpress, match=r"message\.parts\[0\]\.signature: the reasoning's signature"):
        convert(wire, from_="anthropic", to="openai-chat")
    dropped = convert(wire, from_="anthropic", to="openai-chat", on_loss="drop")
    assert [str(loss) for loss in dropped.lost] == [
        "message.parts[0].signature: the reasoning's signature (only its text is carried) (dropped)",
        "message.parts[1]: anthropic block 'server_tool_use' (dropped)",
        "message.parts[2]: anthropic block 'web_search_tool_result' (dropped)",
        "message.parts[4].citations: anthropic field 'citations' (dropped)",
    ]
    message = dropped.data["choices"][0]["message"]
    assert message["reasoning_content"] == wire["content"][0]["thinking"]  # the thinking text is translated
    marked = convert(wire, from_="anthropic", to="openai-chat", on_loss="mark").data
    content = marked["choices"][0]["message"]["content"]
    assert content[0] == {"type": "text", "text": "[anthropic block 'server_tool_use' left out]"}


def test_is_error_is_marked_in_content_and_reported() -> None:
    wire = fixture("anthropic/parallel_error", "request")
    result = convert(wire, from_="anthropic", to="openai-chat", on_loss="drop")
    tool_messages = [m for m in result.data["messages"] if m["role"] == "tool"]
    assert tool_messages[2]["content"].startswith("Error: ")
    assert 'messages[2].parts[2]: is_error flag (marked: "Error: " before the content)' in map(str, result.lost)


def test_anthropic_needs_tools_when_the_history_has_tool_blocks() -> None:
    body = fixture("openai_chat/weather", "followup")
    body = {k: v for k, v in body.items() if k != "tools"}
    with pytest.raises(CannotExpress, match="tools: a history with tool blocks but no tools"):
        convert(body, from_="openai-chat", to="anthropic")
    repaired = convert(body, from_="openai-chat", to="anthropic", on_loss="mark")
    assert [t["name"] for t in repaired.data["tools"]] == ["get_weather"]
    assert repaired.lost[-1].handled == "declared a stub tool per called name"


def test_foreign_request_fields_and_tools_are_reported() -> None:
    body = fixture("openai_responses/hosted_reasoning", "request")
    with pytest.raises(
        CannotExpress, match=r"extra_tools\[0\]: openai-responses tool declaration 'web_search_preview'"
    ):
        convert(body, from_="openai-responses", to="anthropic")
    out = convert(body, from_="openai-responses", to="anthropic", on_loss="drop")
    assert [t["name"] for t in out.data["tools"]] == ["save_note"]
    assert [loss.path for loss in out.lost] == [  # one entry per declaration and per field
        "extra_tools[0]",
        "extra_tools[1]",
        "settings.extra.reasoning",
        "settings.extra.include",
        "settings.extra.store",
    ]


def test_chat_and_legacy_share_body_fields() -> None:
    body = fixture("openai_chat/parallel_error", "request")
    out = convert(body, from_="openai-chat", to="openai-functions", on_loss="drop", split_calls=True)
    assert out.data["seed"] == body["seed"]
    assert "messages[2]: 3 parallel calls (split into single-call turns)" in map(str, out.lost)


def test_tool_lists_convert_alone() -> None:
    tools = fixture("openai_chat/weather", "request")["tools"]
    out = toolslip.convert(tools, from_="openai-chat", to="anthropic")
    assert out.data[0]["input_schema"] == tools[0]["function"]["parameters"]
    assert convert(out.data, from_="anthropic", to="openai-chat").data == tools
    legacy = convert(tools, from_="openai-chat", to="openai-functions").data
    assert legacy == [tools[0]["function"]]


def test_message_lists_convert_alone() -> None:
    messages = fixture("openai_chat/weather", "followup")["messages"]
    out = convert(messages, from_="openai-chat", to="openai-responses").data
    assert [m.get("type", m.get("role")) for m in out] == ["user", "function_call", "function_call_output"]
    assert convert(out, from_="openai-responses", to="openai-chat").data == messages


def test_bad_input_says_where() -> None:
    with pytest.raises(FormatError, match=r"messages\[0\]: unknown role 'robot'"):
        convert({"model": "m", "messages": [{"role": "robot", "content": "x"}]}, from_="openai-chat", to="anthropic")
    with pytest.raises(FormatError, match="cannot tell what this anthropic data is"):
        convert({"hello": 1}, from_="anthropic", to="openai-chat")
    with pytest.raises(FormatError, match="unknown wire format 'cohere'"):
        convert([], from_="cohere", to="openai-chat")
    with pytest.raises(FormatError, match="on_loss must be"):
        convert([], from_="anthropic", to="openai-chat", on_loss="ignore")  # type: ignore[arg-type]


def test_converting_to_the_same_format_is_identity_on_every_golden_body() -> None:
    for name in ("anthropic", "openai-chat", "openai-functions", "openai-responses"):
        fmt = get_format(name)
        for path in sorted((FIXTURES / name.replace("-", "_")).glob("*.json")):
            for wire in json.loads(path.read_text()).values():
                assert convert(wire, from_=name, to=name).data == wire
                assert fmt.NAME == name


def test_usage_counters_without_a_field_are_reported() -> None:
    wire = fixture("anthropic/expenses", "response")
    out = convert(wire, from_="anthropic", to="openai-chat")
    assert out.data["usage"]["prompt_tokens"] == 150 + 256  # input + cache reads
    assert [str(loss) for loss in out.lost] == [
        "usage.cache_write_tokens: the cache-write token count (dropped: Chat usage has no field)"
    ]
