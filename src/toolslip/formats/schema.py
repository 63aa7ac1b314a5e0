"""Turn messy real-world tool definitions into declarations providers accept.

Tool docs in the wild (BFCL's function docs, Java and JavaScript API dumps, hand-written JSON) use
``"type": "dict"``, ``float``, ``tuple``, ``any``, ``String``, ``HashMap``, ``ArrayList``... and names with dots
that OpenAI and Anthropic reject. Three tools here:

- :func:`normalize_schema`: any such schema to valid JSON Schema Draft 2020-12, recursively.
- :class:`NameMap`: names to a provider's allowed pattern (OpenAI ``^[a-zA-Z0-9_-]{1,64}$``, Anthropic
  ``^[a-zA-Z0-9_-]{1,128}$``), reversibly and without collisions, so calls can be mapped back.
- :func:`strict_schema`: an OpenAI strict-mode schema (every property required, ``additionalProperties:
  false``, optional ones nullable), or the reason this schema cannot be made strict.

:func:`normalize_tools` does all three for a list of tool docs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import ToolDefinitionError
from ..core.messages import ToolCall, ToolSpec

__all__ = [
    "NAME_RULES",
    "NameMap",
    "NormalizedTools",
    "name_pattern",
    "normalize_schema",
    "normalize_tools",
    "strict_schema",
]

NAME_RULES: dict[str, int] = {
    "openai-chat": 64,
    "openai-functions": 64,
    "openai-responses": 64,
    "anthropic": 128,
}
"""Longest tool name each format accepts; every one allows only ``[a-zA-Z0-9_-]``."""
_NAME_CHARS = "a-zA-Z0-9_-"
_BAD_CHARS = re.compile(f"[^{_NAME_CHARS}]+")


def name_pattern(fmt: str) -> str:
    """The regular expression a tool name must match in format ``fmt`` (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return f"^[{_NAME_CHARS}]{{1,{NAME_RULES[fmt]}}}$"


_TYPES: dict[str, str | None] = {
    **dict.fromkeys(("object", "dict", "map", "hashmap", "treemap", "linkedhashmap", "hashtable", "record"), "object"),
    **dict.fromkeys(("number", "float", "double", "decimal", "bigdecimal", "real"), "number"),
    **dict.fromkeys(("integer", "int", "long", "short", "byte", "biginteger", "bigint"), "integer"),
    **dict.fromkeys(("boolean", "bool"), "boolean"),
    **dict.fromkeys(("string", "str", "char", "character", "charsequence", "date", "datetime"), "string"),
    **dict.fromkeys(("array", "list", "tuple", "arraylist", "linkedlist", "set", "hashset", "vector"), "array"),
    **dict.fromkeys(("null", "none", "nonetype", "void", "undefined"), "null"),
    **dict.fromkeys(("any", "", "mixed", "unknown", "object?"), None),  # any value: no type keyword
}
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_DROPPED = frozenset({"optional", "format", "required"})
"""Dropped where invalid: ``optional`` is not JSON Schema (the parent's ``required`` says it), a draft-3
``"required": true`` moves to the parent, a non-string ``format`` is invalid."""
_SUBSCHEMA_ONE = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
)


# --- schemas ----------------------------------------------------------------------------------------


def normalize_schema(schema: Mapping[str, Any], path: str = "parameters") -> dict[str, Any]:
    """``schema`` as valid JSON Schema Draft 2020-12 for a tool's arguments (an object schema).

    Raises :class:`ToolDefinitionError` naming the path of a type it cannot read.
    """
    out = _normalize(schema, path)
    if "type" not in out and "properties" in out or not out:
        out["type"] = "object"
    if out.get("type") == "object":
        out.setdefault("properties", {})
    return out


def _normalize(schema: object, path: str) -> dict[str, Any]:
    if schema is True or schema is False:
        return {} if schema else {"not": {}}
    if not isinstance(schema, Mapping):
        raise ToolDefinitionError(f"{path}: expected a schema object, got {type(schema).__name__}")
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            kind = _type(value, f"{path}.type")
            if kind is not None:
                out["type"] = kind
        elif key == "items" and isinstance(value, list):  # the pre-2020 tuple form
            out["prefixItems"] = [_normalize(sub, f"{path}.items[{i}]") for i, sub in enumerate(value)]
        elif key == "required" and isinstance(value, list):
            out[key] = list(dict.fromkeys(value))
        elif key == "description" and not isinstance(value, str):
            out[key] = str(value)
        elif key not in _DROPPED or (key == "format" and isinstance(value, str)):
            out[key] = _keyword(key, value, path)
    _lift_required(schema, out)
    return out


def _keyword(key: str, value: Any, path: str) -> Any:
    """The value of keyword ``key``, with its sub-schemas normalized."""
    if key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
        return {name: _normalize(sub, f"{path}.{key}.{name}") for name, sub in value.items()}
    if key in _SUBSCHEMA_LISTS and isinstance(value, list):
        return [_normalize(sub, f"{path}.{key}[{i}]") for i, sub in enumerate(value)]
    if key in _SUBSCHEMA_ONE and isinstance(value, Mapping | bool):
        return _normalize(value, f"{path}.{key}")
    return value


def _lift_required(schema: Mapping[str, Any], out: dict[str, Any]) -> None:
    """Per-property ``"required": true`` / ``"optional": true`` become the parent's ``required`` list."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return
    required = list(out.get("required", []))
    for name, sub in props.items():
        if not isinstance(sub, Mapping):
            continue
        if sub.get("required") is True and name not in required:
            required.append(name)
        if sub.get("optional") is True and name in required:
            required.remove(name)
    if required or "required" in out:
        out["required"] = required


def _type(value: object, path: str) -> str | list[str] | None:
    if isinstance(value, list):
        kinds = [_type(v, f"{path}[{i}]") for i, v in enumerate(value)]
        if None in kinds:
            return None  # one alternative is "any": the whole value is any
        unique = list(dict.fromkeys(k for k in kinds if isinstance(k, str)))
        return unique[0] if len(unique) == 1 else unique
    if not isinstance(value, str):
        raise ToolDefinitionError(f"{path}: expected a type name, got {value!r}")
    key = value.strip().lower()
    key = key.split("<", 1)[0].split("[", 1)[0]  # ArrayList<String>, List[str]: the container decides
    if key.endswith("[]"):
        key = "array"
    if key not in _TYPES:
        known = ", ".join(sorted(k for k in _TYPES if k))
        raise ToolDefinitionError(f"{path}: unknown type {value!r}; use a JSON Schema type (or one of: {known})")
    return _TYPES[key]


# --- strict mode ------------------------------------------------------------------------------------

_NOT_STRICT = ("patternProperties", "allOf", "not", "if", "then", "else", "prefixItems", "dependentSchemas")


class _NotStrict(Exception):
    pass


def strict_schema(schema: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``(strict schema, None)``, or ``(schema unchanged, why it cannot be strict)``.

    Strict means what OpenAI's strict mode demands: every object lists all its properties as required
    and sets ``additionalProperties: false``; a property that was optional accepts ``null`` instead.
    ``default`` is not allowed there; it moves into the description.
    """
    try:
        return _strict(schema, "parameters"), None
    except _NotStrict as exc:
        return dict(schema), str(exc)


def _strict(schema: Mapping[str, Any], path: str) -> dict[str, Any]:
    for key in _NOT_STRICT:
        if key in schema:
            raise _NotStrict(f"{path} uses {key!r}, which strict mode does not support")
    out = {k: v for k, v in schema.items() if k != "default"}
    if "default" in schema:
        note = f"Default: {schema['default']!r}."
        out["description"] = f"{schema['description']} {note}" if schema.get("description") else note
    if "type" not in out and not any(k in out for k in ("anyOf", "enum", "const", "$ref")):
        raise _NotStrict(f"{path} accepts any value; strict mode needs a type")
    if out.get("type") == "object" or "properties" in out:
        props = out.get("properties") or {}
        if not props and out.get("additionalProperties") not in (None, False):
            raise _NotStrict(f"{path} is a free-form object (no properties); strict mode needs them listed")
        required = set(out.get("required", ()))
        out["properties"] = {
            name: _strict(sub, f"{path}.properties.{name}")
            if name in required
            else _nullable(_strict(sub, f"{path}.properties.{name}"))
            for name, sub in props.items()
        }
        out["required"] = list(props)
        out["additionalProperties"] = False
    if out.get("type") == "array" or "items" in out:
        if not isinstance(out.get("items"), Mapping):
            raise _NotStrict(f"{path} is an array without an items schema")
        out["items"] = _strict(out["items"], f"{path}.items")
    for key in ("anyOf", "oneOf"):
        if key in out:
            out[key] = [_strict(sub, f"{path}.{key}[{i}]") for i, sub in enumerate(out[key])]
    for key in ("$defs", "definitions"):
        if key in out:
            out[key] = {name: _strict(sub, f"{path}.{key}.{name}") for name, sub in out[key].items()}
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    if isinstance(kind, str) and kind != "null":
        return {**schema, "type": [kind, "null"], **({"enum": [*schema["enum"], None]} if "enum" in schema else {})}
    if isinstance(kind, list) and "null" not in kind:
        return {**schema, "type": [*kind, "null"]}
    if kind is None:
        return {"anyOf": [schema, {"type": "null"}]}
    return schema


# --- names ------------------------------------------------------------------------------------------


@dataclass
class NameMap:
    """Original tool names <-> names a provider accepts; reversible and collision-free.

    A name that already fits is kept. Another has each run of other characters replaced by ``_``
    (``math.sum`` -> ``math_sum``); if that is taken or too long, it is cut and a short hash of the original
    appended, so two originals never share a wire name. Names are assigned in order of first use. Keep
    the map to turn the model's calls back into the original names (:meth:`restore`).
    """

    max_length: int = 64
    _wire: dict[str, str] = field(default_factory=dict)
    _original: dict[str, str] = field(default_factory=dict)

    def wire(self, name: str) -> str:
        """The provider-safe name for ``name`` (assigned on first use)."""
        if name in self._wire:
            return self._wire[name]
        candidate = _BAD_CHARS.sub("_", name) or "tool"
        if len(candidate) > self.max_length or candidate in self._original:
            tag = hashlib.sha1(name.encode()).hexdigest()[:8]
            candidate = f"{candidate[: self.max_length - 9]}_{tag}"
        base, n = candidate, 2
        while candidate in self._original:  # taken even with the hash: count up until free
            candidate = f"{base[: self.max_length - len(str(n)) - 1]}_{n}"
            n += 1
        self._wire[name], self._original[candidate] = candidate, name
        return candidate

    def original(self, wire_name: str) -> str:
        """The original name behind ``wire_name`` (the name itself when it was never mapped)."""
        return self._original.get(wire_name, wire_name)

    def restore(self, call: ToolCall) -> ToolCall:
        """``call`` with the original tool name, for running it against the original tools."""
        name = self.original(call.name)
        return call if name == call.name else replace(call, name=name)

    def as_dict(self) -> dict[str, str]:
        """``{wire name: original name}`` for every name that changed (JSON-friendly, to store the map)."""
        return {w: o for w, o in self._original.items() if w != o}


# --- whole tool lists -------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormalizedTools:
    specs: tuple[ToolSpec, ...]
    names: NameMap
    not_strict: Mapping[str, str] = field(default_factory=dict)
    """Original tool name -> why it could not be made strict (only when ``strict=True`` was asked)."""


def normalize_tools(
    docs: Iterable[Mapping[str, Any] | ToolSpec], fmt: str = "openai-chat", *, strict: bool = False
) -> NormalizedTools:
    """Tool docs (``{name, description, parameters}``, Chat-wrapped, or ToolSpecs) ready for format ``fmt``."""
    if fmt not in NAME_RULES:
        raise ToolDefinitionError(f"unknown format {fmt!r}; expected one of {', '.join(NAME_RULES)}")
    names = NameMap(NAME_RULES[fmt])
    specs: list[ToolSpec] = []
    not_strict: dict[str, str] = {}
    for i, doc in enumerate(docs):
        spec = doc if isinstance(doc, ToolSpec) else _spec_from_doc(doc, f"tools[{i}]")
        parameters = normalize_schema(spec.parameters, f"tools[{i}].parameters")
        made: bool | None = None
        if strict:
            parameters, why = strict_schema(parameters)
            made = why is None
            if why is not None:
                not_strict[spec.name] = why
        specs.append(replace(spec, name=names.wire(spec.name), parameters=parameters, strict=made or spec.strict))
    return NormalizedTools(tuple(specs), names, not_strict)


def _spec_from_doc(doc: Mapping[str, Any], path: str) -> ToolSpec:
    if doc.get("type") == "function" and isinstance(doc.get("function"), Mapping):
        doc = doc["function"]
    name = doc.get("name")
    if not isinstance(name, str) or not name:
        raise ToolDefinitionError(f"{path}.name: every tool needs a name")
    params = doc.get("parameters", doc.get("input_schema", {}))
    description = doc.get("description", "")
    return ToolSpec(name=name, description=str(description), parameters=params if isinstance(params, Mapping) else {})
