"""``toolslip eval``, ``eval-report`` and ``eval-compare`` as a user runs them."""

import json
import re
import sys
from pathlib import Path

import pexpect
import pytest

from toolslip.cli import main
from toolslip.evals import read_results

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")


def test_eval_writes_results_a_table_and_a_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, html = tmp_path / "r.jsonl", tmp_path / "r.html"
    code = main(["eval", EXAMPLE, "--model", "reference", "--model", "flaky:0.5", "-k", "3", "--out", str(out),
                 "--report", str(html)])  # fmt: skip
    table = capsys.readouterr().out
    assert code == 0
    records = read_results(out)
    assert len(records) == 2 * 5 * 3
    assert "expenses · reference: 5 tasks, 15 scored trials" in table
    assert "  pass^k    1.000  1.000  1.000" in table
    flaky = [r for r in records if r.model == "flaky:0.5"]
    assert f"  pass^k  {sum(r.success for r in flaky) / 15:7.3f}" in table.split("flaky:0.5")[1]
    assert 'id="curve"' in html.read_text() and html.read_text().count('class="transcript"') == 30

    # resume and extend: only the missing trials run
    assert main(["eval", EXAMPLE, "--model", "reference", "-k", "4", "--out", str(out), "--resume"]) == 0
    assert len(read_results(out)) == 30 + 5
    capsys.readouterr()


def test_the_report_says_how_the_results_were_made_and_keeps_the_suites_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It had no date, version, command line or settings, and its rows came in the order trials finished."""
    out, html = tmp_path / "r.jsonl", tmp_path / "r.html"
    argv = ["eval", EXAMPLE, "--model", "reference", "-k", "2", "--seed", "7", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    lines = out.read_text().splitlines()
    lines[1:] = lines[:0:-1]  # the trials as if they had finished in the opposite order
    out.write_text("\n".join(lines) + "\n")
    assert main(["eval-report", str(out), "--html", str(html)]) == 0
    table = capsys.readouterr().out
    page = html.read_text()
    run = json.loads(lines[0])
    assert run["type"] == "run" and run["command"] == ["toolslip", *argv] and run["models"] == ["reference"]
    assert re.search(r"Run of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: toolslip \S+ on Python 3", page)
    assert f"<code>toolslip eval {EXAMPLE} --model reference -k 2 --seed 7 --out {out}</code>" in page
    assert "k 2, seed 7, retries 2, max_steps 6 · sampling: each provider&#x27;s defaults" in page
    from toolslip.evals import load_suite

    order = [task.id for task in load_suite(EXAMPLE).tasks]
    assert re.findall(r"<tr><th>([^<(]+) \(\d/\d\)</th>", page) == order  # the grid's rows
    listed = [line.split()[0] for line in table.splitlines() if line.split() and line.split()[0] in order]
    assert listed == order  # the terminal table too


def test_report_and_compare_from_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = tmp_path / "before.jsonl", tmp_path / "after.jsonl"
    main(["eval", EXAMPLE, "--model", "flaky:0.5", "-k", "4", "--out", str(before)])
    main(["eval", EXAMPLE, "--model", "flaky:0.5", "-k", "4", "--out", str(after), "--seed", "9"])
    capsys.readouterr()

    assert main(["eval-report", str(before), "--price", "2,10", "--html", str(tmp_path / "b.html")]) == 0
    report = capsys.readouterr().out
    records = read_results(before)
    dollars = sum(r.input_tokens * 2 + r.output_tokens * 10 for r in records) / 1e6
    assert f"cost ${dollars:.4f}" in report

    assert main(["eval-compare", str(before), str(after)]) == 0
    table = capsys.readouterr().out
    rate = {p: sum(r.success for r in read_results(p)) / 20 for p in (before, after)}
    header, first = table.splitlines()[:2]
    assert "flaky:0.5 (b" in header and "flaky:0.5 (a" in header  # same model: labelled by file
    assert first.split() == [
        "pass^1",
        f"{rate[before]:.3f}",
        f"{rate[after]:.3f}",
        f"{rate[after] - rate[before]:+.3f}",
    ]
    assert len([line for line in table.splitlines() if line.startswith("trip-total")]) == 1


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["eval", "nope.py", "--model", "reference"], 1, "toolslip eval: suite file 'nope.py' does not exist"),
        (["eval", EXAMPLE, "--model", "flaky:x"], 2, "bad model 'flaky:x': write flaky:P or flaky:P:E"),
        (["eval", EXAMPLE, "--model", "flaky:2"], 2, "p must be in [0, 1]"),
        (["eval-report", "missing.jsonl"], 1, "toolslip eval-report: results file 'missing.jsonl' does not exist"),
        # the journal is opened once, up front: not one crash per trial, and no "journaled as report"
        (
            ["eval", EXAMPLE, "--model", "reference", "--journal", "postgresql://u@[::1/db"],
            1,
            "URL postgresql://[::1/db is malformed",
        ),
        (
            ["eval", EXAMPLE, "--model", "reference", "--journal", "postgresql://u@127.0.0.1:9/db"],
            1,
            "nothing listens there",
        ),
    ],
)
def test_bad_input_is_one_clear_sentence(
    argv: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code  # 2: the command line is wrong; 1: a file it names is
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_existing_results_need_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    out.write_text(json.dumps({"type": "trial", "suite": "expenses", "model": "reference", "task": "x", "trial": 0}))
    assert main(["eval", EXAMPLE, "--model", "reference", "-k", "1", "--out", str(out)]) == 1
    assert "already exists; pass --resume" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["eval-report", str(out), "--price", "cheap"])
    assert exit_info.value.code == 2
    assert "expected IN,OUT dollars per million tokens" in capsys.readouterr().err


def test_progress_bar_on_a_real_terminal() -> None:
    child = pexpect.spawn(
        sys.executable, ["-m", "toolslip.cli", "eval", EXAMPLE, "--model", "flaky:0.7", "-k", "40"],
        encoding="utf-8", timeout=60, dimensions=(24, 120),
    )  # fmt: skip
    child.expect(r"\[#{24}\] 200/200 trials  pass\^1 (0\.\d{3})  ETA 0:00")
    final = float(child.match.group(1))
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert f"pass^k  {final:7.3f}" in child.before  # the bar's last pass^1 is the reported one


def test_an_unusable_provider_model_fails_once_up_front(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["eval", EXAMPLE, "--model", "openai:gpt-4o-mini", "-k", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("toolslip eval: ") and err.count("\n") == 1 and "Traceback" not in err


def test_evals_public_names_are_sorted_and_importable() -> None:
    import toolslip.evals as evals

    assert evals.__all__ == sorted(evals.__all__)
    assert all(getattr(evals, name) is not None for name in evals.__all__)


def test_eval_code_mode_scores_the_calls_a_program_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--code``: the reference writes each turn as one program, and checks such as ``called(o, "fx", ...)``
    see the program's own calls (they are not in the transcript, which holds only ``run_python``)."""
    out = tmp_path / "code.jsonl"
    assert main(["eval", EXAMPLE, "--model", "reference", "-k", "1", "--code", "--out", str(out)]) == 0
    assert "  pass^k    1.000" in capsys.readouterr().out
    records = read_results(out)
    assert {r.mode for r in records} == {"code"} and len(records) == 5
    trip = next(r for r in records if r.task == "trip-total")
    written = [p["name"] for m in trip.messages for p in m["parts"] if p["kind"] == "tool_call"]
    assert written == ["run_python", "run_python"], trip.messages  # the two conversions, then the sum
    assert trip.tool_calls == 3  # fx, fx, calc: what the programs called
    assert json.loads(out.read_text().splitlines()[0])["mode"] == "code"

    # a file of code-mode trials is not extended in tool mode (the two would be scored as one)
    assert main(["eval", EXAMPLE, "--model", "reference", "-k", "2", "--out", str(out), "--resume"]) == 1
    assert "holds trials in code mode; resume it in that mode" in capsys.readouterr().err
    assert len(read_results(out)) == 5
