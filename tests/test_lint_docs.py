"""docs/lint.md shows what ``toolslip lint`` prints: its excerpt is lines of the real output, in order,
and the counts its sentence gives are the command's own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolslip.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_the_lint_excerpt_is_the_commands_output(capsys: pytest.CaptureFixture[str]) -> None:
    doc = (ROOT / "docs" / "lint.md").read_text()
    sentence, excerpt = re.search(
        r"give (\d+ errors and \d+ warnings);\nan excerpt[^\n]*\n\n```\n(.*?)\n```", doc, re.S
    ).groups()  # type: ignore[union-attr]
    main(["lint", str(ROOT / "tests" / "data" / "orders_bloated.json")])
    printed = capsys.readouterr().out.splitlines()
    errors, warnings = sentence.split(" and ")
    assert printed[-1].endswith(f": {errors}, {warnings}")
    rest = iter(printed)
    missing = [line for line in excerpt.splitlines() if not any(line == out for out in rest)]
    assert not missing, f"docs/lint.md's excerpt has lines the command does not print (in this order): {missing}"
