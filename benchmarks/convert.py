"""Cost of ``toolslip.convert``: on real recorded traffic, and on one long conversation per pair of formats.

1. The real-traffic corpora (``tests/data/real_traffic``: 1,653 interactions recorded by five public
   projects, and its ``google_aws_ollama`` folder: 617 Gemini, Converse and Ollama interactions from
   fourteen): each round converts every request and response body to each of the other formats but
   legacy functions (``on_loss="drop"``, as the tests do), and once more to its own. Prints, per corpus,
   conversions per second and the median time per conversion over the rounds (client CPU,
   ``process_time``), with the spread.
2. A 100-message request (system prompt, question, then call/result pairs with text next to the calls)
   written in each format; each round converts it to every format, interleaved so machine noise hits every
   pair alike. Prints the median microseconds per message for each pair, and next to it the cost of
   ``json.loads(json.dumps(body))`` of the same body as a yardstick (what any JSON round trip costs).

    python benchmarks/convert.py [--messages 100] [--rounds 15] [--corpus-rounds 5]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from formats import timed  # benchmarks/formats.py: the same timing loop

from toolslip.conversion import convert
from toolslip.formats import FORMATS, get_format
from toolslip.messages import Message, Request, Settings, ToolCall, ToolResult, ToolSpec


def conversation(n: int) -> Request:
    """System, question, then (assistant text + one call, its result) pairs: ``n`` messages."""
    messages = [Message.system("你是一个严谨的助手。需要算数或汇率时必须调用工具。"), Message.user("一共多少人民币？")]
    i = 0
    while len(messages) < n:
        call = ToolCall(id=f"call_{i}", name="fx", arguments={"amount": 320 + i, "currency": "USD"})
        messages.append(Message.assistant(f"第 {i} 步：换算。", [call]))
        messages.append(Message.tool([ToolResult(call_id=call.id, content=f"{320 + i} USD = {2297.6 + i} CNY")]))
        i += 1
    spec = ToolSpec(
        name="fx",
        description="把外币金额换算成人民币。",
        parameters={"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}},
    )
    return Request(model="m", messages=tuple(messages[:n]), tools=(spec,), settings=Settings(max_tokens=512))


CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "real_traffic"
TARGETS = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "ollama")


def corpus_bodies(folder: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """(format, "request" | "response", body) for every body of a real-traffic corpus."""
    out = []
    for path in sorted(folder.glob("*.jsonl.gz")):
        if path.name == "streams.jsonl.gz":
            continue
        for line in gzip.decompress(path.read_bytes()).splitlines():
            rec = json.loads(line)
            out += [(rec["format"], what, rec[what]) for what in ("request", "response") if rec[what] is not None]
    return out


def corpus(folder: Path, rounds: int) -> None:
    bodies = corpus_bodies(folder)
    jobs = [(fmt, what, body, target) for fmt, what, body in bodies for target in {fmt, *TARGETS}]
    per_round: list[float] = []
    for _ in range(rounds):
        start = time.process_time()
        for fmt, what, body, target in jobs:
            convert(body, from_=fmt, to=target, what=what, on_loss="drop")  # type: ignore[arg-type]
        per_round.append(time.process_time() - start)
    best, mid, worst = min(per_round), statistics.median(per_round), max(per_round)
    print(
        f"real-traffic corpus {folder.name}: {len(bodies)} bodies, {len(jobs)} conversions a round, "
        f"{rounds} rounds (CPU time)"
    )
    print(
        f"  {len(jobs) / mid:,.0f} conversions/s; median {mid / len(jobs) * 1e3:.3f} ms per conversion "
        f"(rounds {best / len(jobs) * 1e3:.3f}-{worst / len(jobs) * 1e3:.3f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--corpus-rounds", type=int, default=5)
    args = parser.parse_args()
    corpus(CORPUS, args.corpus_rounds)
    corpus(CORPUS / "google_aws_ollama", args.corpus_rounds)
    request = conversation(args.messages)
    n = len(request.messages)
    bodies = {name: get_format(name).request_to_wire(request) for name in sorted(FORMATS)}
    cases: dict[str, Callable[[], object]] = {}
    for source, target in itertools.product(sorted(FORMATS), repeat=2):
        body = bodies[source]
        cases[f"{source} -> {target}"] = lambda b=body, s=source, t=target: convert(b, from_=s, to=t)
    for name, body in bodies.items():
        cases[f"json round trip ({name})"] = lambda b=body: json.loads(json.dumps(b))
    samples: dict[str, list[float]] = {case: [] for case in cases}
    for _ in range(args.rounds):
        for case, fn in cases.items():
            samples[case].append(timed(fn, 10) / n * 1e6)
    medians = {case: statistics.median(values) for case, values in samples.items()}
    print(f"{n}-message conversation, {args.rounds} interleaved rounds, median µs per message")
    for case, value in medians.items():
        print(f"  {case:42s} {value:7.2f}")
    pairs = [v for k, v in medians.items() if "->" in k]
    yardstick = statistics.median(v for k, v in medians.items() if "json" in k)
    print(
        f"  slowest pair: {max(pairs):.2f} µs/message = {max(pairs) / 1000:.4f} ms/message "
        f"({max(pairs) / yardstick:.1f}x a json round trip of the body)"
    )


if __name__ == "__main__":
    main()
