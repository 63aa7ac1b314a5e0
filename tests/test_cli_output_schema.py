"""``toolslip run --output-schema``: the answer as validated JSON on stdout, through each mode; and
``toolslip lint --output-schema``. Real subprocesses, the offline scripted demo."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_cli_run import toolslip  # the same subprocess, environment and timeout as every CLI test

QUESTION = "I spent 320 USD and 15000 JPY. Total in CNY, and per person for 4?"
EXPENSE = {"total_cny": 3002.6, "per_person_cny": 750.65}


@pytest.mark.parametrize("mode", [None, "tool", "prompted"])
def test_stdout_is_the_validated_value_alone(tmp_path: Path, mode: str | None) -> None:
    how = ["--output-mode", mode] if mode else []
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", "scripted", "--output-schema",
        "examples/expenses.py:Expense", *how, home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == EXPENSE
    assert "[step 4] calc(expr='3002.6 / 4') → 750.65" in done.stderr  # the steps went to stderr
    assert "[stop: completed after 5 model calls, 4 tool calls" in done.stderr


def test_a_json_schema_file_and_the_transcript(tmp_path: Path) -> None:
    schema = tmp_path / "expense.json"
    schema.write_text(
        json.dumps(
            {
                "title": "Expense",
                "type": "object",
                "properties": {"total_cny": {"type": "number"}, "per_person_cny": {"type": "number"}},
                "required": ["total_cny", "per_person_cny"],
            }
        )
    )
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", "scripted", "--output-schema", str(schema), "--json",
        home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    transcript = json.loads(done.stdout)
    assert transcript["data"] == EXPENSE and json.loads(transcript["output"]) == EXPENSE


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("examples/expenses.py:Nope", "examples/expenses.py defines no 'Nope'; types defined there: Expense"),
        ("examples/expenses.py", "name the type after the file, e.g. examples/expenses.py:Answer"),
        ("missing.json", "missing.json"),
    ],
)
def test_a_bad_output_schema_is_one_sentence(tmp_path: Path, spec: str, message: str) -> None:
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", "scripted", "--output-schema", spec, home=tmp_path
    )
    assert done.returncode != 0 and message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_lint_checks_an_output_schema(tmp_path: Path) -> None:
    schema = tmp_path / "verdict.json"
    schema.write_text(
        json.dumps(
            {
                "title": "Verdict",
                "type": "object",
                "properties": {
                    "label": {"type": "string", "description": "one of 'spam' or 'ham'"},
                    "scores": {"type": "object", "additionalProperties": {"type": "number"}},
                },
                "required": ["label"],
            }
        )
    )
    done = toolslip("lint", "--output-schema", str(schema), "--format", "json", home=tmp_path)
    assert done.returncode == 0, done.stderr  # warnings only
    rules = sorted((f["rule"], f.get("parameter")) for f in json.loads(done.stdout)["findings"])
    assert rules == [("output-not-strict", None), ("param-closed-set", "label"), ("param-undescribed", "scores")]
    clean = toolslip("lint", "--output-schema", "examples/expenses.py:Expense", "--fail-on", "warning", home=tmp_path)
    assert clean.returncode == 0, clean.stdout
