"""Structured output on the wire: each format's field read into ``Request.output`` and written back
unchanged, other spellings kept verbatim, the strict rewrite and what it reports."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolslip import CannotExpress, Message, Request, convert
from toolslip.core.messages import OutputSchema
from toolslip.formats import get_format
from toolslip.formats.structured import drop_strict_nulls, strict_schema

SCHEMA = {
    "type": "object",
    "properties": {"total_cny": {"type": "number"}, "per_person_cny": {"type": "number"}},
    "required": ["total_cny", "per_person_cny"],
    "additionalProperties": False,
}
BASE: dict[str, dict[str, Any]] = {
    "openai-chat": {"model": "m", "messages": [{"role": "user", "content": "?"}]},
    "openai-responses": {"model": "m", "input": "?"},
    "anthropic": {"model": "m", "max_tokens": 100, "messages": [{"role": "user", "content": "?"}]},
}
# Each field as the official SDKs' helpers write it (openai: chat.completions.parse, responses.parse;
# anthropic: output_config.format, and the beta's output_format).
FIELDS: list[tuple[str, dict[str, Any]]] = [
    (
        "openai-chat",
        {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "Expense", "schema": SCHEMA, "strict": True},
            }
        },
    ),
    (
        "openai-responses",
        {"text": {"format": {"type": "json_schema", "name": "Expense", "schema": SCHEMA, "strict": True}}},
    ),
    (
        "openai-responses",
        {"text": {"format": {"type": "json_schema", "name": "E", "schema": SCHEMA}, "verbosity": "low"}},
    ),
    ("anthropic", {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}}}),
    ("anthropic", {"output_config": {"format": {"type": "json_schema", "schema": SCHEMA}, "effort": "low"}}),
    ("anthropic", {"output_format": {"type": "json_schema", "schema": SCHEMA}}),
]


@pytest.mark.parametrize(("fmt", "field"), FIELDS)
def test_each_field_reads_into_request_output_and_writes_back_the_same(fmt: str, field: dict[str, Any]) -> None:
    wire = get_format(fmt)
    body = {**BASE[fmt], **copy.deepcopy(field)}
    request = wire.request_from_wire(copy.deepcopy(body))
    assert request.output is not None and request.output.schema == SCHEMA
    extra = request.settings.extra  # the field left it; only its neighbours (verbosity, effort) stay there
    assert "response_format" not in extra and "output_format" not in extra
    assert "format" not in extra.get("text", {}) and "format" not in extra.get("output_config", {})
    assert wire.request_to_wire(request) == body


@pytest.mark.parametrize(
    ("fmt", "field"),
    [
        ("openai-chat", {"response_format": {"type": "json_object"}}),
        ("openai-chat", {"response_format": {"type": "text"}}),
        ("openai-responses", {"text": {"format": {"type": "text"}}}),
    ],
)
def test_spellings_without_a_schema_stay_verbatim(fmt: str, field: dict[str, Any]) -> None:
    wire = get_format(fmt)
    body = {**BASE[fmt], **field}
    request = wire.request_from_wire(copy.deepcopy(body))
    assert request.output is None
    assert wire.request_to_wire(request) == body


def test_a_neutral_output_is_written_in_each_formats_spelling() -> None:
    output = OutputSchema(name="Expense report", schema=SCHEMA, strict=True)
    request = Request(model="m", messages=(Message.user("?"),), output=output)
    chat = get_format("openai-chat").request_to_wire(request)
    assert chat["response_format"]["json_schema"]["name"] == "Expense_report"  # OpenAI's name pattern
    assert get_format("openai-responses").request_to_wire(request)["text"]["format"]["strict"] is True
    assert get_format("anthropic").request_to_wire(request)["output_config"] == {
        "format": {"type": "json_schema", "schema": SCHEMA}
    }
    with pytest.raises(CannotExpress, match="openai-functions has no structured-output field"):
        get_format("openai-functions").request_to_wire(request)


def test_the_strict_rewrite_closes_objects_requires_everything_and_makes_optional_fields_nullable() -> None:
    loose = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"enum": ["c", "f"], "default": "c"},
            "days": {"type": "array", "items": {"type": "object", "properties": {"t": {"type": "number"}}}},
        },
        "required": ["city"],
    }
    out = strict_schema(loose)
    assert out.problems == ()
    assert out.schema["required"] == ["city", "unit", "days"] and out.schema["additionalProperties"] is False
    assert out.schema["properties"]["unit"] == {"anyOf": [{"enum": ["c", "f"]}, {"type": "null"}]}
    assert out.schema["properties"]["days"]["type"] == ["array", "null"]
    assert out.schema["properties"]["days"]["items"]["additionalProperties"] is False
    assert out.schema["properties"]["days"]["items"]["properties"]["t"] == {"type": ["number", "null"]}
    assert loose["properties"]["unit"] == {"enum": ["c", "f"], "default": "c"}  # the input is left alone
    answer = {"city": "北京", "unit": None, "days": [{"t": None}]}
    assert drop_strict_nulls(answer, loose) == {"city": "北京", "days": [{}]}


def test_the_strict_rewrite_reports_what_cannot_be_strict() -> None:
    out = strict_schema(
        {
            "type": "object",
            "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}},
            "not": {"required": ["x"]},
        }
    )
    assert sorted(out.problems) == [
        "$.tags: an object with free-form keys cannot be strict; it was closed",
        "$: 'not' is not supported by strict mode and was dropped",
    ]


# --- convert ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("source", "field"), FIELDS[:2] + FIELDS[3:4])
@pytest.mark.parametrize("target", ["openai-chat", "openai-responses", "anthropic"])
def test_convert_carries_the_schema_into_the_targets_field(source: str, field: dict[str, Any], target: str) -> None:
    converted = convert({**BASE[source], **field}, from_=source, to=target)
    request = get_format(target).request_from_wire(converted.data)
    assert request.output is not None and request.output.schema == SCHEMA
    lost = [str(loss) for loss in converted.lost if loss.path == "output"]
    dropped = target == "anthropic" and source != "anthropic"  # OpenAI's strict flag has no Anthropic spelling
    assert lost == (
        ["output: the schema's strict flag and description (Anthropic's format has neither) (dropped)"]
        if dropped
        else []
    )


def test_convert_to_legacy_functions_offers_a_final_answer_tool_and_says_so() -> None:
    source, field = FIELDS[0]
    converted = convert({**BASE[source], **field}, from_=source, to="openai-functions")
    assert converted.data["functions"] == [
        {"name": "final_answer", "description": "Give your final answer.", "parameters": SCHEMA}
    ]
    assert converted.data["function_call"] == {"name": "final_answer"}
    assert "response_format" not in converted.data
    assert [str(loss) for loss in converted.lost] == [
        "output: the response_format schema (offered as the tool 'final_answer', called with the answer)"
    ]
