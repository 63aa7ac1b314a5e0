"""``toolslip eval-report RESULTS.jsonl ...``: the summary table, and the HTML / PNG report, from saved results."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core._files import require_file
from ..core.errors import ConfigError
from . import EXIT_OK

__all__ = ["load_summaries", "parse_price", "register", "write_reports"]

if TYPE_CHECKING:  # the evals package is imported only when a command runs
    from ..evals.summary import ModelSummary


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval-report", help="summarize saved eval results; write an HTML or PNG report")
    p.add_argument("results", nargs="+", help="results files written by toolslip eval --out")
    p.add_argument("--html", help="write a self-contained HTML report here")
    p.add_argument("--png", help="write the pass^k curve and outcome grid as a PNG (needs toolslip[report])")
    p.add_argument("--price", type=parse_price, help="IN,OUT dollars per million tokens, to show cost")
    p.set_defaults(handler=_handle)


def parse_price(text: str) -> tuple[float, float]:
    try:
        price_in, price_out = (float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected IN,OUT dollars per million tokens, e.g. 0.15,0.6; got {text!r}"
        ) from None
    return price_in, price_out


def load_summaries(paths: Sequence[str]) -> list[ModelSummary]:
    """Summaries of every model in ``paths``; a model name seen in two files is labelled with its file."""
    from ..evals import read_results, summarize

    per_file = []
    for path in paths:
        require_file(path, "results file")
        records = read_results(path)
        if not records:
            raise ConfigError(f"{path} holds no trial results")
        per_file.append((path, records))
    names = [r.model for _, records in per_file for r in {x.model: x for x in records}.values()]
    summaries = []
    for path, records in per_file:
        for model in dict.fromkeys(r.model for r in records):
            label = f"{model} ({Path(path).stem})" if names.count(model) > 1 else model
            summaries += summarize([r for r in records if r.model == model], label=label)
    return summaries


def check_report_paths(*paths: str | None) -> None:
    """Refuse a report path that cannot be written before any work is done (an eval can take hours)."""
    for path in filter(None, paths):
        target = Path(path)
        if target.is_dir():
            raise ConfigError(f"report path {path!r} is a directory; give a file name inside it")
        if not target.parent.is_dir():
            raise ConfigError(f"report path {path!r}: folder {str(target.parent)!r} does not exist; create it first")


def write_reports(
    summaries: Sequence[ModelSummary],
    html_path: str | None,
    png_path: str | None,
    runs: Sequence[Mapping[str, Any]] = (),
) -> None:
    from ..evals.report import html_report, write_png

    if html_path:
        Path(html_path).write_text(html_report(summaries, runs=runs), encoding="utf-8")
    if png_path:
        write_png(summaries, png_path)


def _handle(args: argparse.Namespace) -> int:
    from ..evals import summary_table

    check_report_paths(args.html, args.png)
    from ..evals.about import read_runs

    summaries = load_summaries(args.results)
    print(summary_table(summaries, args.price))
    write_reports(summaries, args.html, args.png, [run for path in args.results for run in read_runs(path)])
    return EXIT_OK
