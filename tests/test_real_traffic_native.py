"""Recorded Gemini, Bedrock Converse and Ollama traffic (``tests/data/real_traffic/google_aws_ollama``, from
fifteen public projects; nobody here wrote it) goes through the checks the other recorded traffic goes
through: every body reads and writes back as the same JSON, and every conversion among the seven formats
runs, and says what it lost, counted by ``_traffic_content`` (which imports nothing from toolslip).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

from _traffic_content import content
from test_real_traffic import (
    FORMATS,
    REFUSALS,
    _bodies,
    _canon,
    _stamped,
    _unreported,
    listed_refusals,
    refusal_causes,
)
from toolslip.checker import check
from toolslip.conversion import Conversion, convert
from toolslip.errors import CannotExpress
from toolslip.formats import bedrock, bedrock_stream, gemini, gemini_stream, ollama, ollama_stream
from toolslip.formats.sse import SSEDecoder

CORPUS = Path(__file__).parent / "data" / "real_traffic" / "google_aws_ollama"
NATIVE = ("gemini", "bedrock", "ollama")


def _load() -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for path in sorted(CORPUS.glob("*.jsonl.gz")):
        if path.name != "streams.jsonl.gz":
            records += [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines() if line]
    return records


RECORDS = _load()
BODIES = [
    (r["id"], r["format"], what, r[what]) for r in RECORDS for what in ("request", "response") if r[what] is not None
]


def test_the_corpus_holds_all_three_formats_with_tool_traffic() -> None:
    assert len(RECORDS) == 639, len(RECORDS)
    seen: Counter[tuple[str, str, str]] = Counter()
    for _, fmt, what, body in BODIES:
        found = content(fmt, what, body)
        seen.update((fmt, what, category) for category in found if found[category])
    for fmt in NATIVE:
        assert seen[fmt, "request", "tool"] and seen[fmt, "request", "call"] and seen[fmt, "request", "result"], fmt
        assert seen[fmt, "response", "call"] and seen[fmt, "response", "reasoning"], fmt
    assert seen["gemini", "response", "opaque"] and seen["gemini", "response", "citation"]
    assert seen["gemini", "request", "hosted"] and seen["bedrock", "response", "opaque"]


def test_identity_gives_back_the_same_json() -> None:
    failures = []
    for rid, fmt, what, body in BODIES:
        try:
            out = convert(body, from_=fmt, to=fmt, what=what)  # type: ignore[arg-type]
        except Exception as exc:  # every failure is reported with its body's id
            failures.append(f"{rid} {what}: {type(exc).__name__}: {exc}")
            continue
        if _canon(out.data) != _canon(body) or out.lost:
            failures.append(f"{rid} {what}: not the same JSON back (lost: {list(map(str, out.lost))[:2]})")
    assert len(BODIES) == 1068
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


def test_every_conversion_among_seven_formats_runs_and_reports_what_it_lost() -> None:
    failures = []
    conversions = 0
    for rid, fmt, what, body in BODIES:
        for target in FORMATS:
            if target == fmt:
                continue
            where = f"{rid} {what} {fmt} -> {target}"
            split = target == "openai-functions"
            conversions += 1
            try:
                strict: Conversion | None = convert(body, from_=fmt, to=target, what=what, split_calls=split)  # type: ignore[arg-type]
                raised: CannotExpress | None = None
            except CannotExpress as exc:
                strict, raised = None, exc
            try:
                dropped = convert(body, from_=fmt, to=target, what=what, on_loss="drop", split_calls=split)  # type: ignore[arg-type]
                if dropped.lost:
                    convert(body, from_=fmt, to=target, what=what, on_loss="mark", split_calls=split)  # type: ignore[arg-type]
            except CannotExpress as exc:
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
    assert conversions == 6 * len(BODIES)
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


def test_refusals_have_only_the_causes_reviewed_for_the_whole_corpus() -> None:
    """The refusals over this corpus, by cause, are all listed with their reasons in ``refusals.txt``, and
    every cause listed there still refuses something in one of the two corpora (no stale line)."""
    found = refusal_causes(BODIES)
    listed = listed_refusals()
    new = {cause: n for cause, n in found.items() if cause not in listed}
    assert not new, f"refused for a cause not in {REFUSALS.name}: {new}"
    stale = listed - set(found) - set(refusal_causes(_bodies()))
    assert not stale, f"listed in {REFUSALS.name} but refusing nothing: {sorted(stale)}"


def test_check_finds_nothing_wrong_in_requests_the_services_accepted() -> None:
    failures = []
    for rid, fmt, what, body in BODIES:
        if what == "request":
            report = check(body, fmt)
            if report.problems:
                failures.append(f"{rid} ({fmt}): {report.problems[0]}")
    assert not failures, f"{len(failures)} failures, first: {failures[:10]}"


def test_recorded_streams_accumulate_to_the_answer_they_stream() -> None:
    """Gemini SSE and decoded chunks, Converse's decoded events and Ollama's NDJSON lines each rebuild one
    answer; writing that answer as chunks again and reading them gives the same answer back."""
    done: Counter[str] = Counter()
    calls = 0
    for line in gzip.decompress((CORPUS / "streams.jsonl.gz").read_bytes()).splitlines():
        record = json.loads(line)
        fmt, kind = record["format"], record["stream_kind"]
        if kind in ("eventstream", "json-array"):
            continue  # binary framing (the transport's job) and one unframed array
        text = record["stream_text"]
        if fmt == "gemini":
            acc: Any = gemini_stream.Accumulator()
            if kind == "sse":
                for event in SSEDecoder().feed(text.encode()):
                    acc.feed(event)
            else:
                for chunk in text.splitlines():
                    acc.feed_object(json.loads(chunk))
            again: Any = gemini_stream.Accumulator()
            for chunk in gemini_stream.response_to_chunks(acc.finish()):
                again.feed_object(chunk)
            assert gemini.response_to_wire(again.finish()) == gemini.response_to_wire(acc.finish()), record["id"]
        elif fmt == "bedrock":
            acc = bedrock_stream.Accumulator()
            for chunk in text.splitlines():
                acc.feed_object(json.loads(chunk))
            again = bedrock_stream.Accumulator()
            for name, payload in bedrock_stream.response_to_events(acc.finish()):
                again.feed_event(name, payload)
            first, second = bedrock.response_to_wire(acc.finish()), bedrock.response_to_wire(again.finish())
            first.pop("metrics", None), second.pop("metrics", None)
            assert first == second, record["id"]
        else:
            acc = ollama_stream.Accumulator()
            for chunk in text.splitlines():
                acc.feed_line(chunk)
            again = ollama_stream.Accumulator()
            for chunk in ollama_stream.response_to_chunks(acc.finish()):
                again.feed_object(chunk)
            assert ollama.response_to_wire(again.finish()) == ollama.response_to_wire(acc.finish()), record["id"]
        done[fmt] += 1
        calls += len(acc.finish().message.tool_calls)
    assert done == {"gemini": 143, "bedrock": 12, "ollama": 6}, done
    assert calls >= 60, calls  # streamed calls, Vertex's partialArgs pieces included
