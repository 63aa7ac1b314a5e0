"""Token counts: exact o200k counts when toktok-rs is installed, a calibrated estimate otherwise."""

import json
from pathlib import Path
from typing import Any

import pytest

from toolslip import tokens
from toolslip.messages import ToolSpec

DATA = Path(__file__).parent / "data"

# Ground truth from tiktoken's o200k_base (official BPE file, sha256 446a9538...), counted outside this repo.
O200K = {
    "hello world": 2,
    "北京现在多少度？要不要带件外套？": 12,
    '{"type":"function","function":{"name":"get_weather"}}': 12,
}


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_counts_match_tiktoken_o200k() -> None:
    assert tokens.tokenizer_is_exact()
    assert tokens.count_tokens(list(O200K)) == list(O200K.values())


def test_estimate_without_the_tokenizer_stays_close(monkeypatch: pytest.MonkeyPatch) -> None:
    files = [DATA / "orders_bloated.json", DATA / "orders_clean.json"]  # compact JSON, as requests carry it
    texts = [compact(d) for f in files for d in json.loads(f.read_text(encoding="utf-8"))]
    exact = sum(tokens.count_tokens(texts))
    monkeypatch.setattr(tokens, "_COUNTER", None)
    assert not tokens.tokenizer_is_exact()
    assert sum(tokens.count_tokens(texts)) == pytest.approx(exact, rel=0.15)
    assert tokens.declaration_cost([ToolSpec(name="a", description="b", parameters={})]).exact is False


def test_declaration_cost_per_format() -> None:
    spec = ToolSpec(name="get_weather", description="Current weather.", parameters={"type": "object", "properties": {}})
    report = tokens.declaration_cost([spec, spec])
    (openai, anthropic) = (report.totals["openai-chat"], report.totals["anthropic"])
    assert openai == 2 * report.tools[0].tokens["openai-chat"] and anthropic < openai  # no {"type":"function"} wrapper
    assert report.share["openai-chat"] == pytest.approx(openai / 128_000)
    assert report.to_dict()["tokenizer"] == "o200k_base"
