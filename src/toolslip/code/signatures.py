"""Tools as the Python functions a program calls: one stub per tool, with its docstring and return type.

A model that writes code reads a signature faster than a JSON Schema, and a small *coder* model has seen
far more ``def fx(amount: float, currency: str) -> float`` than tool-call JSON. The stub is made from what
the model would otherwise see (the name, the description and the JSON Schema of the arguments, so an MCP
tool or a ``Tool.from_schema`` works the same) plus the function's return annotation when there is one.
"""

from __future__ import annotations

import inspect
import keyword
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["Declared", "parameter_names", "python_stub", "python_stubs", "return_type"]


class Declared(Protocol):
    """What a stub is made from: a :class:`~toolslip.Tool` has all of it (``fn`` may be ``None``)."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...
    @property
    def fn(self) -> Callable[..., Any] | None: ...


_SIMPLE = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _type(schema: Mapping[str, Any]) -> str:
    """A JSON Schema as a Python annotation, as far as one reads naturally (else ``Any``)."""
    if "enum" in schema:
        return "Literal[" + ", ".join(repr(v) for v in schema["enum"]) + "]"
    if "const" in schema:
        return f"Literal[{schema['const']!r}]"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " | ".join(dict.fromkeys(_type(s) for s in schema[key]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_type({**schema, "type": k}) for k in kind)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "array":
        items = schema.get("items")
        return f"list[{_type(items)}]" if isinstance(items, Mapping) else "list"
    if kind == "object":
        return "dict"
    return "Any"


def parameter_names(parameters: Mapping[str, Any]) -> list[str]:
    """The arguments in declaration order: how a positional argument in a program finds its name."""
    return list(parameters.get("properties", {}))


def return_type(fn: Callable[..., Any] | None) -> str:
    """The function's return annotation as written (``float``, ``dict[str, str]``), else ``Any``."""
    if fn is None:
        return "Any"
    try:
        annotation = inspect.signature(fn).return_annotation
    except (TypeError, ValueError):
        return "Any"
    if annotation is inspect.Signature.empty:
        return "Any"
    if isinstance(annotation, str):
        return annotation
    return annotation.__name__ if isinstance(annotation, type) else re.sub(r"\btyping\.", "", str(annotation))


def python_stub(tool: Declared) -> str:
    """``def name(a: T, b: U = default) -> R:`` with the description and each argument's as its docstring."""
    properties: Mapping[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", ()))
    params: list[str] = []
    documented: list[str] = []
    for name in sorted(properties, key=lambda n: n not in required):  # Python wants the required ones first
        schema = properties[name]
        shown = f"{name}_" if keyword.iskeyword(name) else name
        item = f"{shown}: {_type(schema)}"
        if name not in required:
            item += f" = {schema.get('default')!r}"
        params.append(item)
        if described := schema.get("description"):
            documented.append(f"    {shown}: {described}")
    head = f"def {tool.name}({', '.join(params)}) -> {return_type(tool.fn)}:"
    lines = [line.rstrip() for line in (tool.description or "").strip().splitlines()] or [tool.name]
    if documented:
        lines += ["", "Args:", *documented]
    body = "\n".join(f"    {line}" if line else "" for line in lines).replace('"""', "'''")
    return f'{head}\n    """{body.lstrip()}\n    """'


def python_stubs(tools: Sequence[Declared]) -> str:
    return "\n\n".join(python_stub(t) for t in tools)
