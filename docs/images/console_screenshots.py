"""Takes the screenshots in docs/console.md with Debian's Chromium: a journal with a few runs (one paused on a
payment, one whose payment was edited and approved, one that read a hostile page), the console on it.

    PYTHONPATH=src python docs/images/console_screenshots.py [evals]

``evals`` takes only the eval report's: `toolslip eval --journal` on the examples' suite, the console on it.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from _console import Running, console, finished, seed, states, toolslip, wait_until, worker  # noqa: E402

OUT = Path(__file__).parent


def _signed_in(p: Any, c: Running) -> tuple[Any, Any]:
    """Chromium, and a page signed in to the console ``c``."""
    browser = p.chromium.launch(
        executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    )
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    page.goto(f"{c.url}/?token={c.token}")
    return browser, page


def main() -> None:
    journal = str(Path(tempfile.mkdtemp()) / "runs.sqlite")
    seed(journal)
    assert finished(worker(journal, "fetch-report", "fetch it"))["stop_reason"] == "completed"
    with console(journal) as c, sync_playwright() as p:
        browser, page = _signed_in(p, c)
        edited = worker(journal, "pay-rent", "pay bob")
        waiting = worker(journal, "pay-invoice", "pay bob")
        reading = [worker(journal, f"report-{n}", "read 6 pages", CONSOLE_STEP_SECONDS="1") for n in range(3)]
        wait_until(lambda: states(journal).get("pay-rent") == "paused", 60, "pay-rent paused")
        wait_until(lambda: states(journal).get("pay-invoice") == "paused", 60, "pay-invoice paused")
        page.goto(f"{c.url}/inbox")
        held = page.locator("li.held:has(a[href='/runs/pay-rent'])")
        held.locator("textarea").fill('{"to": "bob", "amount": 25}')
        held.locator("input[name=by]").fill("alice")
        page.screenshot(path=str(OUT / "console-inbox.png"))
        held.locator("button[value=approve]").click()
        finished(edited)
        time.sleep(1.5)  # the three report runs are on their way: the list shows them running
        page.goto(f"{c.url}/runs")
        page.screenshot(path=str(OUT / "console-runs.png"))
        page.goto(f"{c.url}/runs/pay-rent")
        page.screenshot(path=str(OUT / "console-run.png"), full_page=True)
        page.goto(f"{c.url}/runs/fetch-report")
        page.screenshot(path=str(OUT / "console-hostile.png"))
        for run in reading:
            finished(run)
        page.goto(f"{c.url}/compare?a=report-0&b=pay-rent")
        page.screenshot(path=str(OUT / "console-compare.png"))
        waiting.kill()
        waiting.communicate()
        browser.close()
    subprocess.run(["ls", "-la", str(OUT)], check=True)


def evals() -> None:
    journal = str(Path(tempfile.mkdtemp()) / "runs.sqlite")
    suite = str(ROOT / "examples" / "suite_expenses.py")
    toolslip("eval", suite, "--model", "reference", "--model", "flaky:0.5", "-k", "4", "--journal", journal)
    with console(journal) as c, sync_playwright() as p:
        browser, page = _signed_in(p, c)
        page.goto(f"{c.url}/evals")
        page.locator("td a").first.click()
        page.screenshot(path=str(OUT / "console-eval.png"), full_page=True)
        browser.close()


if __name__ == "__main__":
    evals() if sys.argv[1:] == ["evals"] else (main(), evals())
