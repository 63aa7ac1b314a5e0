"""BFCL's ``simple_python`` and ``multiple`` categories as a tool-retrieval task.

The data ships inside the PyPI package ``bfcl-eval`` (install it with ``pip install --no-deps bfcl-eval``:
its own dependencies are a whole evaluation harness that the data does not need). Every function doc of
both categories goes into one pool: 753 distinct docs under 589 names (some functions appear in several
test items with slightly different wording; identical docs are kept once). Each question is a query whose
right answer is the function name of its ground truth; a name counts once in a ranking, at its best doc.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from toolslip.messages import ToolSpec

CATEGORIES = ("simple_python", "multiple")
HELD_OUT = ("live_simple", "live_multiple", "simple_java", "simple_javascript")
"""Categories the index was never tuned on: real users' functions (live) and other languages' docs."""


@dataclass(frozen=True)
class Query:
    id: str
    question: str
    answer: str
    """Name of the function the question should be answered with."""


def _lines(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(categories: tuple[str, ...] = CATEGORIES) -> tuple[list[ToolSpec], list[Query]]:
    try:
        data = resources.files("bfcl_eval") / "data"
    except ModuleNotFoundError:
        raise SystemExit("the BFCL data is missing: pip install --no-deps bfcl-eval") from None
    pool: dict[str, ToolSpec] = {}  # keyed by the doc's JSON: identical docs once
    queries: list[Query] = []
    for category in categories:
        answers = {a["id"]: a for a in _lines(data / "possible_answer" / f"BFCL_v4_{category}.json")}
        for item in _lines(data / f"BFCL_v4_{category}.json"):
            for doc in item["function"]:
                pool.setdefault(
                    json.dumps(doc, sort_keys=True),
                    ToolSpec(name=doc["name"], description=doc.get("description", ""), parameters=doc["parameters"]),
                )
            truth = answers[item["id"]]["ground_truth"]
            if len(truth) != 1:  # retrieval of one function per question; parallel items are left out
                continue
            (answer,) = truth
            question = " ".join(m["content"] for m in item["question"][0] if m["role"] == "user")
            queries.append(Query(item["id"], question, next(iter(answer))))
    return list(pool.values()), queries
