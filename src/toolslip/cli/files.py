"""Loading the user's files (a tools file, or JSON from a file or stdin) and printing JSON to a pipe."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..agent.tools import Tool, Toolbox
from ..core._files import import_user_file
from ..core.errors import ConfigError
from .interrupts import ctrl_c_held

__all__ = ["MAX_DEPTH", "load_json", "load_tools_file", "load_tools_files", "print_json"]

MAX_DEPTH = 200
"""How deeply nested a JSON document may be. Real API bodies and schemas stay far below; much deeper
input is an attack or a mistake, and would exhaust Python's recursion while it is printed."""


def load_tools_file(path: str) -> Toolbox:
    """Import ``path`` and collect its ``@tool`` objects, in definition order.

    Every way this can fail ends in one :class:`ConfigError` sentence that names the file and the line.
    """
    with ctrl_c_held():  # the first @tool imports pydantic-core
        module = import_user_file(path, "tools file")
    tools = [v for v in vars(module).values() if isinstance(v, Tool)]
    if not tools:
        raise ConfigError(f"{path} defines no tools; decorate functions with @toolslip.tool")
    return Toolbox(tools)


def load_tools_files(paths: Sequence[str]) -> Toolbox:
    """The tools of several files together; two tools of one name are a ConfigError naming both files."""
    seen: dict[str, str] = {}
    tools: list[Tool] = []
    for path in paths:
        for t in load_tools_file(path):
            if t.name in seen:
                raise ConfigError(f"two tools are named {t.name!r}, in {seen[t.name]} and in {path}; rename one")
            seen[t.name] = path
            tools.append(t)
    return Toolbox(tools)


def load_json(path: str) -> Any:
    """The JSON document in file ``path`` (``-`` reads stdin); a bad file is one ConfigError sentence."""
    name = "stdin" if path == "-" else path
    try:
        raw = _stdin_bytes() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{name} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); JSON must be UTF-8"
        ) from None
    if not text.strip():
        raise ConfigError(f"{name} is empty; give a JSON document")
    too_deep = f"{name} nests JSON more than {MAX_DEPTH} levels deep; toolslip reads no deeper"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ConfigError(too_deep) from None
    if _too_deep(data):
        raise ConfigError(too_deep)
    return data


def _stdin_bytes() -> bytes:
    """Standard input as bytes, so that its encoding is checked here (a text stream, as tests give, too)."""
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer.read() if buffer is not None else sys.stdin.read().encode()


def _too_deep(data: Any) -> bool:
    """Whether ``data`` nests more than MAX_DEPTH levels, walked without recursion (a deep document would
    exhaust it)."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return True
            stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value))
    return False


def print_json(data: Any) -> None:
    """Print ``data`` as indented JSON (a reader that goes away is :mod:`toolslip.cli.streams`' concern)."""
    print(json.dumps(data, ensure_ascii=False, indent=2))


def load_output_type(spec: str) -> Any:
    """``--output-schema``'s value: a JSON Schema file, or ``FILE.py:NAME`` naming a type in a Python file
    (a pydantic model, dataclass, TypedDict, a union...). A value that names no schema or type is a
    :class:`UsageError` (exit 2); a file that cannot be read is a ConfigError (exit 1)."""
    from ..agent.answers import is_answer_type
    from . import UsageError

    path, sep, name = spec.rpartition(":")
    if sep and path.endswith(".py") and name.isidentifier():
        with ctrl_c_held():
            module = import_user_file(path, "output schema file")
        types = sorted(n for n, v in vars(module).items() if isinstance(v, type) and v.__module__ == module.__name__)
        there = f"types defined there: {', '.join(types) or 'none'}"
        if not hasattr(module, name):
            raise UsageError(f"--output-schema {spec}: {path} defines no {name!r}; {there}")
        found = getattr(module, name)
        if isinstance(found, dict) or not is_answer_type(found):  # a tool, a dict of data: not a type
            raise UsageError(f"--output-schema {spec}: {name} is a {_kind(found)}, not a type; {there}")
        return found
    if spec.endswith(".py"):
        raise UsageError(f"--output-schema {spec}: name the type after the file, e.g. {spec}:Answer")
    schema = load_json(spec)
    if not isinstance(schema, dict):
        raise UsageError(f"--output-schema {spec} holds a JSON {type(schema).__name__}; a JSON Schema is an object")
    if not is_answer_type(schema):
        raise UsageError(f"--output-schema {spec} has no JSON Schema keyword (type, properties...): it is data")
    return schema


def _kind(value: object) -> str:
    return "tool" if isinstance(value, Tool) else type(value).__name__
