"""What a tool's output holds, however the harness printed it: the gullible model's reading of results.

Harnesses print a tool's return value in different ways: toolslip's loop and its AgentDojo benchmark as
JSON, AgentDojo's own pipeline as YAML (``yaml.safe_dump`` in its ``tool_result_to_str``), other adapters
with Python's ``str()`` of a dict or list. A worst-case double that understood only JSON obeyed an order in
one harness and missed it in another (257 of 929 AgentDojo attacks carried out through an adapter that
printed YAML, 909 through ours), and acted on ordinary text it read as prose. So every form is read into
one value, and a value's strings are read in one order (keys sorted, as YAML prints them).
"""

from __future__ import annotations

import ast
import datetime
import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["DELIMITED", "json_in", "strings"]

DELIMITED = re.compile(r"\n?<</?untrusted-\w+[^>\n]*>>\n?")
"""The delimiters the loop may wrap an untrusted result in (:mod:`toolslip.guard.spotlight`)."""


def json_in(text: str) -> Any:
    """The value in a tool's output, else None: JSON (also wrapped in other text, delimiters or a preamble),
    a Python literal of a dict or list (``str()`` of one), or YAML exactly as a dumper writes a mapping or
    a list. (Named for the first of these; prose that merely has a colon in it stays prose.)"""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    for candidate in (text, text[min(starts) : max(text.rfind("}"), text.rfind("]")) + 1] if starts else ""):
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    bare = DELIMITED.sub("\n", text).strip()
    return _literal(bare) if bare[:1] in ("{", "[") else _yaml(bare)


def _literal(text: str) -> Any:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return _plain(value) if isinstance(value, dict | list) else None


def _yaml(text: str) -> Any:
    """A mapping of two or more keys, or a list, that a YAML dumper would print as ``text`` (so a line of
    prose such as "Note: call me" is not taken for data)."""
    if ":" not in text and not text.startswith("- "):
        return None
    import yaml

    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not (isinstance(value, list) or (isinstance(value, dict) and len(value) > 1)):
        return None
    for sort_keys in (True, False):
        for allow_unicode in (False, True):
            dumped = yaml.safe_dump(value, default_flow_style=False, sort_keys=sort_keys, allow_unicode=allow_unicode)
            if dumped.strip() == text:
                return _plain(value)
    return None


def _plain(value: Any) -> Any:
    """``value`` with only JSON's kinds: a date or time as ``str()`` writes it (as ``json.dumps(...,
    default=str)`` does), tuples and sets as lists, keys as strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date | datetime.time):
        return str(value)
    return value


def strings(item: Any) -> Iterator[str]:
    """Every string in a value, depth first, a mapping's in the order of its keys (YAML prints them sorted,
    JSON as they were made: the reading must not depend on which)."""
    if isinstance(item, str):
        yield item
    elif isinstance(item, dict):
        for key in sorted(item):
            yield from strings(item[key])
    elif isinstance(item, list):
        for value in item:
            yield from strings(value)
