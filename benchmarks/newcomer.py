"""A newcomer's questions over the examples' tools: how often a model answers right, invents, or says it could not.

The questions are ``tests/data/newcomer_questions.jsonl`` (34, English and Chinese: one-tool, arithmetic,
two-step, and some no tool can answer; see the README beside it). Every question is asked with the tools of
the example file it is about (``tools``: ``weather`` = ``get_weather``, ``expenses`` = ``calc`` and ``fx``, in
the file's order, as ``toolslip run examples/FILE.py "QUESTION"`` offers them: until 7 Dec 2026 ``fx`` came
first, and the 1.5B model's greedy path depends on the order), no system prompt; ``--all-tools`` offers all
three.
Each answer is graded against the expected figures, independently of the provider's own check:

* **correct**: every expected figure is in the answer (as written or rounded to the answer's precision) and
  one of the expected words, if any; for a question no tool can answer, the answer says it could not and
  gives no figure of its own;
* **invented**: the answer gives a figure that is neither in the question, nor in a tool result of the run,
  nor an expected figure (``marked`` when the answer itself says "[not from a tool: ...]");
* **could not**: the answer says it could not (or is sorry) and gives none of the expected figures;
* **wrong**: anything else (a figure from a tool used for the wrong thing, no answer, a step limit).

With the local model it also counts how often its figure check fired (``ModelResponse.extra``: an answer
asked once more, a figure marked) and how often it fired *wrongly*: on an answer whose figures were all
right (every figure of that answer is an expected figure, or the question's or a tool's).

    python benchmarks/newcomer.py [--model local] [--mode tool|code|both] [--k 1] [--temperature 0.7]
                                  [--first-seed 1] [--ids a,b] [--all-tools]
    python benchmarks/newcomer.py --summary OUTPUT      # the counts of a saved run's output, finished or not

``--mode code`` uses ``Agent(..., mode="code")`` where this toolslip has it (issue 37's code mode); where it
does not, it says so and stops. ``--mode both`` asks every question in both modes, one right after the other
(which goes first alternates), so both modes meet the same machine load; the counts are then given per mode.
Results go to stdout, one line per answer, then the counts, with **tokens per correct answer** (the input and
output tokens of every answer of a mode, summed, over its correct ones).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from itertools import zip_longest
from pathlib import Path
from typing import Any

from toolslip import Agent, Settings, Toolbox
from toolslip.agent.hooks import Hook, RunContext
from toolslip.core.messages import ModelResponse, Request
from toolslip.providers import resolve_model

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "data" / "newcomer_questions.jsonl"
_NUMBER = re.compile(r"(?<![0-9A-Za-z_.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![0-9A-Za-z_])")  # \w is CJK too
_COULD_NOT = (
    "could not", "couldn't", "cannot", "can't", "unable", "no data", "not available", "don't have", "do not have",
    "sorry", "not support", "unsupported", "无法", "不能", "没有", "抱歉", "不支持", "查不到", "暂无",
)  # fmt: skip
_MARK = "[not from a tool:"


def tools(which: str) -> Toolbox:
    """The tools of one example file (``weather``, ``expenses``), or of both (``all``)."""
    sys.path.insert(0, str(ROOT / "examples"))
    from expenses import calc, fx
    from weather import get_weather

    files = {"weather": [get_weather], "expenses": [calc, fx]}  # in the order the file defines them
    return Toolbox(files[which] if which in files else [get_weather, calc, fx])


def numbers(text: str) -> list[tuple[float, int]]:
    out = []
    for match in _NUMBER.finditer(text):
        plain = match.group(0).replace(",", "")
        out.append((float(plain), len(plain.partition(".")[2])))
    return out


def same(a: tuple[float, int], b: tuple[float, int]) -> bool:
    """Equal, or equal once the more precise one is rounded to the other's precision."""
    (x, dx), (y, dy) = a, b
    return x == y or round(x, dy) == y or round(y, dx) == x


def grade(q: dict[str, Any], answer: str, given: str) -> str:
    """correct, invented, could_not or wrong; ``given`` is the question and every tool result of the run."""
    text = answer.split(_MARK)[0]
    figures = numbers(text)
    expected = [numbers(f)[0] for f in q["figures"]]
    known = numbers(given) + expected
    own = [f for f in figures if not any(same(f, k) for k in known) and not (f[1] == 0 and abs(f[0]) < 10)]
    says_no = any(w in text.lower() for w in _COULD_NOT)
    if q["kind"] == "could-not":
        return "correct" if says_no and not own else ("invented" if own else "wrong")
    words = q["words"]
    if all(any(same(f, e) for f in figures) for e in expected) and (not words or any(w in text.lower() for w in words)):
        return "correct"
    if own:
        return "invented"
    return "could_not" if says_no else "wrong"


class Extras(Hook):
    """Keeps each response's ``extra`` (the local model's figure check reports there)."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        self.seen.append(dict(response.extra))
        return response


async def ask(model: Any, q: dict[str, Any], mode: str, settings: Settings, toolset: str) -> dict[str, Any]:
    extras = Extras()
    options: dict[str, Any] = {"mode": "code"} if mode == "code" else {}
    agent = Agent(
        model=model, tools=tools(toolset or q["tools"]), hooks=[extras], max_steps=8, settings=settings, **options
    )
    started = time.perf_counter()
    try:
        result = await agent.arun(q["question"])
        answer, stop = result.output or "", result.stop_reason
        messages, tokens = result.messages, result.usage.input_tokens + result.usage.output_tokens
    except Exception as exc:  # a crash is an outcome here, counted as wrong
        answer, stop, messages, tokens = f"(raised {type(exc).__name__}: {exc})", "error", [], 0
    seconds = time.perf_counter() - started
    results = " ".join(r.text for m in messages for r in m.tool_results)
    given = f"{q['question']} {results}"
    outcome = grade(q, answer, given)
    fired = [e for e in extras.seen if "asked_again" in e or "ungrounded" in e]
    # the figure check fired wrongly where the answer it judged was right (graded the same way)
    wrongly = sum(
        1
        for e in fired
        if "asked_again" in e
        and grade(q, e["asked_again"], given) == "correct"
        or "ungrounded" in e
        and outcome == "correct"
    )
    return {
        "id": q["id"],
        "mode": mode,
        "kind": q["kind"],
        "outcome": outcome,
        "marked": _MARK in answer,
        "calls": [f"{c.name}({c.arguments})" for m in messages for c in m.tool_calls],
        "fired": len(fired),
        "fired_wrongly": wrongly,
        "stop": stop,
        "tokens": tokens,
        "seconds": round(seconds, 1),
        "answer": answer[:300],
        "asked_again": [e["asked_again"][:300] for e in fired if "asked_again" in e],  # the answers it replaced
        # calls on figures the model made up, asked again; and calls never run (made up again, or cut short)
        "rewritten": [f"{c['name']}({c['arguments']})" for e in extras.seen for c in e.get("rewritten_calls", ())],
        "dropped": [f"{c['name']}({c['arguments']})" for e in extras.seen for c in e.get("dropped_calls", ())],
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("correct", "invented", "could_not", "wrong")}
    by_kind = {}
    for kind in dict.fromkeys(r["kind"] for r in rows):
        of_kind = [r for r in rows if r["kind"] == kind]
        by_kind[kind] = f"{sum(r['outcome'] == 'correct' for r in of_kind)}/{len(of_kind)}"
    return {
        "answers": len(rows),
        **counts,
        "invented_marked": sum(r["outcome"] == "invented" and r["marked"] for r in rows),
        "correct_by_kind": by_kind,
        "check_fired": sum(r["fired"] for r in rows),
        "check_fired_wrongly": sum(r["fired_wrongly"] for r in rows),
        "calls_rewritten": sum(len(r.get("rewritten", ())) for r in rows),
        "calls_dropped": sum(len(r.get("dropped", ())) for r in rows),
        "median_seconds": statistics.median(r["seconds"] for r in rows) if rows else None,
        "tokens": sum(r["tokens"] for r in rows),
        "tokens_per_correct": round(sum(r["tokens"] for r in rows) / counts["correct"]) if counts["correct"] else None,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--mode", choices=("tool", "code", "both"), default="tool")
    parser.add_argument("--k", type=int, default=1, help="answers per question (sampled when --temperature > 0)")
    parser.add_argument("--first-seed", type=int, default=1, help="sampled trial i uses seed FIRST_SEED + i")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--ids", help="comma-separated question ids (default: all)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="a JSONL file of questions (default: ours)")
    parser.add_argument("--all-tools", action="store_true", help="offer all three tools to every question")
    parser.add_argument("--no-check", action="store_true", help="local model: switch its figure check off")
    parser.add_argument("--summary", type=Path, help="print the counts of a saved output (finished or not) and stop")
    args = parser.parse_args()
    if args.summary:
        lines = [json.loads(line) for line in args.summary.read_text(encoding="utf-8").splitlines() if line[:1] == "{"]
        saved = [r for r in lines if "id" in r]  # answers, not the counts
        for mode in dict.fromkeys(r.get("mode", args.mode) for r in saved):
            of_mode = [r for r in saved if r.get("mode", args.mode) == mode]
            print(json.dumps({"mode": mode} | summary(of_mode), ensure_ascii=False))
        return
    if args.mode != "tool" and "mode" not in {f.name for f in dataclasses.fields(Agent)}:
        print("code mode is not available in this toolslip (Agent has no mode); run --mode tool", file=sys.stderr)
        raise SystemExit(2)
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    if args.ids:
        wanted = set(args.ids.split(","))
        questions = [q for q in questions if q["id"] in wanted]
    # kinds in turn, so an interrupted run has met every kind
    kinds = [[q for q in questions if q["kind"] == k] for k in dict.fromkeys(q["kind"] for q in questions)]
    questions = [q for row in zip_longest(*kinds) for q in row if q is not None]
    model = resolve_model(args.model)
    if args.no_check:
        model = dataclasses.replace(model, check_figures=False)  # type: ignore[type-var]
    tools_ = "all" if args.all_tools else "per question"
    print(
        f"# {args.model} mode={args.mode} k={args.k} t={args.temperature} tools={tools_} load={os.getloadavg()[0]:.1f}"
    )
    modes = ["tool", "code"] if args.mode == "both" else [args.mode]
    rows = []
    for trial in range(args.k):
        settings = Settings(
            temperature=args.temperature, extra={"seed": args.first_seed + trial} if args.temperature else {}
        )
        for turn, q in enumerate(questions):
            for mode in modes if turn % 2 == 0 else modes[::-1]:
                row = await ask(model, q, mode, settings, "all" if args.all_tools else "") | {"trial": trial}
                rows.append(row | {"load": round(os.getloadavg()[0], 1)})
                print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    for mode in modes:
        print(json.dumps({"mode": mode} | summary([r for r in rows if r["mode"] == mode]), ensure_ascii=False))
    print(f"# load at the end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main())
