"""BFCL's categories as tool-retrieval and abstention tasks.

The data ships inside the PyPI package ``bfcl-eval`` (install it with ``pip install --no-deps bfcl-eval``:
its own dependencies are a whole evaluation harness that the data does not need). Licence: Apache-2.0.

* :func:`load`: every function doc of some categories in one pool (identical docs once; a name may have
  several docs, as live functions do), and each single-call question as a query whose answer is the name
  of its ground-truth function.
* :func:`split`: the tuning half and the held-out half of a query set, by the answer's name, so no
  function of the held-out half was looked at while tuning the index.
* :func:`irrelevant`: questions that none of the functions offered with them can answer
  (``irrelevance``, ``live_irrelevance``), each with its own functions.
* :func:`every_doc`: every distinct function doc of every category, for a large realistic pool.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from toolslip.messages import ToolSpec

CATEGORIES = ("simple_python", "multiple")
"""What the index was first tuned on (docs/tool-search.md)."""
LIVE = ("live_simple", "live_multiple")
"""Functions real users contributed: the target that counts, split into a tuning and a held-out half."""
OTHER_LANGUAGES = ("simple_java", "simple_javascript")
IRRELEVANT = ("irrelevance", "live_irrelevance")


@dataclass(frozen=True)
class Query:
    id: str
    question: str
    answer: str
    """Name of the function the question should be answered with."""


@dataclass(frozen=True)
class Unanswerable:
    id: str
    question: str
    offered: tuple[ToolSpec, ...]
    """The functions offered with the question, none of which can answer it."""


def _data() -> Any:
    try:
        return resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise SystemExit("the BFCL data is missing: pip install --no-deps bfcl-eval") from None


def _lines(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _spec(doc: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=doc["name"], description=doc.get("description") or "", parameters=doc["parameters"])


def _question(item: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in item["question"][0] if m["role"] == "user")


def load(categories: Sequence[str] = CATEGORIES) -> tuple[list[ToolSpec], list[Query]]:
    pool: dict[str, ToolSpec] = {}  # keyed by the doc's JSON: identical docs once
    queries: list[Query] = []
    for query, offered in items(categories):
        for spec in offered:
            pool.setdefault(json.dumps([spec.name, spec.description, spec.parameters], sort_keys=True), spec)
        if query is not None:
            queries.append(query)
    return list(pool.values()), queries


def items(categories: Sequence[str]) -> Iterator[tuple[Query | None, tuple[ToolSpec, ...]]]:
    """Each test item: its single-call question (``None`` for a parallel item) and the functions offered."""
    data = _data()
    for category in categories:
        answers = {a["id"]: a for a in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")}
        for item in _lines(data / f"BFCL_v4_{category}.json"):
            truth = answers[item["id"]]["ground_truth"]
            # retrieval of one function per question; parallel items give their functions only
            query = Query(item["id"], _question(item), next(iter(truth[0]))) if len(truth) == 1 else None
            yield query, tuple(_spec(doc) for doc in item["function"])


def split(queries: Sequence[Query]) -> tuple[list[Query], list[Query]]:
    """The tuning half and the held-out half, by a hash of the answer's name (stable across runs)."""
    tuning = [q for q in queries if zlib.crc32(q.answer.encode()) % 2 == 0]
    held_out = [q for q in queries if zlib.crc32(q.answer.encode()) % 2 == 1]
    return tuning, held_out


def irrelevant(categories: Sequence[str] = IRRELEVANT) -> list[Unanswerable]:
    data = _data()
    return [
        Unanswerable(item["id"], _question(item), tuple(_spec(doc) for doc in item["function"]))
        for category in categories
        for item in _lines(data / f"BFCL_v4_{category}.json")
    ]


def every_doc() -> list[ToolSpec]:
    """Every distinct function doc of every BFCL category that has them, multi-turn APIs included."""
    data = _data()
    seen: dict[str, ToolSpec] = {}
    for doc in _docs(data):
        if isinstance(doc, dict) and isinstance(doc.get("parameters"), dict):
            seen.setdefault(json.dumps(doc, sort_keys=True), _spec(doc))
    return list(seen.values())


def _docs(data: Any) -> Iterator[dict[str, Any]]:
    for path in sorted(data.iterdir(), key=lambda p: p.name):
        if path.name.startswith("BFCL_v4_") and path.name.endswith(".json"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith('{"id"'):  # some categories hold other records (memory, web search)
                    yield from json.loads(line).get("function") or []
    for path in sorted((data / "multi_turn_func_doc").iterdir(), key=lambda p: p.name):
        yield from _lines(path)
