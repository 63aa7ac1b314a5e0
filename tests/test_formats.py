"""The format registry, conversions across formats, and the comparison table in docs/formats.md."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic.types
import pytest
from openai.types.chat import ChatCompletion
from openai.types.responses import Response
from pydantic import BaseModel

from toolslip.errors import CannotExpress, FormatError
from toolslip.formats import FORMATS, get_format
from toolslip.messages import (
    Message,
    ModelResponse,
    Request,
    Settings,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UseTool,
    message_from_dict,
    message_to_dict,
)

ROOT = Path(__file__).parent.parent
FIXTURES = Path(__file__).parent / "fixtures"


def test_get_format_returns_the_named_module() -> None:
    for name in FORMATS:
        assert get_format(name).NAME == name


def test_an_unknown_format_lists_the_known_ones() -> None:
    known = "anthropic, bedrock, gemini, ollama, openai-chat, openai-functions, openai-responses"
    with pytest.raises(FormatError, match=rf"unknown wire format 'openai'; known formats: {known}"):
        get_format("openai")


# --- golden JSON: reading and writing back in the same format is identity -----------------------------

SDK_RESPONSE: dict[str, type[BaseModel]] = {
    "openai-chat": ChatCompletion,
    "anthropic": anthropic.types.Message,
    "openai-functions": ChatCompletion,
    "openai-responses": Response,
}
GOLDEN = [
    (name, path, key)
    for name in FORMATS
    for path in sorted((FIXTURES / name.replace("-", "_")).glob("*.json"))
    for key in json.loads(path.read_text())
]
GOLDEN_IDS = [f"{name}:{path.stem}:{key}" for name, path, key in GOLDEN]


@pytest.mark.parametrize(("name", "path", "key"), GOLDEN, ids=GOLDEN_IDS)
def test_same_format_round_trip_is_identity(name: str, path: Path, key: str) -> None:
    fmt = get_format(name)
    wire = json.loads(path.read_text())[key]
    if "messages" in wire or "input" in wire or "contents" in wire:
        assert fmt.request_to_wire(fmt.request_from_wire(wire)) == wire
    else:
        assert fmt.response_to_wire(fmt.response_from_wire(wire)) == wire
        if name not in SDK_RESPONSE:
            return  # boto3 answers with plain dicts
        # The official SDK's response object is accepted as well as the dict.
        sdk = SDK_RESPONSE[name].model_validate(wire)
        from_sdk = fmt.response_from_wire(sdk)
        assert from_sdk == fmt.response_from_wire(wire)
        assert fmt.response_to_wire(from_sdk) == wire


def test_every_format_has_golden_files() -> None:
    assert {name for name, _, _ in GOLDEN} == set(FORMATS)


# --- across formats: OpenAI -> neutral -> Anthropic -> neutral (and back) -----------------------------


def comparable(messages: tuple[Message, ...]) -> list[Message]:
    """Messages without what only one format can say (the raw argument text)."""
    return [
        Message(
            role=m.role,
            parts=tuple(replace(p, raw_arguments=None) if isinstance(p, ToolCall) else p for p in m.parts),
            name=m.name,
        )
        for m in messages
    ]


def specs(request: Request) -> list[tuple[str, str, Any]]:
    return [(t.name, t.description, t.parameters) for t in request.tools]


CROSS = [
    ("openai-chat", "anthropic", "openai_chat/weather.json", "request"),
    ("openai-chat", "anthropic", "openai_chat/weather.json", "followup"),
    ("openai-chat", "anthropic", "openai_chat/expenses.json", "request"),
    ("anthropic", "openai-chat", "anthropic/weather.json", "request"),
    ("anthropic", "openai-chat", "anthropic/weather.json", "followup"),
    ("anthropic", "openai-chat", "anthropic/expenses.json", "request"),
]


@pytest.mark.parametrize(("source", "target", "fixture", "key"), CROSS)
def test_requests_survive_the_other_format(source: str, target: str, fixture: str, key: str) -> None:
    src, dst = get_format(source), get_format(target)
    first = src.request_from_wire(json.loads((FIXTURES / fixture).read_text())[key])
    second = dst.request_from_wire(dst.request_to_wire(first))
    assert comparable(second.messages) == comparable(first.messages)
    assert specs(second) == specs(first)
    if source == "openai-chat":  # Anthropic always sends max_tokens
        second = replace(second, settings=replace(second.settings, max_tokens=None))
    assert second.settings == first.settings


@pytest.mark.parametrize(
    ("source", "target", "fixture"),
    [
        ("openai-chat", "anthropic", "openai_chat/weather.json"),
        ("anthropic", "openai-chat", "anthropic/weather.json"),
    ],
)
def test_responses_survive_the_other_format(source: str, target: str, fixture: str) -> None:
    src, dst = get_format(source), get_format(target)
    first = src.response_from_wire(json.loads((FIXTURES / fixture).read_text())["response"])
    second = dst.response_from_wire(dst.response_to_wire(first))
    assert comparable((second.message,)) == comparable((first.message,))
    assert (second.stop_reason, second.usage, second.id, second.model) == (
        first.stop_reason,
        first.usage,
        first.id,
        first.model,
    )


def test_anthropic_only_blocks_are_left_out_for_openai() -> None:
    anthropic, openai = get_format("anthropic"), get_format("openai-chat")
    wire = json.loads((FIXTURES / "anthropic/thinking_images.json").read_text())["response"]
    message = openai.response_to_wire(anthropic.response_from_wire(wire))["choices"][0]["message"]
    texts = [
        {"type": "text", "text": "It is raining in Paris; "},
        {"type": "text", "text": "there is a jazz festival tonight."},
    ]
    assert message == {"role": "assistant", "content": texts}  # thinking and server-tool blocks left out
    reply = anthropic.response_from_wire(wire | {"content": wire["content"][:3] + [{"type": "text", "text": "Rain."}]})
    assert openai.response_to_wire(reply)["choices"][0]["message"]["content"] == "Rain."


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_the_stash_survives_the_json_transcript(name: str) -> None:
    """Kept wire fields live in Message.extra, which the journal stores as JSON."""
    fmt = get_format(name)
    for path in sorted((FIXTURES / name.replace("-", "_")).glob("*.json")):
        body = json.loads(path.read_text())["request"]
        request = fmt.request_from_wire(body)
        stored = [json.loads(json.dumps(message_to_dict(m))) for m in request.messages]
        assert fmt.request_to_wire(request.with_messages([message_from_dict(m) for m in stored])) == body


def test_foreign_stash_does_not_leak() -> None:
    """A field kept for OpenAI (the developer role) is not sent to Anthropic."""
    openai, anthropic = get_format("openai-chat"), get_format("anthropic")
    messages = openai.messages_from_wire([{"role": "developer", "content": "Be brief.", "name": "x"}])
    request = Request(model="m", messages=tuple(messages))
    assert anthropic.request_to_wire(request)["system"] == "Be brief."
    assert openai.request_to_wire(request)["messages"] == [{"role": "developer", "content": "Be brief.", "name": "x"}]


# --- the comparison table in docs/formats.md -------------------------------------------------------

SAMPLE = Request(
    model="m",
    messages=(
        Message.system("Be brief."),
        Message.user("Weather in Paris?"),
        Message.assistant("", [ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})]),
        Message.tool([ToolResult(call_id="call_1", content="boom", is_error=True)]),
    ),
    tools=(ToolSpec(name="get_weather", description="Current weather.", parameters={"type": "object"}),),
)
SAMPLE_RESPONSE = ModelResponse(
    message=Message.assistant("", [ToolCall(id="call_1", name="get_weather", arguments={"city": "Paris"})]),
    stop_reason="tool_use",
    usage=Usage(input_tokens=10, output_tokens=3, cache_read_tokens=5),
)
# Rows that need other settings than the sample's; every other row must hold for the plain sample.
ROW_SETTINGS = {
    "tool_choice auto": Settings(tool_choice="auto"),
    "tool_choice required": Settings(tool_choice="required"),
    "tool_choice none": Settings(tool_choice="none"),
    "tool_choice one tool": Settings(tool_choice=UseTool("get_weather")),
    "At most one call per turn": Settings(parallel_tool_calls=False),
    "Stop sequences": Settings(stop=("END",)),
}


COLUMNS = {
    "OpenAI Chat Completions": "openai-chat",
    "Anthropic Messages": "anthropic",
    "OpenAI Responses": "openai-responses",
    "OpenAI legacy functions": "openai-functions",
    "Gemini": "gemini",
    "Bedrock Converse": "bedrock",
    "Ollama": "ollama",
}


def table_rows() -> list[tuple[str, dict[str, str]]]:
    """(what, {format name: cell}) for each row of the side-by-side table."""
    text = (ROOT / "docs" / "formats.md").read_text()
    section = text.split("## The seven formats side by side", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines() if line.startswith("|")
    ]
    names = [COLUMNS[title] for title in rows[0][1:]]
    assert sorted(names) == sorted(FORMATS)
    return [(row[0], dict(zip(names, row[1:], strict=True))) for row in rows[2:]]


ROWS = table_rows()


def lookup(data: Any, path: str) -> Any:
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if name:
            if not isinstance(data, dict) or name not in data:
                raise KeyError(path)
            data = data[name]
        else:
            data = data[int(index)]
    return data


def check(cell: str, wire: dict[str, Any]) -> None:
    claims = re.findall(r"`([^`]+)`", cell)
    assert claims, f"no checkable claim in {cell!r}"
    for claim in claims:
        if " = " in claim:
            path, value = claim.split(" = ", 1)
            assert lookup(wire, path) == json.loads(value), claim
        elif claim.endswith(" : absent"):
            with pytest.raises(KeyError):
                lookup(wire, claim.removesuffix(" : absent"))
        else:
            lookup(wire, claim)  # the field exists


def test_the_table_covers_the_comparison() -> None:
    assert len(ROWS) >= 15
    assert set(ROW_SETTINGS) <= {what for what, _ in ROWS}


@pytest.mark.parametrize(("what", "cells"), ROWS, ids=[r[0] for r in ROWS])
def test_each_table_row_matches_the_functions(what: str, cells: dict[str, str]) -> None:
    request = replace(SAMPLE, settings=ROW_SETTINGS.get(what, Settings()))
    for name, cell in cells.items():
        fmt = get_format(name)
        if "`raises CannotExpress`" in cell:
            with pytest.raises(CannotExpress):
                fmt.request_to_wire(request)
            continue
        check(cell, {"request": fmt.request_to_wire(request), "response": fmt.response_to_wire(SAMPLE_RESPONSE)})
