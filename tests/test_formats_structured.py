"""Structured output on the wire: each format's field read into ``Request.output`` and written back
unchanged, other spellings kept verbatim, the strict rewrite and what it reports."""

from __future__ import annotations

import copy
import dataclasses
import json
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
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "?"}]}]},
    "bedrock": {"messages": [{"role": "user", "content": [{"text": "?"}]}]},
    "ollama": {"model": "m", "messages": [{"role": "user", "content": "?"}]},
}
JSON = "application/json"


def converse(schema_text: str, **more: str) -> dict[str, Any]:
    """Converse's ``outputConfig`` as boto3 callers write it (the schema is JSON text)."""
    return {"textFormat": {"type": "json_schema", "structure": {"jsonSchema": {"schema": schema_text, **more}}}}


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
    # google-genai: GenerateContentConfig(response_mime_type=..., response_json_schema=...), next to knobs
    ("gemini", {"generationConfig": {"responseMimeType": JSON, "responseJsonSchema": SCHEMA}}),
    (
        "gemini",
        {
            "generationConfig": {
                "maxOutputTokens": 64,
                "topK": 3,
                "responseMimeType": JSON,
                "responseJsonSchema": SCHEMA,
            }
        },
    ),
    # ollama: chat(format=Model.model_json_schema())
    ("ollama", {"format": SCHEMA}),
    ("ollama", {"format": SCHEMA, "options": {"num_predict": 64, "top_k": 3}}),
    # boto3: json.dumps(schema), or compact JSON text (JSON.stringify) with no name
    ("bedrock", {"outputConfig": converse(json.dumps(SCHEMA), name="Expense", description="What the trip cost.")}),
    ("bedrock", {"outputConfig": converse(json.dumps(SCHEMA, separators=(",", ":")))}),
]


@pytest.mark.parametrize(("fmt", "field"), FIELDS)
def test_each_field_reads_into_request_output_and_writes_back_the_same(fmt: str, field: dict[str, Any]) -> None:
    wire = get_format(fmt)
    body = {**BASE[fmt], **copy.deepcopy(field)}
    request = wire.request_from_wire(copy.deepcopy(body))
    assert request.output is not None and request.output.schema == SCHEMA
    extra = request.settings.extra  # the field left it; only its neighbours (verbosity, effort) stay there
    assert "response_format" not in extra and "output_format" not in extra and "format" not in extra
    assert "format" not in extra.get("text", {}) and "format" not in extra.get("output_config", {})
    assert "responseJsonSchema" not in extra.get("generationConfig", {}) and "outputConfig" not in extra
    assert wire.request_to_wire(request) == body


@pytest.mark.parametrize(
    ("fmt", "field"),
    [
        ("openai-chat", {"response_format": {"type": "json_object"}}),
        ("openai-chat", {"response_format": {"type": "text"}}),
        ("openai-responses", {"text": {"format": {"type": "text"}}}),
        ("ollama", {"format": "json"}),  # JSON mode: any JSON value
        ("gemini", {"generationConfig": {"responseMimeType": JSON}}),
        ("gemini", {"generationConfig": {"responseMimeType": "text/x.enum", "responseSchema": {"type": "STRING"}}}),
        ("bedrock", {"outputConfig": converse("{not JSON")}),  # for the service to refuse, not us
        ("bedrock", {"outputConfig": converse("[]")}),
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
    gemini = get_format("gemini").request_to_wire(request)["generationConfig"]
    assert gemini == {"responseMimeType": JSON, "responseJsonSchema": SCHEMA}
    assert get_format("ollama").request_to_wire(request)["format"] == SCHEMA
    spec = get_format("bedrock").request_to_wire(request)["outputConfig"]["textFormat"]["structure"]["jsonSchema"]
    assert spec["name"] == "Expense report" and json.loads(spec["schema"]) == SCHEMA
    with pytest.raises(CannotExpress, match="openai-functions has no structured-output field"):
        get_format("openai-functions").request_to_wire(request)


# What google-genai writes for GenerateContentConfig(response_schema=Expense): the older OpenAPI subset.
GEMINI_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "total_cny": {"type": "NUMBER", "description": "All the expenses together, in CNY."},
        "note": {"type": "STRING", "nullable": True},
    },
    "required": ["total_cny"],
    "propertyOrdering": ["total_cny", "note"],
}


def test_geminis_older_response_schema_reads_as_json_schema_and_goes_back_as_it_came() -> None:
    wire = get_format("gemini")
    body = {**BASE["gemini"], "generationConfig": {"responseMimeType": JSON, "responseSchema": GEMINI_SCHEMA}}
    request = wire.request_from_wire(copy.deepcopy(body))
    assert request.output is not None and request.output.schema == {
        "type": "object",
        "properties": {
            "total_cny": {"type": "number", "description": "All the expenses together, in CNY."},
            "note": {"type": ["string", "null"]},
        },
        "required": ["total_cny"],
        "propertyOrdering": ["total_cny", "note"],
    }
    assert wire.request_to_wire(request) == body
    # A schema changed on the way (here by the caller) is no longer the one that came: it goes as JSON Schema.
    changed = dataclasses.replace(request.output, schema=SCHEMA)
    assert wire.request_to_wire(dataclasses.replace(request, output=changed))["generationConfig"] == {
        "responseMimeType": JSON,
        "responseJsonSchema": SCHEMA,
    }
    chat = convert(body, from_="gemini", to="openai-chat").data["response_format"]["json_schema"]
    assert chat["schema"]["properties"]["note"] == {"type": ["string", "null"]}


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


NATIVE = ["openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "ollama"]
NO_STRICT = {
    "anthropic": "the schema's strict flag and description (Anthropic's format has neither)",
    "gemini": "the schema's strict flag and description (Gemini's format has neither)",
    "ollama": "the schema's strict flag and description (Ollama's format has neither)",
    "bedrock": "the schema's strict flag (Converse's format has none)",
}


@pytest.mark.parametrize(("source", "field"), FIELDS[:2] + FIELDS[3:4] + FIELDS[6:7] + FIELDS[8:9] + FIELDS[10:11])
@pytest.mark.parametrize("target", NATIVE)
def test_convert_carries_the_schema_into_the_targets_field(source: str, field: dict[str, Any], target: str) -> None:
    converted = convert({**BASE[source], **field}, from_=source, to=target)
    request = get_format(target).request_from_wire(converted.data)
    assert request.output is not None and request.output.schema == SCHEMA
    lost = [str(loss) for loss in converted.lost if loss.path == "output"]
    strict, description = source.startswith("openai"), source == "bedrock"  # what the source fields carry
    drops = target in NO_STRICT and target != source and (strict or (description and target != "bedrock"))
    assert lost == ([f"output: {NO_STRICT[target]} (dropped)"] if drops else [])


@pytest.mark.parametrize("via", ["gemini", "bedrock", "ollama"])
def test_chats_response_format_comes_back_from_each_native_wire(via: str) -> None:
    source, field = FIELDS[0]
    there = convert({**BASE[source], **field}, from_=source, to=via)
    back = convert(there.data, from_=via, to="openai-chat")
    spec = back.data["response_format"]["json_schema"]
    assert spec["schema"] == SCHEMA and back.data["messages"] == BASE[source]["messages"]
    # Converse's jsonSchema has a name; Gemini's and Ollama's fields have none, so Chat's default comes back.
    assert spec["name"] == ("Expense" if via == "bedrock" else "answer")
    assert [str(loss) for loss in there.lost if loss.path == "output"] == [f"output: {NO_STRICT[via]} (dropped)"]


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
