"""Eval reports in the console: the trials ``toolslip eval --journal`` journaled, grouped by report and task.

Everything here is read from the runs themselves (:mod:`toolslip.evals.journaled`): a trial's start says
which report, model, task and trial it is, and its ``eval`` entry holds the check's verdict. So a report is
complete wherever its journal is, with no results file to find; a trial still running shows its state.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Mapping, Sequence
from urllib.parse import urlencode

from ..core._display import local_time
from .html import Html, html, join
from .index import RunRow

__all__ = ["report_page", "report_sections", "reports_page", "trial_note"]


def _mark(row: RunRow, now: float) -> tuple[str, str]:
    """A trial's mark and the word for it: its verdict once scored, else the run's state."""
    if row.verdict is None:
        state = row.state(now)
        return "…" if state == "running" else "?", state
    reason = str(row.verdict.get("reason", "?"))
    return ("✓" if reason == "pass" else "✗"), reason


def _label(row: RunRow) -> str:
    assert row.eval is not None
    attempt = int(row.eval.get("attempt", 0))
    return f"#{row.eval.get('trial')}" + (f" (attempt {attempt})" if attempt else "")


def _place(row: RunRow) -> tuple[int, int]:
    tag = row.eval or {}
    return int(tag.get("trial", 0)), int(tag.get("attempt", 0))


def trial_note(row: RunRow) -> Html:
    """The line a run page shows under its title when the run is an eval trial."""
    if row.eval is None:
        return Html("")
    tag = row.eval
    mark, word = _mark(row, time.time())
    detail = f": {row.verdict.get('detail')}" if row.verdict and row.verdict.get("detail") else ""
    return html(
        '<p class="trial">trial {} of task <code>{}</code>, model <code>{}</code>, in eval report '
        '<a href="/evals/{}">{}</a> · {} {}{}</p>',
        _label(row),
        tag.get("task"),
        tag.get("model"),
        tag["report"],
        tag["report"],
        mark,
        word,
        detail,
    )


def reports_page(reports: Mapping[str, Sequence[RunRow]]) -> Html:
    rows = []
    for report, runs in reports.items():
        tags = [r.eval for r in runs if r.eval is not None]
        passed = sum(r.verdict is not None and r.verdict.get("reason") == "pass" for r in runs)
        scored = sum(r.verdict is not None for r in runs)
        rows.append(
            html(
                '<tr><td><a href="/evals/{}">{}</a></td><td>{}</td><td>{}</td><td class="n">{}</td>'
                '<td class="n">{}</td><td class="n">{}</td><td>{}</td></tr>',
                report,
                report,
                ", ".join(sorted({str(t.get("suite")) for t in tags})),
                ", ".join(sorted({str(t.get("model")) for t in tags})),
                len({t.get("task") for t in tags}),
                len(runs),
                f"{passed} of {scored}",
                local_time(min(r.started for r in runs)),
            )
        )
    if not rows:
        return html(
            "<h1>Eval reports</h1><p>No eval trials in this journal. Run <code>toolslip eval SUITE.py --model M "
            "--journal LOCATION</code> to journal each trial here.</p>"
        )
    return html(
        "<h1>Eval reports</h1><table><thead><tr><th>report</th><th>suite</th><th>models</th><th>tasks</th>"
        "<th>runs</th><th>passed</th><th>started</th></tr></thead><tbody>{}</tbody></table>",
        join(rows),
    )


def report_page(report: str, runs: Sequence[RunRow]) -> Html:
    """The report's sections in an element that follows them live, as the eval's trials finish."""
    suites = ", ".join(sorted({str(r.eval.get("suite")) for r in runs if r.eval is not None}))
    return html(
        "<h1>Eval report {}</h1><p>suite <code>{}</code>; the tables update as trials finish.</p>"
        '<div id="live" data-live="/evals/{}/live">{}</div>',
        report,
        suites,
        report,
        report_sections(runs),
    )


def report_sections(runs: Sequence[RunRow]) -> Html:
    """Each model's tasks in suite order, each task's trials linked to their runs, and a link comparing two."""
    now = time.time()
    by_model: dict[str, dict[str, list[RunRow]]] = {}
    order: dict[str, int] = {}
    for row in runs:
        assert row.eval is not None
        task = str(row.eval.get("task"))
        by_model.setdefault(str(row.eval.get("model")), {}).setdefault(task, []).append(row)
        order[task] = int(row.eval.get("position", -1))
    sections = []
    for model, tasks in sorted(by_model.items()):
        lines = []
        for task in sorted(tasks, key=lambda t: (order[t], t)):
            trials = sorted(tasks[task], key=_place)
            links = join(
                html(
                    '<a class="trial {}" href="/runs/{}" title="{}">{} {}</a> ',
                    word,
                    r.run_id,
                    word,
                    _label(r),
                    mark,
                )
                for r in trials
                for mark, word in [_mark(r, now)]
            )
            passed = sum(r.verdict is not None and r.verdict.get("reason") == "pass" for r in trials)
            lines.append(
                html(
                    '<tr id="task-{}"><th><code>{}</code></th><td class="n">{} of {}</td><td>{}</td><td>{}</td></tr>',
                    f"{model}-{task}",
                    task,
                    passed,
                    len(trials),
                    links,
                    _compare(trials),
                )
            )
        body = html(
            "<h2>{}</h2><table><thead><tr><th>task</th><th>passed</th><th>trials</th><th></th></tr></thead>"
            "<tbody>{}</tbody></table>",
            model,
            join(lines),
        )
        sections.append(html('<section id="model-{}" data-v="{}">{}</section>', model, zlib.crc32(body.encode()), body))
    return join(sections)


def _compare(trials: Sequence[RunRow]) -> Html:
    """A link to two trials side by side: a passing one and a failing one when there are both, else the first two."""
    if len(trials) < 2:
        return Html("")
    passing = [r for r in trials if r.verdict is not None and r.verdict.get("reason") == "pass"]
    failing = [r for r in trials if r not in passing]
    a, b = (passing[0], failing[0]) if passing and failing else (trials[0], trials[1])
    href = "/compare?" + urlencode({"a": a.run_id, "b": b.run_id})
    return html('<a class="compare" href="{}">compare {} with {}</a>', href, _label(a), _label(b))
