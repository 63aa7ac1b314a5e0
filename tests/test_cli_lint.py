"""``toolslip lint``: exit codes for CI, JSON output, per-tool disabling, clear errors for bad input."""

import json
from pathlib import Path

import pytest

from toolslip.cli import EXIT_ERROR, EXIT_OK, EXIT_USAGE, main

ROOT = Path(__file__).resolve().parents[1]
BLOATED = str(ROOT / "tests" / "data" / "orders_bloated.json")
CLEAN = str(ROOT / "tests" / "data" / "orders_clean.json")


def test_errors_exit_non_zero_and_json_lists_findings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", BLOATED, "--format", "json"]) == EXIT_ERROR
    report = json.loads(capsys.readouterr().out)
    assert report["errors"] > 0
    assert {f["rule"] for f in report["findings"]} >= {"overlap", "description-short", "param-undescribed"}
    assert report["cost"]["totals"]["openai-chat"] > 0 and report["cost"]["tokenizer"] == "o200k_base"


def test_clean_set_exits_zero_with_a_cost_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", CLEAN]) == EXIT_OK
    out = capsys.readouterr().out
    assert "2 tools: 0 errors, 0 warnings" in out
    assert "largest: list_orders" in out and "of 128k" in out


def test_python_file_of_tools(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(ROOT / "examples" / "expenses.py"), "--fail-on", "warning"]) == EXIT_OK
    assert "2 tools: 0 errors, 0 warnings" in capsys.readouterr().out


def test_disable_rules_everywhere_or_per_tool(capsys: pytest.CaptureFixture[str]) -> None:
    main(["lint", BLOATED, "--format", "json", "--disable", "overlap", "--disable", "find_order:description-short"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert "overlap" not in {f["rule"] for f in findings}
    assert ("find_order", "description-short") not in {(f["tool"], f["rule"]) for f in findings}
    assert ("query_orders", "description-short") in {(f["tool"], f["rule"]) for f in findings}


def test_warnings_fail_only_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    declarations = json.loads(Path(CLEAN).read_text(encoding="utf-8"))
    del declarations[1]["function"]["parameters"]["properties"]["user_id"]["description"]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps(declarations), encoding="utf-8")
    assert main(["lint", str(path)]) == EXIT_OK
    assert main(["lint", str(path), "--fail-on", "warning"]) == EXIT_ERROR


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ("[]", "expected a non-empty JSON list"),
        ('[{"description": "x"}]', "item 0 is not a tool declaration of any shape lint reads"),
        (
            '[{"name": "a", "input_schema": {}}, {"name": "x", "input_schema": 3}]',
            "tools.json[1].input_schema: expected",
        ),
    ],
)
def test_bad_input_is_one_clear_sentence(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "tools.json"
    path.write_text(content, encoding="utf-8")
    assert main(["lint", str(path)]) == EXIT_ERROR
    err = capsys.readouterr().err
    assert err.startswith("toolslip lint: ") and message in err and "Traceback" not in err


def test_unknown_rule_and_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", CLEAN, "--disable", "typo-rule"]) == EXIT_USAGE  # bad usage, as the README says
    assert "unknown lint rule 'typo-rule'" in capsys.readouterr().err
    assert main(["lint", "missing.json"]) == EXIT_ERROR
    assert "does not exist" in capsys.readouterr().err


def test_lint_reads_a_running_mcp_server() -> None:
    import subprocess
    import sys

    server = f"{sys.executable} -m toolslip.cli mcp-serve examples/expenses.py"
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "lint", "--mcp", server, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert sorted(t["name"] for t in report["cost"]["tools"]) == ["calc", "fx"]
