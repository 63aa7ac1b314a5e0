"""JSON Schema <-> Gemini's ``Schema`` (the OpenAPI 3.0 subset of ``functionDeclarations[].parameters``).

Gemini's ``parameters`` is not JSON Schema: ``type`` is one upper-case word (``OBJECT``, ``STRING``...,
or the proto enum's number), ``null`` is spelled ``nullable: true``, ``enum`` holds strings only, and
there is no ``$ref``, ``additionalProperties``, ``const``, ``oneOf``/``allOf``, tuple ``items``... An
``OBJECT`` must list its properties. Newer models also read full JSON Schema from
``parametersJsonSchema``; the writer in ``toolslip.formats.gemini`` uses ``parameters`` when a schema
fits this subset exactly and ``parametersJsonSchema`` when it does not, so nothing is lost either way.

- :func:`from_gemini`: a Gemini schema as JSON Schema (types lower-cased, ``nullable`` as a ``"null"``
  type); the other keywords keep their names, which mean the same in both.
- :func:`to_gemini`: JSON Schema as a Gemini schema, plus what it changed or could not say, each as
  ``(path, what)`` (``toolslip.convert`` reports them as losses).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["from_gemini", "to_gemini"]

Json = dict[str, Any]
Changes = list[tuple[str, str]]

_TYPES = ("TYPE_UNSPECIFIED", "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL")
"""The proto enum ``Type``, by number (some SDKs record ``"type": 6``)."""
_SUB = ("items",)
_SUBS = ("anyOf",)
_KEPT = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
"""The keywords of Gemini's ``Schema``."""
_SILENT = frozenset({"$schema", "$id", "$comment"})
"""JSON Schema keywords that say nothing about the arguments: left out without a word."""


def from_gemini(schema: object) -> Any:
    """A Gemini schema as JSON Schema (a value that is not an object is returned as it is)."""
    if not isinstance(schema, Mapping):
        return schema
    out: Json = {}
    nullable = schema.get("nullable") is True
    for key, value in schema.items():
        if key == "type":
            value = _type_from_gemini(value)
            if nullable and isinstance(value, str):
                value = [value, "null"]
        elif key == "nullable" and value is True and "type" in schema:
            continue
        elif key == "properties" and isinstance(value, Mapping):
            value = {name: from_gemini(sub) for name, sub in value.items()}
        elif key in _SUB:
            value = from_gemini(value)
        elif key in _SUBS and isinstance(value, list):
            value = [from_gemini(sub) for sub in value]
        out[key] = value
    return out


def _type_from_gemini(value: object) -> object:
    if type(value) is int and 0 < value < len(_TYPES):
        value = _TYPES[value]
    return value.lower() if isinstance(value, str) else value


def to_gemini(schema: Mapping[str, Any], path: str = "") -> tuple[Json, Changes]:
    """``schema`` (JSON Schema) in Gemini's subset, and the ``(path, what)`` of each change made to it."""
    changes: Changes = []
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    out = _to(schema, path, changes, defs, ())
    return out, changes


def _to(schema: object, path: str, changes: Changes, defs: Mapping[str, Any], seen: tuple[str, ...]) -> Json:
    if not isinstance(schema, Mapping):
        changes.append((path, f"a schema that is not an object ({schema!r}) sent as any value"))
        return {}
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in defs:
            changes.append((f"{path}.$ref", f"a {'recursive ' if name in seen else 'dangling '}$ref ({ref})"))
            return {}
        changes.append((f"{path}.$ref", f"$ref {ref} written out in place (Gemini has no $ref)"))
        return _to(
            {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}, path, changes, defs, (*seen, name)
        )
    out: Json = {}
    for key, value in schema.items():
        if key in ("$defs", "definitions") and not path:
            continue  # written out at each $ref
        _keyword(key, value, out, f"{path}.{key}", changes, defs, seen)
    if out.get("type") == "OBJECT" and not out.get("properties"):
        changes.append((path or ".", "an object without properties (Gemini requires them)"))
    return out


def _keyword(
    key: str, value: Any, out: Json, where: str, changes: Changes, defs: Mapping[str, Any], seen: tuple[str, ...]
) -> None:
    """One keyword of a JSON Schema object, written into ``out`` in Gemini's spelling (or reported)."""
    if key == "type":
        _type_to(value, out, where, changes)
    elif key == "properties" and isinstance(value, Mapping):
        out[key] = {name: _to(sub, f"{where}.{name}", changes, defs, seen) for name, sub in value.items()}
    elif key == "items":
        if isinstance(value, Mapping):
            out[key] = _to(value, where, changes, defs, seen)
        else:
            changes.append((where, "tuple items (one schema per position) left out"))
    elif key in ("anyOf", "oneOf") and isinstance(value, list):
        if key == "oneOf":
            changes.append((where, "oneOf sent as anyOf (Gemini has no oneOf)"))
        out["anyOf"] = [_to(sub, f"{where}[{i}]", changes, defs, seen) for i, sub in enumerate(value)]
    elif key == "const":
        out["enum"] = [value] if isinstance(value, str) else [str(value)]
        changes.append((where, f"const {value!r} sent as a one-value enum"))
    elif key == "enum" and isinstance(value, list):
        out[key] = [v if isinstance(v, str) else str(v) for v in value]
        if not all(isinstance(v, str) for v in value):
            changes.append((where, "an enum of values that are not strings sent as strings"))
    elif key in _KEPT:
        out[key] = value
    elif key not in _SILENT:
        changes.append((where, f"{key!r} left out (Gemini's schema has no such keyword)"))


def _type_to(value: object, out: Json, where: str, changes: Changes) -> None:
    kinds = value if isinstance(value, list) else [value]
    named = [k for k in kinds if isinstance(k, str) and k != "null"]
    if len(named) != len([k for k in kinds if k != "null"]) or not named:
        changes.append((where, f"type {value!r} left out"))
        return
    if len(named) > 1:
        out["anyOf"] = [{"type": k.upper()} for k in named]
        changes.append((where, f"a list of types ({value!r}) sent as anyOf"))
    else:
        out["type"] = named[0].upper()
    if "null" in kinds:
        out["nullable"] = True
