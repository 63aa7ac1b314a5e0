"""Malformed input to the command line: one sentence on stderr and exit 1 (2 for usage), never a traceback.

Each case here was found by a QA pass and failed before its fix (a traceback, a silent "no problems", or an
option quietly ignored).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from toolslip.checker import check
from toolslip.cli import main
from toolslip.errors import FormatError

EXAMPLES = Path(__file__).parent.parent / "examples"


def _error(capsys: pytest.CaptureFixture[str], argv: list[str], code: int = 1) -> str:
    try:
        result = main(argv)
    except SystemExit as exit_:  # argparse's own usage errors exit; a handler's UsageError returns 2
        result = exit_.code
    assert result == code
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    return err.splitlines()[-1]


def test_a_directory_given_as_a_file_is_named_as_a_directory(tmp_path, capsys):
    folder = tmp_path / "tools.py"
    folder.mkdir()
    err = _error(capsys, ["run", str(folder), "hi", "--model", "scripted:expenses", "--no-journal"])
    assert err == f"toolslip run: tools file {str(folder)!r} is a directory; give a file inside it"
    assert "is a directory" in _error(capsys, ["lint", str(tmp_path)])
    assert "is a directory" in _error(capsys, ["eval-report", str(tmp_path)])


def test_eval_report_names_a_results_line_that_is_not_an_object(tmp_path, capsys):
    results = tmp_path / "results.jsonl"
    results.write_text("[1, 2]\n")
    err = _error(capsys, ["eval-report", str(results)])
    assert err == f"toolslip eval-report: {results}:1: not a toolslip results line (expected a JSON object, got list)"


def test_report_paths_are_checked_before_any_work(tmp_path, capsys):
    missing = tmp_path / "no" / "report.html"
    suite = str(EXAMPLES / "suite_expenses.py")
    err = _error(capsys, ["eval", suite, "--model", "reference", "-k", "1", "--report", str(missing)])
    folder = str(missing.parent)
    assert err == f"toolslip eval: report path {str(missing)!r}: folder {folder!r} does not exist; create it first"
    assert not list(tmp_path.iterdir())  # nothing ran, nothing was written
    err = _error(capsys, ["eval-report", "whatever.jsonl", "--png", str(tmp_path)])
    assert "is a directory" in err


def test_a_file_the_command_cannot_write_is_one_sentence(tmp_path, capsys):
    out = tmp_path / "no" / "results.jsonl"
    suite = str(EXAMPLES / "suite_expenses.py")
    err = _error(capsys, ["eval", suite, "--model", "reference", "-k", "1", "--out", str(out)])
    assert err.startswith(f"toolslip eval: cannot use {str(out)!r}: No such file or directory")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["runs", "--limit", "0"], "argument --limit: must be at least 1, got 0"),
        (["runs", "--limit", "-1"], "argument --limit: must be at least 1, got -1"),
        (["resume", "r1", "--max-steps", "0"], "argument --max-steps: must be at least 1, got 0"),
        (["mcp-serve", "t.py", "--http", "--port", "70000"], "argument --port: must be between 0 and 65535, got 70000"),
        (["mcp-serve", "t.py", "--http", "--port", "x"], "argument --port: expected a whole number, got 'x'"),
        (["mcp-serve", "t.py", "--http", "--port", "-1"], "argument --port: must be between 0 and 65535, got -1"),
        (["run", "t.py", "Hi", "--temperature", "3"], "argument --temperature: must be between 0 and 2, got 3"),
        (["chat", "t.py", "--temperature", "hot"], "argument --temperature: expected a number from 0 to 2, got 'hot'"),
    ],
)
def test_numbers_out_of_range_are_usage_errors(capsys, argv, message):
    assert _error(capsys, argv, code=2) == f"toolslip {argv[0]}: {message} (see toolslip {argv[0]} --help)"


def test_mcp_serve_refuses_http_options_without_http(capsys):
    err = _error(capsys, ["mcp-serve", str(EXAMPLES / "expenses.py"), "--port", "9000"], code=2)
    assert (
        err == "toolslip mcp-serve: --host and --port only apply to --http; add --http, or drop them to serve on stdio"
    )


def test_check_reports_garbage_instead_of_no_problems(tmp_path, capsys):
    not_messages = tmp_path / "list.json"
    not_messages.write_text("[1, 2]")
    _error(capsys, ["check", str(not_messages)])
    report = check([1, 2])
    assert [(p.path, p.code) for p in report.problems] == [
        ("messages[0]", "not_an_object"),
        ("messages[1]", "not_an_object"),
    ]
    with pytest.raises(FormatError, match="neither 'messages' nor tools"):
        check({"a": 1})


def test_check_reads_tool_calls_that_are_not_objects(tmp_path, capsys):
    body = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "tool_calls": [5]}], "tools": []}
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "toolslip check: messages[1].tool_calls[0]: expected a tool call object, got int 5." in err
    problems = check({"messages": [{"role": "assistant", "tool_calls": "x"}]}).problems
    assert ("messages[0].tool_calls", "not_an_object") in [(p.path, p.code) for p in problems]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([str(EXAMPLES / "expenses.py")], f"no question: {EXAMPLES / 'expenses.py'} looks like the tools file"),
        ([str(EXAMPLES / "expenses.py"), "  "], "the question is empty; give the question after the tools file"),
    ],
)
def test_run_without_a_question_says_so(capsys, items, message):
    err = _error(capsys, ["run", *items, "--model", "scripted:expenses", "--no-journal"], code=2)
    assert err.startswith(f"toolslip run: {message}")


@pytest.mark.parametrize("command", [["runs"], ["show", "r1"], ["resume", "r1"]])
def test_a_journal_path_that_is_a_directory_is_named(tmp_path, capsys, command):
    err = _error(capsys, [*command, "--journal", str(tmp_path)])
    assert err.endswith(
        f"cannot open the run journal {str(tmp_path)!r}: it is a directory; give a file such as {tmp_path}/runs.sqlite"
    )


def test_convert_that_cannot_guess_names_the_command_line_option(tmp_path, capsys):
    body = tmp_path / "body.json"
    body.write_text('{"a": 1}')
    err = _error(capsys, ["convert", str(body), "--from", "openai-chat", "--to", "anthropic"])
    assert err.endswith("pass what=... (--what on the command line)")


@pytest.mark.parametrize("command", ["check", "convert"])
def test_empty_input_is_called_empty(tmp_path, capsys, monkeypatch, command):
    empty = tmp_path / "empty.json"
    empty.write_text("\n")
    options = ["--from", "openai-chat", "--to", "anthropic"] if command == "convert" else []
    assert (
        _error(capsys, [command, str(empty), *options]) == f"toolslip {command}: {empty} is empty; give a JSON document"
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert _error(capsys, [command, "-", *options]) == f"toolslip {command}: stdin is empty; give a JSON document"


@pytest.mark.parametrize(
    ("body", "fmt"),
    [
        (
            {"messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "x", "content": "r"}]},
            None,
        ),
        (
            {
                "max_tokens": 100,
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "x", "content": "r"},
                ],
            },
            "anthropic",
        ),
    ],
)
def test_check_fix_repairs_a_body_without_model(body, fmt):
    report = check(body, fmt, fix=True)
    assert report.changes, report.problems
    assert isinstance(report.fixed, dict)
    assert "model" not in report.fixed  # the rest of the body is left as given
    assert check(report.fixed, report.format).ok


CHAT_TOOLS = [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}]
CHAT_BODY = {
    "model": "m",
    "messages": [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ],
}


@pytest.mark.parametrize(
    ("data", "wrong"), [(CHAT_TOOLS, "anthropic"), (CHAT_BODY, "anthropic"), (CHAT_BODY, "bedrock")]
)
def test_convert_from_the_wrong_format_names_the_likely_one(tmp_path, capsys, data, wrong):
    """It said "anthropic tool declaration 'function' cannot be expressed..." of OpenAI Chat tools."""
    path = tmp_path / "body.json"
    path.write_text(json.dumps(data))
    err = _error(capsys, ["convert", str(path), "--from", wrong, "--to", "gemini"])
    assert err.startswith(
        f"toolslip convert: this looks like openai-chat data, not {wrong}: give openai-chat as its format "
        f"(--from openai-chat); read as {wrong}: "
    )
    assert main(["convert", str(path), "--from", "openai-chat", "--to", "gemini"]) == 0  # the guess reads it
