"""The console in real Chromium (Debian's, driven by Playwright): runs in other processes pause on a
payment, a person edits and approves it or denies it with a reason in the inbox, and the runs page follows
20 runs live; a hostile tool output renders inert.

Every run is a process of its own (``_console_worker.py``) that waits on the journal for the decision, as a
worker with no person at its terminal would; the console is ``toolslip console`` in another process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _console import console, env, finished, seed, states, toolslip, wait_until, worker
from toolslip.evals import read_results

playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (the browser tests)")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")
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


def test_an_eval_s_trials_link_to_their_report_which_links_each_trial_and_compares_two(
    browser: Any, tmp_path: Path
) -> None:
    journal, out = str(tmp_path / "runs.sqlite"), tmp_path / "results.jsonl"
    argv = ["eval", EXAMPLE, "--model", "reference", "--model", "flaky:0.5", "-k", "2"]
    toolslip(*argv, "--journal", journal, "--out", str(out))
    report = json.loads(out.read_text().splitlines()[0])["report"]
    flaky = [r for r in read_results(out) if r.model == "flaky:0.5"]
    mixed = next(
        t for t in dict.fromkeys(r.task for r in flaky) if {r.success for r in flaky if r.task == t} == {True, False}
    )
    passed, failed = (next(r for r in flaky if r.task == mixed and r.success is ok) for ok in (True, False))
    run_of = {r.trial: f"{report}-flaky:0.5-{mixed}-{r.trial}-0" for r in (passed, failed)}
    with console(journal) as c:
        page = _signed_in(browser, c.url, c.token)
        page.goto(f"{c.url}/evals")
        page.locator(f"a[href='/evals/{report}']").click()
        assert page.url == f"{c.url}/evals/{report}"
        row = page.locator(f'[id="task-flaky:0.5-{mixed}"]')
        assert "1 of 2" in row.inner_text()
        trials = row.locator("a.trial")
        assert sorted(trials.evaluate_all("links => links.map(a => a.getAttribute('href'))")) == sorted(
            f"/runs/{run}" for run in run_of.values()
        )
        assert row.locator(f"a[href='/runs/{run_of[failed.trial]}']").inner_text() == f"#{failed.trial} ✗"
        assert page.locator(f'[id="task-reference-{mixed}"]').inner_text().count("✓") == 2

        row.locator(f"a[href='/runs/{run_of[failed.trial]}']").click()  # a trial's run, and back to its report
        note = page.locator("p.trial").inner_text()
        assert f"trial #{failed.trial} of task {mixed}, model flaky:0.5, in eval report {report}" in note
        assert failed.reason in note and failed.reason in page.locator("li.eval").inner_text()
        page.locator("p.trial a").click()
        assert page.url == f"{c.url}/evals/{report}"

        page.locator(f'[id="task-flaky:0.5-{mixed}"] a.compare').click()  # the passing and the failing trial
        assert page.url.startswith(f"{c.url}/compare?")
        shown = page.locator(".cols h2 a").all_inner_texts()
        assert shown == [run_of[passed.trial], run_of[failed.trial]]
        notes = page.locator(".cols p.trial").all_inner_texts()
        assert [f"trial #{r.trial} of task {mixed}" in n for r, n in zip((passed, failed), notes, strict=True)] == [
            True,
            True,
        ]
        verdicts = page.locator(".cols li.eval").all_inner_texts()
        assert len(verdicts) == 2 and "eval check: pass" in verdicts[0] and failed.reason in verdicts[1]
    shown = toolslip("show", run_of[failed.trial], "--journal", journal)
    assert f"eval: check {failed.reason} (reward 0.0): {failed.detail}" in shown


SLOW_SUITE = '''
import time

from toolslip import tool
from toolslip.evals import Task
from toolslip.testing import call, reply


@tool(effects="read_only")
def wait(seconds: float) -> str:
    """Wait a while."""
    time.sleep(seconds)
    return "waited"


SLOWLY = [call("wait", seconds=0.4), reply("ok")]
first = Task(id="first", prompt="wait", tools=[wait], check=lambda o: None, reference=SLOWLY)
second = Task(id="second", prompt="wait", tools=[wait], check=lambda o: None, reference=SLOWLY)
'''


def test_an_eval_report_fills_in_live_as_its_trials_finish(browser: Any, tmp_path: Path) -> None:
    journal, suite = str(tmp_path / "runs.sqlite"), tmp_path / "slow.py"
    suite.write_text(SLOW_SUITE)
    argv = ["eval", str(suite), "--model", "reference", "-k", "3", "--concurrency", "1", "--journal", journal]
    run = subprocess.Popen([sys.executable, "-m", "toolslip.cli", *argv], env=env(), text=True, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: Path(journal).exists() and states(journal), 30, "the eval's first trial in the journal")
        report = next(iter(states(journal))).split("-reference-")[0]
        with console(journal) as c:
            page = _signed_in(browser, c.url, c.token)
            page.goto(f"{c.url}/evals/{report}")
            page.evaluate("window.__notReloaded = true")
            seen: set[str] = set()

            def look() -> bool:
                counts = page.locator("tr[id^=task-] td.n").all_inner_texts()
                seen.add(" ".join(counts))
                return counts == ["3 of 3", "3 of 3"]

            wait_until(look, 30, "both tasks shown with 3 of 3 trials passed")
            assert page.evaluate("window.__notReloaded") is True  # followed live, never reloaded
            assert len(seen) >= 3, seen  # it showed trials being added on the way
    finally:
        _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
