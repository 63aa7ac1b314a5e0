"""The HTML report as a browser shows it: headless Chromium screenshots, checked pixel by pixel."""

import asyncio
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image  # from the report extra (matplotlib depends on pillow)

from toolslip.evals import FlakyModel, evaluate, load_suite, summarize
from toolslip.evals.report import COLORS, OUTCOME_COLORS, html_report, write_png

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")
pytestmark = pytest.mark.slow


def _rgb(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def _pixels(image: Image.Image, color: str) -> list[tuple[int, int]]:
    rgb, width = bytes(_rgb(color)), image.width
    data = image.convert("RGB").tobytes()
    return [(i // 3 % width, i // 3 // width) for i in range(0, len(data), 3) if data[i : i + 3] == rgb]


@pytest.fixture(scope="module")
def summaries() -> list:  # type: ignore[type-arg]
    suite = load_suite(EXAMPLE)
    records = asyncio.run(evaluate(suite, [FlakyModel(0.6, provider_error_rate=0.05), FlakyModel(0.95)], k=8, seed=5))
    return summarize(records)


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("this test needs Chromium: apt-get install -y chromium")
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}", "--force-device-scale-factor=1",
    ]  # fmt: skip
    return subprocess.run([binary, *flags, *args, url], capture_output=True, text=True, timeout=120, check=True)


def _screenshot(tmp_path: Path, url: str, name: str) -> Image.Image:
    shot = tmp_path / name
    _chromium(tmp_path, url, "--window-size=1000,1700", f"--screenshot={shot}")
    return Image.open(shot)


def test_the_report_shows_the_curves_and_the_grid(summaries: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    page = tmp_path / "report.html"
    page.write_text(html_report(summaries), encoding="utf-8")
    image = _screenshot(tmp_path, page.as_uri(), "page.png")

    # one curve per model, drawn across the plot, falling from pass^1 to pass^8 by the reported amount
    for index, summary in enumerate(summaries):
        line = _pixels(image, COLORS[index])
        xs = [x for x, _ in line]
        assert max(xs) - min(xs) >= 540, f"curve {index} does not span the plot"
        left = [y for x, y in line if x <= min(xs) + 3]
        right = [y for x, y in line if x >= max(xs) - 3]
        drop = sum(right) / len(right) - sum(left) / len(left)
        expected = 250 * (summary.pass_hat(1) - summary.pass_hat(8))  # the plot is 250 px tall
        assert abs(drop - expected) <= 4, (index, drop, expected)

    # the grid: one square per trial, green for a pass, red for a failure, below the curve
    green, red = _pixels(image, OUTCOME_COLORS["pass"]), _pixels(image, OUTCOME_COLORS["fail"])
    passes = sum(t.c for s in summaries for t in s.tasks)
    fails = sum(t.n - t.c for s in summaries for t in s.tasks)
    keys = len(summaries)  # each section's colour key shows one green and one red square too
    assert passes > 0 and fails > 0
    assert len(green) == pytest.approx((passes + keys) * len(red) / (fails + keys), rel=0.02)  # same-sized squares
    curve_bottom = max(y for _, y in _pixels(image, COLORS[0]))
    assert min(y for _, y in green + red) > curve_bottom  # the grid is drawn under the plot
    assert _pixels(image, "#fff8e1") == []  # no transcript open yet


def test_every_square_opens_its_transcript(summaries: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    page = tmp_path / "report.html"
    page.write_text(html_report(summaries), encoding="utf-8")
    dom = _chromium(tmp_path, page.as_uri(), "--dump-dom").stdout
    targets = re.findall(r'<a class="cell (?:pass|fail|provider_error|crash)" href="#([^"]+)"', dom)
    sections = set(re.findall(r'<section class="transcript" id="([^"]+)"', dom))
    records = [r for s in summaries for r in [*s.scored, *s.unscored]]
    assert len(targets) == len(records) == len(sections) and set(targets) == sections

    failed = next(r for s in summaries for r in s.scored if r.reason == "step_limit")
    anchor = next(t for t in targets if t.startswith(f"t0-{failed.task}-{failed.trial}-"))
    image = _screenshot(tmp_path, f"{page.as_uri()}#{anchor}", "open.png")
    panel = _pixels(image, "#fff8e1")  # the transcript panel's background
    assert len(panel) > 100_000
    assert f"trial {failed.trial}: step_limit" in dom


def test_png_has_the_curve_and_the_grid(summaries: list, tmp_path: Path) -> None:  # type: ignore[type-arg]
    path = tmp_path / "report.png"
    write_png(summaries, str(path))
    image = Image.open(path)
    assert all(len(_pixels(image, color)) > 300 for color in COLORS[:2])
    green, red = _pixels(image, OUTCOME_COLORS["pass"]), _pixels(image, OUTCOME_COLORS["fail"])
    passes = sum(t.c for s in summaries for t in s.tasks)
    fails = sum(t.n - t.c for s in summaries for t in s.tasks)
    assert len(green) / (len(green) + len(red)) == pytest.approx(passes / (passes + fails), abs=0.03)
