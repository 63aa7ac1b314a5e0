"""The newcomer's question set (issue 37) is well formed, and the benchmark's grader reads answers as meant."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _questions() -> list[dict[str, Any]]:
    lines = (ROOT / "tests" / "data" / "newcomer_questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("newcomer_bench", ROOT / "benchmarks" / "newcomer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_at_least_thirty_questions_in_english_and_chinese_of_every_kind() -> None:
    questions = _questions()
    assert len(questions) >= 30 and len({q["id"] for q in questions}) == len(questions)
    assert {q["lang"] for q in questions} == {"en", "zh"}
    assert {q["kind"] for q in questions} == {"one-tool", "arithmetic", "two-step", "could-not"}
    for q in questions:
        assert (q["kind"] == "could-not") == (not q["figures"]), q["id"]


def test_each_reference_answer_grades_correct_and_a_made_up_one_invented() -> None:
    bench = _bench()
    for q in _questions():
        # the reference answer, read with only the question and its own figures as what the tools gave
        assert bench.grade(q, q["answer"], f"{q['question']} {' '.join(q['figures'])}") == "correct", q["id"]
    trip = next(q for q in _questions() if q["id"] == "trip-en")
    assert bench.grade(trip, "About 45,500 CNY per person.", trip["question"]) == "invented"
    assert bench.grade(trip, "Sorry, I could not convert these.", trip["question"]) == "could_not"
    paris = next(q for q in _questions() if q["id"] == "no-paris-en")
    assert bench.grade(paris, "Paris is sunny, 20 °C.", '{"error": "no weather data for Paris"}') == "invented"
