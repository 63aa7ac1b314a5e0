"""``toolslip run --output-schema``: the answer as validated JSON on stdout, through each mode; and
``toolslip lint --output-schema``; ``toolslip resume`` of a typed run. Real subprocesses, the offline
scripted demo."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from test_cli_run import toolslip  # the same subprocess, environment and timeout as every CLI test
from toolslip.cli import EXIT_STOPPED

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


# The seed's expense tools, with calc made side-effecting (it writes a book), so the run pauses for approval.
BOOKED = """
from pathlib import Path
from toolslip import tool
from toolslip._files import import_user_file

EXAMPLE = import_user_file(%r, "tools file")
fx = EXAMPLE.fx


@tool(effects="side_effect")
def calc(expr: str) -> str:
    \"\"\"Evaluate an arithmetic expression exactly, and write it in the expense book.\"\"\"
    with Path(__file__).with_name("book").open("a") as book:
        book.write(expr + "\\n")
    return EXAMPLE.calc.fn(expr)
"""


@pytest.mark.parametrize("mode", [None, "tool"])
def test_resume_of_a_typed_run_ends_in_the_same_typed_answer(tmp_path: Path, mode: str | None) -> None:
    tools = tmp_path / "booked.py"
    tools.write_text(BOOKED % str(Path("examples/expenses.py").resolve()))
    how = ["--output-mode", mode] if mode else []
    paused = toolslip(
        "run", str(tools), QUESTION, "--model", "scripted", "--output-schema", "examples/expenses.py:Expense",
        "--approve", "pause", *how, home=tmp_path,
    )  # fmt: skip
    assert paused.returncode == EXIT_STOPPED, paused.stderr
    assert paused.stdout == ""  # no value yet: the run waits for the first calc to be approved
    run_id = re.findall(r"; run (\S+?)\]", paused.stderr)[-1]
    # Nothing about the answer's type is given again: the journal holds it.
    done = toolslip("resume", run_id, "--approve", "yes", home=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == EXPENSE
    assert (tmp_path / "book").read_text() == "2297.6 + 705.0\n3002.6 / 4\n"


_TYPED_MODEL = """
from toolslip.messages import Message
from toolslip.testing import ScriptedModel, StreamedModel, call

answers = [
    Message.assistant("Converting first.", [call("fx", amount=320, currency="USD")]),
    '{"total_cny": 2297.6,  "per_person_cny": 574}',  # spelt as a model might: the value reads it otherwise
]
streamed = StreamedModel(ScriptedModel(list(answers)), chunk_size=5)
whole = ScriptedModel(list(answers))
in_a_call = StreamedModel(ScriptedModel([answers[0], call("final_answer", total_cny=2297.6, per_person_cny=574)]))
"""


@pytest.mark.parametrize(("name", "mode"), [("streamed", "native"), ("whole", "native"), ("in_a_call", "tool")])
def test_a_typed_run_shows_one_text_for_its_answer(tmp_path: Path, name: str, mode: str) -> None:
    """Issue 36: the model's JSON was streamed to the screen as written, then the validated value printed
    after it: two texts for one answer. The screen (stdout and stderr) holds only the value, once."""
    (tmp_path / "typed.py").write_text(_TYPED_MODEL)
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", f"{tmp_path / 'typed.py'}:{name}",
        "--output-schema", "examples/expenses.py:Expense", "--output-mode", mode, "--no-journal", home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    value = '{"total_cny": 2297.6, "per_person_cny": 574.0}'
    assert done.stdout == value + "\n"
    screen = done.stdout + done.stderr
    assert screen.count("total_cny") == 1, screen
    assert "Converting first." in done.stderr  # text said beside a tool call is no answer: it is still shown
    transcript = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", f"{tmp_path / 'typed.py'}:{name}",
        "--output-schema", "examples/expenses.py:Expense", "--output-mode", mode, "--no-journal", "--json",
        home=tmp_path,
    )  # fmt: skip
    assert transcript.returncode == 0, transcript.stderr
    assert json.dumps(json.loads(transcript.stdout)["data"]) == value
    assert "total_cny" not in transcript.stderr


_GUESSING_MODEL = """
from toolslip.messages import Message, ModelResponse
from toolslip.testing import ScriptedModel

# the embedded model's figure check leaves its finding in the response (a typed answer cannot carry a line)
answer = ModelResponse(
    message=Message.assistant('{"total_cny": 32000000.0, "per_person_cny": 8000000.0}'),
    stop_reason="end_turn",
    model="local",
    extra={"ungrounded": ("32000000.0", "8000000.0")},
)
guess = ScriptedModel([answer])
"""


def test_a_typed_answer_with_figures_no_tool_gave_says_so_beside_the_value(tmp_path: Path) -> None:
    # issue 37: the 0.5B model's typed answer to the seed's trip, 0 calls, printed as if it were data
    (tmp_path / "guess.py").write_text(_GUESSING_MODEL)
    done = toolslip(
        "run", "examples/expenses.py", QUESTION, "--model", f"{tmp_path / 'guess.py'}:guess",
        "--output-schema", "examples/expenses.py:Expense", "--no-journal", home=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"total_cny": 32000000.0, "per_person_cny": 8000000.0}  # stdout: the value
    assert (
        "[not from a tool: 32000000.0, 8000000.0 — the model wrote these figures itself; no tool result gave them]"
        in done.stderr
    )
