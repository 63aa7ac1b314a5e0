"""``--max-tool-output`` and ``--context-size`` on the command line: bad values are usage errors in one sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolslip.cli import main

WEATHER = str(Path(__file__).parent.parent / "examples" / "weather.py")


def _usage_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_a_context_size_for_a_model_that_has_its_own_window_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(capsys, ["run", "--no-journal", "--model", "scripted", "--context-size", "4096", WEATHER, "hi"])
    assert err == "toolslip run: --context-size sets the local model's window; scripted has its own"


@pytest.mark.parametrize(("flag", "value", "low"), [("--max-tool-output", "0", 1), ("--context-size", "100", 512)])
def test_caps_below_their_floor_are_usage_errors(
    capsys: pytest.CaptureFixture[str], flag: str, value: str, low: int
) -> None:
    err = _usage_error(capsys, ["run", "--no-journal", flag, value, WEATHER, "hi"])
    assert err == f"toolslip run: argument {flag}: must be at least {low}, got {value} (see toolslip run --help)"
