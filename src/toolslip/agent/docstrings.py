"""Split a docstring into the tool description and per-parameter descriptions.

Three styles are common in Python code and all three are read:

* Google:  ``Args:`` then ``name (type): text`` lines, continuation lines indented deeper;
* NumPy:   ``Parameters`` underlined with dashes, ``name : type`` then indented text;
* Sphinx:  ``:param name: text`` (and ``:param type name: text``).

The description the model sees is the docstring's prose before the first section header: a parameter
list restated inside the description would only cost tokens.
"""

from __future__ import annotations

import inspect
import re

__all__ = ["parse_docstring"]

_GOOGLE_HEADER = re.compile(r"^(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_OTHER = re.compile(r"^(Returns?|Yields?|Raises|Examples?|Notes?|Attributes|See Also|Warnings?)\s*:\s*$")
_GOOGLE_PARAM = re.compile(r"^\*{0,2}(\w+)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_UNDERLINE = re.compile(r"^-{3,}\s*$")
_SPHINX_PARAM = re.compile(r"^:param\s+(?:[^:]*\s+)?(\w+)\s*:\s*(.*)$")
_SPHINX_FIELD = re.compile(r"^:\w+")


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """Return ``(description, {parameter: description})`` for a docstring (``None`` gives empties)."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    description: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if _GOOGLE_HEADER.match(stripped):
            i = _read_google(lines, i + 1, params)
        elif i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1].strip()) and stripped:
            i = (
                _read_numpy(lines, i + 2, params)
                if stripped in ("Parameters", "Args", "Arguments")
                else _skip_numpy(lines, i + 2)
            )
        elif _GOOGLE_OTHER.match(stripped):
            i = _skip_indented(lines, i + 1)
        elif m := _SPHINX_PARAM.match(stripped):
            text, i = _continuation(lines, i + 1, [m.group(2)])
            params[m.group(1)] = text
        elif _SPHINX_FIELD.match(stripped):
            _, i = _continuation(lines, i + 1, [])
        else:
            if not params:
                description.append(line)
            i += 1
    return "\n".join(description).strip(), params


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _read_google(lines: list[str], i: int, params: dict[str, str]) -> int:
    base: int | None = None
    current: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if _indent(line) == 0:
            return i
        if base is None:
            base = _indent(line)
        if _indent(line) <= base:
            m = _GOOGLE_PARAM.match(line.strip())
            if m:
                current = m.group(1)
                params[current] = m.group(3).strip()
        elif current is not None:
            params[current] = (params[current] + " " + line.strip()).strip()
        i += 1
    return i


def _read_numpy(lines: list[str], i: int, params: dict[str, str]) -> int:
    current: list[str] = []  # "start, end : str" documents two parameters with one text
    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1].strip()):
            return i
        if not line.strip():
            i += 1
            continue
        if _indent(line) == 0:
            names, _, _ = line.partition(":")
            current = [n.strip().lstrip("*") for n in names.split(",") if n.strip()]
            for name in current:
                params[name] = ""
        else:
            for name in current:
                params[name] = (params[name] + " " + line.strip()).strip()
        i += 1
    return i


def _skip_numpy(lines: list[str], i: int) -> int:
    while i < len(lines):
        if i + 1 < len(lines) and _NUMPY_UNDERLINE.match(lines[i + 1].strip()):
            return i
        i += 1
    return i


def _skip_indented(lines: list[str], i: int) -> int:
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > 0):
        i += 1
    return i


def _continuation(lines: list[str], i: int, text: list[str]) -> tuple[str, int]:
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > 0 and not _SPHINX_FIELD.match(lines[i].strip()):
        text.append(lines[i].strip())
        i += 1
    return " ".join(t for t in text if t).strip(), i
