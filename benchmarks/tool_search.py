"""Tool search on BFCL: recall on sources the index was not tuned on, at 10,000 tools, per script, and abstention.

    pip install --no-deps bfcl-eval
    python benchmarks/tool_search.py

* Recall: each single-call question is a query, its ground-truth function the answer, each name counted
  once in a ranking (``search`` returns names), for a plain BM25 baseline (lower-cased ``\\w+`` words,
  every field weight 1) and ``ToolIndex``. The live categories are split in two by the answer's name
  (``bfcl.split``): the index was tuned looking at the first half only; the held-out half counts.
* 10,000 tools: every real BFCL doc plus seeded splices of two non-live docs each, so no distractor copies
  the live functions under test; CPU time per query (``process_time``, the machine is shared).
* Scripts: the live questions not written in English, whose functions are described in English.
* Abstention: the floor is the 5th percentile of the right hits' scores on the tuning half; reported on the
  held-out halves of the live questions and of ``irrelevance`` + ``live_irrelevance`` (questions no offered
  function answers), with each question's own functions, and in one shared pool.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import bfcl

from toolslip.messages import ToolSpec
from toolslip.search import DEFAULT_FLOOR, ToolIndex

PLAIN_WEIGHTS = {"name": 1.0, "description": 1.0, "param_name": 1.0, "param_description": 1.0}


def plain_words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def quality(ranker: ToolIndex | Callable[[str], list[str]], queries: Sequence[bfcl.Query]) -> dict[str, float]:
    """Recall@1/5/10 and MRR of a ranker: an index, or any function from a question to its top-10 names."""
    rank = ranker if callable(ranker) else lambda question: [hit.name for hit in ranker.search(question, 10)]
    found = {1: 0, 5: 0, 10: 0}
    reciprocal = 0.0
    for q in queries:
        names = rank(q.question)[:10]
        if q.answer in names:
            rank_of = names.index(q.answer) + 1
            reciprocal += 1 / rank_of
            for k in found:
                found[k] += rank_of <= k
    n = len(queries)
    return {"R@1": found[1] / n, "R@5": found[5] / n, "R@10": found[10] / n, "MRR": reciprocal / n}


def synthetic(pool: Sequence[ToolSpec], size: int, seed: int = 0) -> list[ToolSpec]:
    """``pool`` plus spliced tools up to ``size``: name, description and parameters from two random docs."""
    rng = random.Random(seed)
    tools = list(pool)
    while len(tools) < size:
        a, b = rng.sample(pool, 2)
        words_a, words_b = a.description.split(), b.description.split()
        description = " ".join(words_a[: len(words_a) // 2] + words_b[len(words_b) // 2 :])
        props_a: dict[str, Any] = dict(a.parameters.get("properties", {}))
        props_b: dict[str, Any] = dict(b.parameters.get("properties", {}))
        properties = dict(list(props_a.items())[:2] + list(props_b.items())[:2])
        name = f"{a.name.split('.')[0]}.{b.name.split('.')[-1]}_{len(tools)}"
        tools.append(
            ToolSpec(name=name, description=description, parameters={"type": "object", "properties": properties})
        )
    return tools


def timed(fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> float:
    start = clock()
    fn()
    return clock() - start


def plain_bm25(pool: Sequence[ToolSpec]) -> ToolIndex:
    """The baseline: BM25 over lower-cased ``\\w+`` words, every field weight 1, each name once in a ranking."""
    return ToolIndex(pool, analyzer=plain_words, weights=PLAIN_WEIGHTS, expand=False)


def compare(pool: Sequence[ToolSpec], sets: Sequence[tuple[str, Sequence[bfcl.Query]]], title: str) -> None:
    print(f"\n{title}: {len(pool)} docs, {len({t.name for t in pool})} names (R@k counts each name once)")
    indexes = (("BM25 plain (baseline)", plain_bm25(pool)), ("toolslip ToolIndex", ToolIndex(pool)))
    print(f"{'queries':<34} {'retriever':<24} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for label, queries in sets:
        for name, index in indexes:
            row = quality(index, queries)
            print(f"{label:<34} {name:<24} " + " ".join(f"{row[k]:6.3f}" for k in ("R@1", "R@5", "R@10", "MRR")))


def large_pool(size: int) -> list[ToolSpec]:
    """Every real BFCL doc (3,420, multi-turn APIs included), then splices of the non-live docs up to ``size``."""
    real = bfcl.every_doc()
    donors, _ = bfcl.load((*bfcl.CATEGORIES, "parallel", "parallel_multiple", *bfcl.OTHER_LANGUAGES))
    return real + synthetic(donors, size - len(real) + len(donors))[len(donors) :]


def latency(index: ToolIndex, queries: Sequence[bfcl.Query], rounds: int = 3) -> tuple[float, float]:
    samples = sorted(
        timed(lambda q=q: index.search(q.question, 5), time.process_time) for _ in range(rounds) for q in queries
    )
    return samples[len(samples) // 2], samples[int(len(samples) * 0.95)]


def abstention(tuning: Sequence[bfcl.Query], held: Sequence[bfcl.Query]) -> None:
    """The floor that keeps 95% of the right hits of the tuning half; what it does on the held-out half."""
    print("\nNothing fits: the score floor calibrated on the tuning half (95% of its right top-5 hits clear it)")
    tuning_ids, held_ids = {q.id for q in tuning}, {q.id for q in held}
    irrelevant = bfcl.irrelevant()
    halves = [[u for u in irrelevant if zlib.crc32(u.id.encode()) % 2 == h] for h in (0, 1)]

    def hit_scores(index_of: Callable[[bfcl.Query, Sequence[ToolSpec]], ToolIndex], ids: set[str]) -> list[float]:
        scores = []
        for query, offered in bfcl.items(bfcl.LIVE):
            if query is not None and query.id in ids:
                found = {h.name: h.score for h in index_of(query, offered).search(query.question, 5)}
                if query.answer in found:
                    scores.append(found[query.answer])
        return scores

    def top(index_of: Callable[[bfcl.Unanswerable], ToolIndex], items: Sequence[bfcl.Unanswerable]) -> list[float]:
        return [next(iter(h.score for h in index_of(u).search(u.question, 1)), 0.0) for u in items]

    shared_pool = [*bfcl.load(bfcl.LIVE)[0], *(s for u in irrelevant for s in u.offered)]
    shared = ToolIndex(shared_pool)
    settings = (
        ("own list (the item's functions)", lambda q, offered: ToolIndex(offered), lambda u: ToolIndex(u.offered)),
        (f"shared pool ({len(shared_pool)} docs)", lambda q, offered: shared, lambda u: shared),
    )
    print(f"{'setting':<30} {'floor':>6} {'hits kept':>10} {'nothing fits':>13} {'no word shared':>15}")
    for label, relevant_index, irrelevant_index in settings:
        floor = statistics.quantiles(hit_scores(relevant_index, tuning_ids), n=20)[0]
        kept = hit_scores(relevant_index, held_ids)
        unanswerable = top(irrelevant_index, halves[1])
        print(
            f"{label:<30} {floor:6.2f} {sum(s >= floor for s in kept) / len(kept):10.3f} "
            f"{sum(s < floor for s in unanswerable) / len(unanswerable):13.3f} "
            f"{sum(s == 0 for s in unanswerable) / len(unanswerable):15.3f}"
        )
    print(f"(held out: {len(halves[1])} unanswerable questions; ToolSearch's DEFAULT_FLOOR is {DEFAULT_FLOOR})")


def scripts() -> None:
    """Per script: the live questions written in it, and whether their function is in the top 5."""
    pool, queries = bfcl.load(bfcl.LIVE)
    index, baseline = ToolIndex(pool), plain_bm25(pool)
    by_script: dict[str, list[bfcl.Query]] = {}
    for q in queries:
        script = _script(q.question)
        if script != "latin (English)":
            by_script.setdefault(script, []).append(q)
    print("\nBFCL live questions not in English (functions described in English), found in the top 5:")
    for script, qs in sorted(by_script.items()):
        ours = sum(q.answer in [h.name for h in index.search(q.question, 5)] for q in qs)
        base = sum(q.answer in [h.name for h in baseline.search(q.question, 5)] for q in qs)
        print(f"  {script:<22} {len(qs):3} questions: ToolIndex {ours}, BM25 plain {base}")


def _script(text: str) -> str:
    for name, pattern in (
        ("chinese/japanese", r"[\u3040-\u30ff\u4e00-\u9fff]"),
        ("korean", r"[\uac00-\ud7af]"),
        ("thai", r"[\u0e00-\u0e7f]"),
        ("devanagari", r"[\u0900-\u097f]"),
        ("cyrillic", r"[\u0400-\u04ff]"),
        ("latin with accents", r"[\u00c0-\u024f\u1e00-\u1eff]"),
    ):
        if re.search(pattern, text):
            return name
    return "latin (English)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000, help="tools in the large pool (default 10000)")
    args = parser.parse_args()

    pool, queries = bfcl.load()
    compare(pool, [("simple_python + multiple", queries)], "BFCL non-live (what the index was first tuned on)")
    live_pool, live = bfcl.load(bfcl.LIVE)
    tuning, held = bfcl.split(live)
    compare(
        live_pool,
        [(f"live, tuning half ({len(tuning)})", tuning), (f"live, held out ({len(held)})", held)],
        "BFCL live_simple + live_multiple, split by the answer's name",
    )
    other_pool, other = bfcl.load(bfcl.OTHER_LANGUAGES)
    compare(other_pool, [("simple_java + simple_javascript", other)], "BFCL Java and JavaScript docs (never tuned on)")

    tools = large_pool(args.size)
    builds = [timed(lambda: ToolIndex(tools), time.process_time) for _ in range(3)]
    big, baseline = ToolIndex(tools), plain_bm25(tools)
    p50, p95 = latency(big, held)
    print(f"\n{len(tools)} tools (3,420 real BFCL docs + splices of non-live docs), live held-out questions:")
    for name, index in (("BM25 plain (baseline)", baseline), ("toolslip ToolIndex", big)):
        row = quality(index, held)
        print(f"  {name:<24} " + " ".join(f"{k} {v:.3f}" for k, v in row.items()))
    print(
        f"  index build CPU median of 3: {statistics.median(builds):.3f} s"
        f" (min {min(builds):.3f}, max {max(builds):.3f})"
    )
    print(f"  query CPU time, k=5, {3 * len(held)} queries: p50 {p50 * 1000:.3f} ms, p95 {p95 * 1000:.3f} ms")

    scripts()
    abstention(tuning, held)


if __name__ == "__main__":
    main()
