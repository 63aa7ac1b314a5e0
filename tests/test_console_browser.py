"""The console in real Chromium (Debian's, driven by Playwright): runs in other processes pause on a
payment, a person edits and approves it or denies it with a reason in the inbox, and the runs page follows
20 runs live; a hostile tool output renders inert.

Every run is a process of its own (``_console_worker.py``) that waits on the journal for the decision, as a
worker with no person at its terminal would; the console is ``toolslip console`` in another process.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _console import console, finished, seed, states, toolslip, wait_until, worker

playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the browser tests)")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="apt-get install chromium (make system-deps)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
        )
        yield chromium
        chromium.close()


@pytest.fixture
def journal(tmp_path: Path) -> str:
    location = str(tmp_path / "runs.sqlite")
    seed(location)
    return location


def _signed_in(browser: Any, url: str, token: str) -> Any:
    page = browser.new_page()
    page.goto(f"{url}/?token={token}")  # traded for a cookie, and the token leaves the address bar
    assert "token" not in page.url
    return page


def _held(page: Any, run_id: str) -> Any:
    return page.locator(f"li.held:has(a[href='/runs/{run_id}'])")


def test_a_held_payment_is_edited_and_approved_in_the_inbox_and_runs_once_as_edited(
    browser: Any, journal: str, tmp_path: Path
) -> None:
    payments = tmp_path / "payments.log"
    with console(journal) as c:
        page = _signed_in(browser, c.url, c.token)
        page.goto(f"{c.url}/inbox")
        run = worker(journal, "pay-1", "pay bob", CONSOLE_PAYMENTS=str(payments))
        wait_until(lambda: states(journal).get("pay-1") == "paused", 30, "the run pausing on the payment")
        paused = time.monotonic()
        _held(page, "pay-1").wait_for(timeout=5000)
        shown_after = time.monotonic() - paused
        assert shown_after < 1.0, f"the inbox showed the held call {shown_after:.2f} s after the run paused"
        held = _held(page, "pay-1")
        assert '"amount": 20' in held.locator("textarea").input_value()
        held.locator("textarea").fill('{"to": "bob", "amount": 25}')
        held.locator("input[name=by]").fill("alice")
        held.locator("button[value=approve]").click()
        result = finished(run)
        assert result == {"stop_reason": "completed", "output": "the tool said: paid 25 EUR to bob"}
        assert payments.read_text() == "bob 25\n"  # the edited call, executed once
        page.goto(f"{c.url}/runs/pay-1")
        decision = page.locator("li.decision").inner_text()
        assert "approved by alice" in decision and "amount 20 -> 25" in decision
        assert page.locator("li.tool_end .outcome").inner_text() == "ran"
        assert '"amount": 25' in page.locator("li.tool_end .args").inner_text()  # the arguments that ran
    shown = toolslip("show", "pay-1", "--journal", journal)
    assert "decision: call_1 pay approved by alice, edited: amount 20 -> 25" in shown


def test_a_denied_payment_s_reason_reaches_the_model(browser: Any, journal: str, tmp_path: Path) -> None:
    payments = tmp_path / "payments.log"
    with console(journal) as c:
        page = _signed_in(browser, c.url, c.token)
        run = worker(journal, "pay-2", "pay bob", CONSOLE_PAYMENTS=str(payments))
        page.goto(f"{c.url}/inbox")
        held = _held(page, "pay-2")
        held.wait_for(timeout=30_000)
        held.locator("input[name=note]").fill("use the savings account instead")
        held.locator("input[name=by]").fill("bob's accountant")
        held.locator("button[value=deny]").click()
        result = finished(run)
        assert "use the savings account instead" in result["output"]
        assert "refused" in result["output"]
        assert not payments.exists()
        page.goto(f"{c.url}/runs/pay-2")
        assert "denied by bob's accountant: use the savings account instead" in page.locator("li.decision").inner_text()


@pytest.mark.slow
def test_twenty_runs_in_other_processes_appear_and_progress_on_the_open_runs_page(
    browser: Any, journal_at: str
) -> None:
    journal = journal_at  # a SQLite file, and a PostgreSQL journal
    seed(journal)
    with console(journal) as c:
        page = _signed_in(browser, c.url, c.token)
        page.goto(f"{c.url}/runs")
        page.evaluate("window.__notReloaded = true")
        runs = [worker(journal, f"live-{n:02}", "read 4 pages", CONSOLE_STEP_SECONDS="0.5") for n in range(20)]
        seen: dict[str, set[str]] = {}

        def look() -> bool:
            rows = page.evaluate(
                "Array.from(document.querySelectorAll('tr[id^=run-live-]'))"
                ".map(r => [r.id, r.querySelector('.state').textContent, r.cells[3].textContent])"
            )
            for row_id, state, steps in rows:
                seen.setdefault(row_id, set()).add(f"{state.split(' ')[0]}@{steps}")
            return len(rows) == 20 and all(state == "completed" for _, state, _ in rows)

        wait_until(look, 90, "20 runs shown completed on the runs page")
        for run in runs:
            assert finished(run)["stop_reason"] == "completed"
        assert page.evaluate("window.__notReloaded") is True  # updated in place, never reloaded
        progressed = [row for row, states_seen in seen.items() if len(states_seen) >= 2]
        assert len(progressed) >= 10, seen  # rows changed while the page watched (running at some step, then done)


def test_a_hostile_tool_output_renders_inert_and_the_page_stays_usable(browser: Any, journal: str) -> None:
    assert finished(worker(journal, "hostile", "fetch it"))["stop_reason"] == "completed"
    with console(journal) as c:
        page = _signed_in(browser, c.url, c.token)
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        started = time.monotonic()
        page.goto(f"{c.url}/runs/hostile")
        took = time.monotonic() - started
        assert took < 5, f"the run page took {took:.1f} s"
        assert page.title() == "run hostile · toolslip console"  # the script did not run
        assert page.locator("#evil").count() == 0  # the link is text, not an element
        assert "<script>" in page.locator("li.tool_end .result").first.inner_text()
        content = page.content()
        assert len(content) < 200_000, "5 MB of output must be folded, not sent whole"
        assert "5,000,000" in content or "more characters" in content
        page.locator("li.tool_end .result summary").first.click()  # the page still answers
        page.locator("li.tool_end .result a", has_text="show all").first.click()
        page.wait_for_load_state()
        assert page.url.startswith(f"{c.url}/runs/hostile/value")
        whole = page.evaluate("document.body.innerText.length")
        assert whole > 5_000_000  # the stored value is whole, shown as plain text
        assert dialogs == []
