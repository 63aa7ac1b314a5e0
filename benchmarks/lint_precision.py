"""Is the linter right? Precision per rule on real tool sets, recall on planted defects.

    pip install --no-deps bfcl-eval
    python benchmarks/lint_precision.py              # the figures
    python benchmarks/lint_precision.py --sample 20  # 20 random findings not judged yet, to judge

Real tool sets, written by people outside this project:

* BFCL's ``live_simple`` and ``live_multiple`` items: the functions offered together in one item are one
  set (identical sets once; a finding on a doc that recurs in many sets counts once);
* twelve MCP servers from PyPI (``tests/data/mcp_tools``, see its SOURCE.md).

Each finding on them is one line of ``tests/data/lint_judged.json`` once a person has judged it: the
verdict (is the finding right: would a careful reviewer of that tool set agree it is a defect worth
fixing?) and a one-line reason. Precision per rule = right / judged, over the findings the rules still
make. Recall: ``tests/data/lint_planted.json`` holds tool sets with planted defects, each listed with the
rule that must find it; also clean tools, which must draw no finding.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import bfcl

from toolslip.cli.lint import load_declarations
from toolslip.lint import RULES, Finding, lint
from toolslip.messages import ToolSpec

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"


def key(source: str, f: Finding | dict[str, str]) -> str:
    get = f.get if isinstance(f, dict) else lambda k: getattr(f, k)
    return "|".join([source, get("tool") or "", get("rule") or "", get("parameter") or "", get("other") or ""])


def real_sets() -> Iterator[tuple[str, list[ToolSpec]]]:
    """(source, tool set) for every real set: MCP servers first, then BFCL live items."""
    for path in sorted((DATA / "mcp_tools").glob("*.json")):
        yield f"mcp:{path.stem}", load_declarations(str(path))
    seen: set[str] = set()
    for _, offered in bfcl.items(bfcl.LIVE):
        signature = json.dumps([[s.name, s.description, s.parameters] for s in offered], sort_keys=True)
        if signature not in seen:
            seen.add(signature)
            yield "bfcl-live", list(offered)


def real_findings() -> dict[str, tuple[Finding, str]]:
    """Every finding on the real sets, once: key -> (finding, the description or parameter text it is about)."""
    found: dict[str, tuple[Finding, str]] = {}
    for source, specs in real_sets():
        for f in lint(specs).findings:
            if f.rule == "cost-set":
                f = Finding(**{**f.to_dict(), "tool": f"(set of {len(specs)}: {specs[0].name}...)"})
            found.setdefault(key(source, f), (f, source))
    return found


def judged() -> dict[str, dict[str, object]]:
    rows = json.loads((DATA / "lint_judged.json").read_text(encoding="utf-8"))
    return {key(str(row["source"]), row): row for row in rows}


def precision() -> tuple[dict[str, Counter[str]], int]:
    """Per rule: findings made, judged, right; and how many judged findings the rules no longer make."""
    found, verdicts = real_findings(), judged()
    per_rule: dict[str, Counter[str]] = {rule: Counter() for rule in RULES}
    for k, (f, _) in found.items():
        per_rule[f.rule]["found"] += 1
        if k in verdicts:
            per_rule[f.rule]["judged"] += 1
            per_rule[f.rule]["right"] += bool(verdicts[k]["verdict"])
    return per_rule, len(set(verdicts) - set(found))


def recall() -> tuple[int, int, list[str], list[str]]:
    """(planted defects found, planted, the ones missed, findings on tools planted clean)."""
    planted = json.loads((DATA / "lint_planted.json").read_text(encoding="utf-8"))
    hit = total = 0
    missed: list[str] = []
    false_alarms: list[str] = []
    for case in planted:
        specs = [
            ToolSpec(name=t["name"], description=t.get("description", ""), parameters=t.get("parameters", {}))
            for t in case["tools"]
        ]
        findings = lint(specs, cost=False).findings
        made = {(f.tool, f.rule, f.parameter or "") for f in findings}
        for defect in case["defects"]:
            total += 1
            want = (defect["tool"], defect["rule"], defect.get("parameter", ""))
            if want in made:
                hit += 1
            else:
                missed.append(f"{case['name']}: {want}")
        false_alarms += [f"{case['name']}: {f.tool} {f.rule}" for f in findings if f.tool in case.get("clean", [])]
    return hit, total, missed, false_alarms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", type=int, default=0, help="print N random findings not judged yet")
    parser.add_argument("--rule", help="sample only this rule")
    args = parser.parse_args()
    if args.sample:
        verdicts = judged() if (DATA / "lint_judged.json").exists() else {}
        todo = [(k, f, s) for k, (f, s) in real_findings().items() if k not in verdicts and args.rule in (None, f.rule)]
        for _, f, source in random.Random(7).sample(todo, min(args.sample, len(todo))):
            print(
                json.dumps(
                    {
                        "source": source,
                        "tool": f.tool,
                        "rule": f.rule,
                        "parameter": f.parameter,
                        "other": f.other,
                        "message": f.message,
                        "text": f.text[:400],
                    },
                    ensure_ascii=False,
                )
            )
        return
    per_rule, stale = precision()
    print(f"{'rule':<28} {'findings':>8} {'judged':>7} {'right':>6} {'precision':>9}")
    total = Counter[str]()
    for rule, c in per_rule.items():
        total.update(c)
        shown = f"{c['right'] / c['judged']:.2f}" if c["judged"] else "-"
        print(f"{rule:<28} {c['found']:>8} {c['judged']:>7} {c['right']:>6} {shown:>9}")
    print(
        f"{'all rules':<28} {total['found']:>8} {total['judged']:>7} {total['right']:>6} "
        f"{total['right'] / max(total['judged'], 1):>9.2f}"
    )
    if stale:
        print(f"({stale} judged findings are no longer made)")
    hit, planted, missed, false_alarms = recall()
    print(f"\nplanted defects found: {hit} of {planted} (recall {hit / planted:.2f})")
    for line in missed:
        print(f"  missed {line}")
    print(f"findings on tools planted clean: {len(false_alarms)}")
    for line in false_alarms:
        print(f"  {line}")


if __name__ == "__main__":
    sys.exit(main())
