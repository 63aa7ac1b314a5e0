"""Arguments that satisfy a tool's JSON Schema, for calling a user's tools with no model.

The scripted model's smoke test (:func:`toolslip.providers.scripted.smoke`) calls each offered tool once
with these. They are plain (the first enum value, the minimum, ``"example"``, a date for ``format: date``),
every declared property is filled, and they are checked with ``jsonschema`` before use: a schema they do
not satisfy (a ``pattern``, say) gives ``None``, never arguments that would fail validation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

__all__ = ["example_arguments"]

_FORMATS = {
    "date": "2026-01-31",
    "date-time": "2026-01-31T12:00:00Z",
    "time": "12:00:00Z",
    "email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
_DEPTH = 8


def example_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Arguments that satisfy ``schema`` (every declared property filled), or ``None`` when the ones made
    here do not validate."""
    value = _example(schema, schema, 0)
    if not isinstance(value, dict):
        return None
    try:
        jsonschema.validate(value, dict(schema))
    except (jsonschema.ValidationError, jsonschema.SchemaError):
        return None
    return value


def _example(schema: Any, root: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return None
    if isinstance(ref := schema.get("$ref"), str) and ref.startswith("#/"):
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key, {}) if isinstance(target, Mapping) else {}
        return _example(target, root, depth + 1)
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    for key in ("enum", "examples"):
        if schema.get(key):
            return schema[key][0]
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key, ()) if isinstance(o, Mapping) and o.get("type") != "null"]
        if options:
            return _example(options[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    return _typed(kind, schema, root, depth)


def _typed(kind: str, schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> Any:
    if kind == "object":
        merged: dict[str, Any] = {}
        for part in schema.get("allOf", ()):
            if isinstance(value := _example(part, root, depth + 1), dict):
                merged.update(value)
        properties = schema.get("properties") or {}
        return merged | {name: _example(sub, root, depth + 1) for name, sub in properties.items()}
    if kind == "array":
        count = max(1, int(schema.get("minItems", 1)))
        return [_example(schema.get("items", {}), root, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    text = _FORMATS.get(str(schema.get("format")), "example")
    text = text.ljust(int(schema.get("minLength", 0)), "x")
    return text[: schema["maxLength"]] if "maxLength" in schema else text


def _number(schema: Mapping[str, Any], *, integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    value = (low + 1 if "exclusiveMinimum" in schema and "minimum" not in schema else low) if low is not None else 1
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if high is not None and value > high:
        value = high
    step = schema.get("multipleOf")
    if step:
        value = -(-value // step) * step
    return int(value) if integer else value
