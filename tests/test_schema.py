"""Schema normalisation, provider-safe names and strict mode, down to every function doc BFCL ships."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolslip.errors import ToolDefinitionError
from toolslip.formats import get_format
from toolslip.messages import ToolCall
from toolslip.schema import NameMap, normalize_schema, normalize_tools, strict_schema

META = Draft202012Validator(Draft202012Validator.META_SCHEMA)
PATTERNS = {"openai-chat": r"[a-zA-Z0-9_-]{1,64}", "anthropic": r"[a-zA-Z0-9_-]{1,128}"}


def bfcl_docs() -> Iterator[dict[str, Any]]:
    """Every function doc in bfcl-eval's data files (installed with --no-deps; see the Makefile)."""
    data = resources.files("bfcl_eval") / "data"
    files = [f for f in data.iterdir() if f.name.endswith(".json") and "format_sensitivity" not in f.name]
    files += [f for f in (data / "multi_turn_func_doc").iterdir() if f.name.endswith(".json")]
    for f in sorted(files, key=lambda f: f.name):
        for line in f.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                docs = entry.get("function", entry if "parameters" in entry else [])
                yield from docs if isinstance(docs, list) else [docs]


@pytest.fixture(scope="module")
def unique_docs() -> list[dict[str, Any]]:
    unique = {json.dumps(d, sort_keys=True): d for d in bfcl_docs()}
    assert len(unique) > 3000  # the data is really there
    return list(unique.values())


@pytest.mark.slow
def test_every_bfcl_doc_becomes_valid_declarations_with_reversible_names(unique_docs: list[dict[str, Any]]) -> None:
    raw_invalid = sum(not META.is_valid(d["parameters"]) for d in unique_docs[:300])
    assert raw_invalid > 100  # the docs really are messy: "dict", "float", "any", Java types...
    checked: set[str] = set()
    for fmt, pattern in PATTERNS.items():
        result = normalize_tools(unique_docs, fmt)
        wire = get_format(fmt).tools_to_wire(result.specs)
        for doc, spec, declaration in zip(unique_docs, result.specs, wire, strict=True):
            schema = declaration["input_schema" if fmt == "anthropic" else "function"]
            schema = schema if fmt == "anthropic" else schema["parameters"]
            key = json.dumps(schema, sort_keys=True)
            if key not in checked:  # the two formats share schemas; validate each once
                assert META.is_valid(schema), doc["name"]
                checked.add(key)
            assert re.fullmatch(pattern, spec.name), spec.name
            assert result.names.original(spec.name) == doc["name"]
        assert len(set(result.names.as_dict())) == len(result.names.as_dict())


@pytest.mark.slow
def test_strict_mode_on_bfcl_says_which_tools_cannot_be_strict(unique_docs: list[dict[str, Any]]) -> None:
    result = normalize_tools(unique_docs, "openai-chat", strict=True)
    for spec in result.specs:
        assert META.is_valid(spec.parameters)
        if spec.strict:
            assert_strict(spec.parameters)
    names = {result.names.original(s.name) for s in result.specs if not s.strict}
    assert names == set(result.not_strict) and 0 < len(names) < len(unique_docs) // 10
    assert all("accepts any value" in why for why in result.not_strict.values())  # BFCL's "any" params


def assert_strict(schema: Mapping[str, Any]) -> None:
    if "properties" in schema:
        assert schema["additionalProperties"] is False and schema["required"] == list(schema["properties"])
        for sub in schema["properties"].values():
            assert_strict(sub)
    if "items" in schema:
        assert_strict(schema["items"])
    for sub in schema.get("anyOf", ()):
        assert_strict(sub)
    assert "default" not in schema


def test_messy_types_become_json_schema() -> None:
    messy = {
        "type": "dict",
        "properties": {
            "ratio": {"type": "float", "default": 0.5},
            "pair": {"type": "tuple", "items": [{"type": "integer"}, {"type": "String"}]},
            "blob": {"type": "any", "description": 3},
            "names": {"type": "ArrayList<String>", "items": {"type": "String"}},
            "cfg": {"type": "HashMap", "required": True},
            "n": {"type": ["long", "null"], "optional": True},
            "flag": {"type": "Boolean", "format": 5},
        },
        "required": ["ratio", "ratio", "n"],
    }
    out = normalize_schema(messy)
    assert META.is_valid(out)
    props = out["properties"]
    assert props["ratio"] == {"type": "number", "default": 0.5}
    assert props["pair"] == {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]}
    assert props["blob"] == {"description": "3"}
    assert props["names"] == {"type": "array", "items": {"type": "string"}}
    assert props["cfg"] == {"type": "object"} and props["flag"] == {"type": "boolean"}
    assert props["n"] == {"type": ["integer", "null"]}
    assert out["required"] == ["ratio", "cfg"]  # duplicates gone, "required": true lifted, optional removed


def test_an_unknown_type_names_its_path() -> None:
    with pytest.raises(ToolDefinitionError, match=r"parameters\.properties\.x\.type: unknown type 'Widget'"):
        normalize_schema({"type": "object", "properties": {"x": {"type": "Widget"}}})


def test_names_map_without_collisions_and_back() -> None:
    names = NameMap(max_length=64)
    assert names.wire("get_weather") == "get_weather"
    assert names.wire("math.sum") == "math_sum"
    other = names.wire("math/sum")  # would also be math_sum
    assert other != "math_sum" and re.fullmatch(PATTERNS["openai-chat"], other)
    long = names.wire("a." * 60)
    assert len(long) <= 64 and names.original(long) == "a." * 60
    assert names.wire("math.sum") == "math_sum"  # stable
    assert {names.original(w) for w in ("math_sum", other)} == {"math.sum", "math/sum"}
    call = ToolCall(id="c", name=other, arguments={})
    assert names.restore(call).name == "math/sum"
    assert names.as_dict() == {"math_sum": "math.sum", other: "math/sum", long: "a." * 60}


def test_strict_nullable_optionals_and_refusals() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"], "default": "c"}},
        "required": ["q"],
    }
    strict, why = strict_schema(schema)
    assert why is None
    assert strict == {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", None], "description": "Default: 'c'."},
        },
        "required": ["q", "unit"],
        "additionalProperties": False,
    }
    free = {"type": "object", "properties": {"meta": {"type": "object", "additionalProperties": True}}}
    assert (
        strict_schema(free)[1]
        == "parameters.properties.meta is a free-form object (no properties); strict mode needs them listed"
    )
    assert strict_schema({"type": "object", "properties": {"xs": {"type": "array"}}})[1] == (
        "parameters.properties.xs is an array without an items schema"
    )
