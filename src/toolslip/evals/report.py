"""The HTML report: pass^k curves, a per-task outcome grid, and every transcript one click away.

The page is one self-contained file: the curve is inline SVG and the transcripts open with CSS
``:target`` (no script, no network), so it can be mailed or attached to a CI run. ``write_png`` draws the
same curve and grid with matplotlib (the optional ``report`` extra) for places that take only images.
"""

from __future__ import annotations

import html
import json
import shlex
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..core._display import dollars, plural
from .summary import FAILURE_LABELS, ModelSummary
from .trial import TrialRecord

__all__ = ["COLORS", "OUTCOME_COLORS", "html_report", "write_png"]

COLORS = ("#1f77b4", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#e377c2")
"""One colour per model, in order; the curve and its legend use it."""
OUTCOME_COLORS = {"pass": "#2e7d32", "fail": "#c62828", "provider_error": "#f9a825", "crash": "#616161"}

_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table.num td,table.num th{padding:2px 8px;text-align:right}table.num th:first-child{text-align:left}
.grid td{padding:0 1px}.grid th{text-align:left;font-weight:normal;padding-right:8px;white-space:nowrap}
a.cell{display:inline-block;width:20px;height:20px;border-radius:3px;vertical-align:middle}
.pass{background:#2e7d32}.fail{background:#c62828}.provider_error{background:#f9a825}.crash{background:#616161}
.transcript{display:none;position:fixed;top:40px;left:60px;right:60px;bottom:40px;overflow:auto;
background:#fff8e1;border:2px solid #222;padding:16px;box-shadow:0 4px 24px #0006}
.transcript:target{display:block}
.msg{margin:6px 0;padding:6px;background:#fff;border-left:4px solid #999;white-space:pre-wrap}
.msg.user{border-color:#1f77b4}.msg.assistant{border-color:#2e7d32}.msg.tool{border-color:#9467bd}
.err{color:#c62828}code{font-size:13px}.meaning{color:#444;max-width:48em}.about p{margin:2px 0;color:#444}
"""
# One sentence each, next to the numbers: readers of a report often know pass@k (code benchmarks) and take
# pass^k for it, when it answers the opposite question.
_MEANING = (
    '<p class="meaning"><b>pass^k</b> is the chance that <i>k</i> runs of the same task <i>all</i> succeed '
    "(tau-bench's reliability measure: it falls as k grows unless the model never fails). "
    "<b>pass@k</b> is the chance that <i>at least one</i> of <i>k</i> runs succeeds.</p>"
)
_KEY = (
    '<p>Each square is one trial; click it for the transcript. <a class="cell pass"></a> pass '
    '<a class="cell fail"></a> fail <a class="cell provider_error"></a> provider error (not scored) '
    '<a class="cell crash"></a> crashed (not scored)</p>'
)


def html_report(
    summaries: Sequence[ModelSummary], title: str = "toolslip eval", runs: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The whole report as one HTML string; ``runs`` are the results' ``run`` lines
    (:mod:`toolslip.evals.about`): when, by which toolslip, from which command, with which models and settings."""
    body = [f"<h1>{_e(title)}</h1>", _about(runs), "<h2>pass^k</h2>", _curve_svg(summaries)]
    for index, s in enumerate(summaries):
        body.append(f'<h2 id="model-{index}">{_e(s.model)} · suite {_e(s.suite)}</h2>')
        body.append(_numbers(s))
        body.append(_KEY)
        body.append(_grid(s, index))
    transcripts = [_transcript(r, i) for i, s in enumerate(summaries) for r in [*s.scored, *s.unscored]]
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{_e(title)}</title><style>{_CSS}</style>'
        f"</head><body>{''.join(body)}{''.join(transcripts)}</body></html>"
    )


def _about(runs: Sequence[Mapping[str, Any]]) -> str:
    """Where the numbers come from: a pass^k read later, or next to another, means little without it."""
    from ..core.version import __version__

    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [f"Report written {written} by toolslip {_e(__version__)}."]
    for run in runs:
        command = " ".join(shlex.quote(str(word)) for word in run["command"]) if run.get("command") else None
        said = [
            f"toolslip {_e(run.get('toolslip', '?'))} on Python {_e(run.get('python', '?'))}",
            f"<code>{_e(command)}</code>" if command else "run from Python (no command line)",
            f"models {_e(', '.join(run.get('models', ())))}",
            f"k {_e(run.get('k'))}, seed {_e(run.get('seed'))}, retries {_e(run.get('retries'))}, "
            f"max_steps {_e(run.get('max_steps'))}",
            f"sampling: {_e(run.get('sampling', '?'))}",
        ]
        lines.append(f"Run of {_e(run.get('date', '?'))}: " + " · ".join(said))
    if not runs:
        lines.append("The results do not say how they were made (written before toolslip recorded it).")
    return '<div class="about">' + "".join(f"<p>{line}</p>" for line in lines) + "</div>"


def _e(text: object) -> str:
    return html.escape(str(text))


def _curve_svg(summaries: Sequence[ModelSummary]) -> str:
    width, height, left, top, plot_w, plot_h = 640, 320, 50, 20, 540, 250
    k_max = max((s.k_max for s in summaries), default=1) or 1

    def x(k: int) -> float:
        return left + (plot_w * (k - 1) / (k_max - 1) if k_max > 1 else plot_w / 2)

    def y(v: float) -> float:
        return top + plot_h * (1 - v)

    out = [f'<svg id="curve" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">']
    for tick in (0, 0.25, 0.5, 0.75, 1):
        out.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick)}" y2="{y(tick)}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y(tick) + 4}" text-anchor="end" font-size="11">{tick:g}</text>')
    for k in range(1, k_max + 1):
        out.append(f'<text x="{x(k)}" y="{top + plot_h + 16}" text-anchor="middle" font-size="11">{k}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle" font-size="12">k</text>')
    middle = top + plot_h / 2
    out.append(f'<text x="12" y="{middle}" font-size="12" transform="rotate(-90 12 {middle})">pass^k</text>')
    for index, s in enumerate(summaries):
        color = COLORS[index % len(COLORS)]
        points = [(x(k), y(s.pass_hat(k))) for k in range(1, s.k_max + 1)]
        out.append(
            f'<polyline class="curve" fill="none" stroke="{color}" stroke-width="4" '
            f'points="{" ".join(f"{px:.1f},{py:.1f}" for px, py in points)}"/>'
        )
        out += [f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{color}"/>' for px, py in points]
        ly = top + 14 + 18 * index
        out.append(f'<rect x="{left + plot_w - 150}" y="{ly - 9}" width="12" height="12" fill="{color}"/>')
        out.append(f'<text x="{left + plot_w - 132}" y="{ly + 2}" font-size="12">{_e(s.model)}</text>')
    out.append("</svg>")
    return "".join(out)


def _numbers(s: ModelSummary) -> str:
    ks = range(1, s.k_max + 1)
    head = "".join(f"<th>{k}</th>" for k in ks)
    hat = "".join(f"<td>{s.pass_hat(k):.3f}</td>" for k in ks)
    at = "".join(f"<td>{s.pass_at(k):.3f}</td>" for k in ks)
    reasons = ", ".join(f"{FAILURE_LABELS[r]}: {n}" for r, n in s.reasons().most_common()) or "none"
    spent = s.cost()
    cost = f" · cost {dollars(spent)} at list prices (genai-prices)" if spent else ""
    return (
        f'<table class="num"><tr><th>k</th>{head}</tr><tr><th>pass^k</th>{hat}</tr>'
        f"<tr><th>pass@k</th>{at}</tr></table>{_MEANING}"
        f"<p>{plural(len(s.scored), 'scored trial')} · mean steps {s.mean('steps'):.2f} · tokens per trial "
        f"{s.mean('input_tokens'):.0f} in / {s.mean('output_tokens'):.0f} out{_cache(s)}{cost} · failures: "
        f"{_e(reasons)}</p>"
    )


def _cache(s: ModelSummary) -> str:
    read, written = s.mean("cache_read_tokens"), s.mean("cache_write_tokens")
    return f" (prompt cache: {read:.0f} read, {written:.0f} written)" if read or written else ""


def _anchor(record: TrialRecord, model_index: int) -> str:
    return f"t{model_index}-{record.task}-{record.trial}-{record.attempt}".replace(" ", "_")


def _cell_class(record: TrialRecord) -> str:
    if record.scored:
        return "pass" if record.success else "fail"
    return record.reason


def _grid(s: ModelSummary, index: int) -> str:
    rows = []
    for task in s.tasks:
        extra = [r for r in s.unscored if r.task == task.task]
        cells = "".join(
            f'<td><a class="cell {_cell_class(r)}" href="#{_e(_anchor(r, index))}" '
            f'title="trial {r.trial}: {_e(r.reason)}"></a></td>'
            for r in [*task.trials, *extra]
        )
        rows.append(f"<tr><th>{_e(task.task)} ({task.c}/{task.n})</th>{cells}</tr>")
    return f'<table class="grid" id="grid-{index}">{"".join(rows)}</table>'


def _transcript(record: TrialRecord, model_index: int) -> str:
    parts = [
        f'<section class="transcript" id="{_e(_anchor(record, model_index))}"><a href="#">close</a>',
        f"<h2>{_e(record.model)} · {_e(record.task)} · trial {record.trial}"
        f"{f' (attempt {record.attempt})' if record.attempt else ''}: {_e(record.reason)}</h2>",
        f"<p>reward {record.reward:g} · {plural(record.steps, 'step')} · stop {_e(record.stop_reason)} · "
        f"seed {record.seed}</p>",
    ]
    if record.detail:
        parts.append(f'<pre class="err">{_e(record.detail)}</pre>')
    parts += [_message(m) for m in record.messages]
    return "".join(parts) + "</section>"


def _message(message: dict[str, Any]) -> str:
    lines = []
    for part in message.get("parts", ()):
        kind = part.get("kind")
        if kind == "text":
            lines.append(_e(part["text"]))
        elif kind == "tool_call":
            args = (
                json.dumps(part.get("arguments"), ensure_ascii=False)
                if part.get("arguments") is not None
                else part.get("raw_arguments")
            )
            lines.append(f"<code>→ {_e(part['name'])}({_e(args)})</code>")
        elif kind == "tool_result":
            content = (
                part["content"] if isinstance(part["content"], str) else json.dumps(part["content"], ensure_ascii=False)
            )
            cls = ' class="err"' if part.get("is_error") else ""
            lines.append(f"<code{cls}>← {_e(content)}</code>")
        else:
            lines.append(f"<code>[{_e(kind)}]</code>")
    role = _e(message.get("role", "?"))
    return f'<div class="msg {role}"><b>{role}</b>\n' + "\n".join(lines) + "</div>"


def write_png(summaries: Sequence[ModelSummary], path: str) -> None:
    """The pass^k curves and outcome grids as one PNG (needs ``pip install 'toolslip[report]'``)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.colors import ListedColormap
    except ImportError:
        from ..core.errors import ConfigError

        raise ConfigError("PNG output needs matplotlib: pip install 'toolslip[report]'") from None
    fig, axes = plt.subplots(1 + len(summaries), 1, figsize=(8, 3 + 2.2 * len(summaries)), squeeze=False)
    curve = axes[0][0]
    for index, s in enumerate(summaries):
        ks = list(range(1, s.k_max + 1))
        curve.plot(ks, [s.pass_hat(k) for k in ks], "o-", lw=3, color=COLORS[index % len(COLORS)], label=s.model)
    curve.set(xlabel="k", ylabel="pass^k", ylim=(0, 1.02), title="pass^k")
    curve.legend()
    palette = ListedColormap(["#ffffff", OUTCOME_COLORS["pass"], OUTCOME_COLORS["fail"]])
    for index, s in enumerate(summaries):
        width = max((t.n for t in s.tasks), default=1)
        cells = [[(1 if r.success else 2) for r in t.trials] + [0] * (width - t.n) for t in s.tasks]
        grid = axes[index + 1][0]
        grid.imshow(cells, cmap=palette, vmin=0, vmax=2, aspect="auto")
        grid.set_yticks(range(len(s.tasks)), [t.task for t in s.tasks])
        grid.set(xlabel="trial", title=f"{s.model}: outcomes per task (green pass, red fail)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
