"""Cost of ``toolslip.convert`` on a whole conversation, for every pair of the four wire formats.

A 100-message request (system prompt, question, then call/result pairs with text next to the calls) is
written in each format; each round converts it to every format, interleaved so machine noise hits every
pair alike. Prints the median microseconds per message for each pair, and next to it the cost of
``json.loads(json.dumps(body))`` of the same body as a yardstick (what any JSON round trip costs).

    python benchmarks/convert.py [--messages 100] [--rounds 15]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from collections.abc import Callable

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
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
