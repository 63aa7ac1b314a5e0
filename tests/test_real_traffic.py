"""Real recorded API traffic (``tests/data/real_traffic``, written by others) converts with no crash and no
silent loss, and ``toolslip check`` finds nothing wrong with requests the services accepted.

The content before and after each conversion is counted by ``_traffic_content``, an extractor that reads
the raw JSON and imports nothing from toolslip, so the check does not trust the code it checks.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from _traffic_content import CATEGORIES, content
from toolslip.checker import check
from toolslip.conversion import Conversion, Loss, convert
from toolslip.errors import CannotExpress

CORPUS = Path(__file__).parent / "data" / "real_traffic"
FORMATS = ("openai-chat", "openai-responses", "anthropic", "openai-functions", "gemini", "bedrock", "ollama")


def _load() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.jsonl.gz")):
        records += [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines() if line]
    return records


RECORDS = _load()


def _bodies() -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """(id, format, "request" | "response", body) for every body in the corpus."""
    for rec in RECORDS:
        for what in ("request", "response"):
            if rec[what] is not None:
                yield rec["id"], rec["format"], what, rec[what]


def test_the_corpus_is_real_varied_and_large_enough() -> None:
    sources = Counter(rec["id"].rsplit("-", 1)[0] for rec in RECORDS)
    assert len(RECORDS) >= 500 and len(sources) >= 3, sources
    readme = (CORPUS / "README.md").read_text()
    for source in sources:
        assert f"`{source}.jsonl.gz`" in readme  # each file's repository, commit, path and licence
    seen: Counter[tuple[str, str, str]] = Counter()
    for _, fmt, what, body in _bodies():
        found = content(fmt, what, body)
        for category in ("call", "result", "reasoning", "citation", "hosted", "tool", "media"):
            if found[category]:
                seen[fmt, what, category] += 1
    for fmt in ("openai-chat", "openai-responses", "anthropic"):
        assert seen[fmt, "request", "result"] and seen[fmt, "request", "call"] and seen[fmt, "request", "tool"]
        assert seen[fmt, "response", "call"], fmt  # tool calls both ways: made by the model, answered in requests
        assert seen[fmt, "response", "reasoning"], fmt
    assert seen["anthropic", "response", "citation"] and seen["openai-responses", "response", "citation"]
    assert seen["anthropic", "response", "hosted"] and seen["openai-responses", "response", "hosted"]
    assert seen["anthropic", "request", "hosted"] and seen["openai-responses", "request", "hosted"]


def test_identity_conversion_gives_back_the_same_json() -> None:
    failures = []
    for rid, fmt, what, body in _bodies():
        try:
            out = convert(body, from_=fmt, to=fmt, what=what)  # type: ignore[arg-type]
        except Exception as exc:  # every failure is reported with its body's id
            failures.append(f"{rid} {what}: {type(exc).__name__}: {exc}")
            continue
        if _canon(out.data) != _canon(body) or out.lost:
            failures.append(f"{rid} {what}: not the same JSON back (lost: {list(map(str, out.lost))[:2]})")
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


# --- cross-format conversions ----------------------------------------------------------------------

_REASONING_BLOCKS = {"thinking", "redacted_thinking", "reasoning", "reasoningContent"}
_RESULT_BLOCKS = {"toolResult", "functionResponse"}  # a result where none belongs (in the model's own message)
_MEDIA_BLOCKS = {"document", "image", "input_file", "file", "input_audio", "audio", "input_image"}
_ALL = set(CATEGORIES)
# What a Loss says it lost, by words in Loss.what: the categories of content it may account for.
_LOSS_WORDS = (  # the most specific words first: the first match decides
    ("choices[1:]", _ALL),  # other answers of an n > 1 response
    ("request field 'generationConfig.thinkingConfig", {"field", "setting"}),  # it holds the effort level
    ("request field 'generationConfig.responseMimeType'", {"field", "setting"}),  # JSON mode
    ("request field 'response_format'", {"field", "setting"}),  # JSON mode where it holds no schema
    ("request field 'text'", {"field", "setting"}),
    ("request field 'format'", {"field", "setting"}),
    ("request field 'generationConfig.", {"field"}),  # Gemini's knobs, response_schema among them
    ("schema", {"schema", "tool", "setting"}),  # structured output (as a final-answer tool where no field)
    ("token count", {"setting"}),
    ("joined", {"text", "reasoning"}),  # several parts a target spells as one string
    ("request field 'stream'", {"setting"}),
    ("request field 'reasoning", {"field", "setting"}),  # Responses' reasoning holds the effort knob
    ("request field", {"field"}),
    ("tool field", {"flag", "tool"}),
    ("tool declaration", {"hosted"}),
    ("'annotations'", {"citation"}),
    ("'citations'", {"citation"}),
    ("'namespace'", {"flag"}),
    ("'audio'", {"media"}),
    ("'thoughtSignature'", {"opaque", "field"}),  # Gemini's signature on a call or text part
    ("groundingMetadata'", {"citation", "field"}),  # Gemini's search grounding: its sources are citations
    ("field", {"field"}),
    ("reasoning", {"reasoning", "opaque"}),
    ("file", {"media"}),
    ("image", {"media"}),
    ("participant name", {"field"}),
    ("stop sequences", {"setting"}),
    ("max_tokens", {"setting"}),
    ("tool_choice", {"setting"}),
    ("parallel", {"setting"}),
    ("is_error", {"result"}),
    ("strict", {"tool"}),
    ("JSON object", {"call"}),
    ("no tools", {"tool"}),
)


def _categories(loss: Loss) -> set[str]:
    block = re.search(r"block '([^']*)'", loss.what)
    if block:
        kind = block.group(1)
        found = (
            {"reasoning", "opaque"}
            if kind in _REASONING_BLOCKS
            else {"media"}
            if kind in _MEDIA_BLOCKS
            else {"result", "media", "hosted"}  # with whatever it held
            if kind in _RESULT_BLOCKS
            else {"hosted"}
        )
        return found | {"field"}  # a content part the extractor knows only by its type
    return next((cats for word, cats in _LOSS_WORDS if word in loss.what), set())


def _unreported(src_fmt: str, dst_fmt: str, what: str, body: dict[str, Any], out: Conversion) -> list[str]:
    """Content that differs between ``body`` and ``out.data`` with no loss in ``out.lost`` to account for it."""
    before, after = content(src_fmt, what, body), content(dst_fmt, what, out.data)
    problems = []
    for category in CATEGORIES:
        missing, added = before[category] - after[category], after[category] - before[category]
        if dst_fmt == "openai-functions":
            missing.pop(("parallel_tool_calls", "false"), None)  # legacy functions make one call per turn anyway
        need = max(sum(missing.values()), sum(added.values()))
        if category == "citation":
            need = min(need, 1)  # one lost field of annotations holds all of them
        have = sum(1 for loss in out.lost if category in _categories(loss))
        if have < need:
            example = next(iter(missing or added))
            problems.append(f"{category} {'lost' if missing else 'added'} {str(example)[:100]}")
    return problems


def test_every_cross_format_conversion_is_lossless_or_says_what_it_lost() -> None:
    failures = []
    conversions = 0
    for rid, fmt, what, body in _bodies():
        for target in FORMATS:
            if target == fmt:
                continue
            where = f"{rid} {what} {fmt} -> {target}"
            split = target == "openai-functions"
            conversions += 2
            try:
                strict: Conversion | None = convert(body, from_=fmt, to=target, what=what, split_calls=split)  # type: ignore[arg-type]
                raised: CannotExpress | None = None
            except CannotExpress as exc:
                strict, raised = None, exc
            try:
                dropped = convert(body, from_=fmt, to=target, what=what, on_loss="drop", split_calls=split)  # type: ignore[arg-type]
                if dropped.lost:  # marks differ from drops only where something is lost
                    convert(body, from_=fmt, to=target, what=what, on_loss="mark", split_calls=split)  # type: ignore[arg-type]
            except CannotExpress as exc:
                # Only legacy functions refuse under every policy: a response with several calls.
                if not (target == "openai-functions" and "calls in one response" in str(exc)):
                    failures.append(f"{where}: refused under on_loss='drop': {exc}")
                continue
            except Exception as exc:  # every crash is reported with its body's id
                failures.append(f"{where}: {type(exc).__name__}: {exc}")
                continue
            if strict is not None and (_stamped(strict.data) != _stamped(dropped.data) or strict.lost != dropped.lost):
                failures.append(f"{where}: on_loss='error' succeeded but differs from on_loss='drop'")
            if raised is not None and not any(loss.path == raised.path for loss in dropped.lost):
                failures.append(f"{where}: raised {raised} but on_loss='drop' lists no loss there")
            failures += [f"{where}: {problem}" for problem in _unreported(fmt, target, what, body, dropped)]
    assert conversions > 5000
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


def test_check_finds_nothing_wrong_in_requests_the_services_accepted() -> None:
    failures = []
    for rid, fmt, what, body in _bodies():
        if what != "request":
            continue
        report = check(body, fmt)
        if report.problems:
            failures.append(f"{rid} ({fmt}): {report.problems[0]}")
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _stamped(value: Any) -> str:
    """``value`` without the creation time a writer stamps on a response it makes (it ticks between two runs)."""
    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k not in ("created", "created_at")}
    return _canon(value)


REFUSALS = CORPUS / "refusals.txt"
REVIEWED_TARGETS = FORMATS
"""The targets whose refusals over this corpus were reviewed cause by cause (issue 30): all seven."""


def refusal_causes(bodies: Iterable[tuple[str, str, str, dict[str, Any]]]) -> Counter[str]:
    """How often each cause (``target: what``, numbers as N) refused a conversion (``on_loss="error"``)."""
    found: Counter[str] = Counter()
    for _, fmt, what, body in bodies:
        for target in REVIEWED_TARGETS:
            if target == fmt:
                continue
            try:
                convert(body, from_=fmt, to=target, what=what, split_calls=target == "openai-functions")  # type: ignore[arg-type]
            except CannotExpress as exc:
                cause = str(exc).split(": ", 1)[1].split(" cannot be expressed in ")[0]
                found[f"{target}: {re.sub(r'[0-9]+', 'N', cause)}"] += 1
    return found


def listed_refusals() -> set[str]:
    return {line for line in REFUSALS.read_text().splitlines() if line and not line.startswith("#")}


def test_refusals_over_the_corpus_have_only_these_causes() -> None:
    """Every refusal (``on_loss="error"``) over the corpus, by cause, is one listed, with its reason, in
    ``refusals.txt``: a new cause fails here, so nothing the target can say is refused unnoticed. (The
    Gemini, Converse and Ollama corpus is checked against the same list in ``test_real_traffic_native``.)"""
    found = refusal_causes(_bodies())
    new = {cause: n for cause, n in found.items() if cause not in listed_refusals()}
    assert not new, f"refused for a cause not in {REFUSALS.name}: {new}"
    assert sum(found.values()) > 1000  # the check ran over the corpus
