"""CPU cost of the wire formats: encoding and decoding a whole history, per message.

The loop re-encodes the full history on every step, so this cost is paid (steps x messages) times per run.
Prints medians of interleaved rounds, in microseconds per message, next to ``orjson.dumps`` of the same
body (the serialization every transport pays anyway) as a yardstick.

    python benchmarks/formats.py [--messages 22] [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import orjson

from toolslip.formats import get_format
from toolslip.messages import Message, Request, ToolCall, ToolResult, ToolSpec


def history(n: int) -> tuple[Message, ...]:
    """A system prompt, a question, then call/result pairs like the expenses example, ``n`` messages."""
    messages = [
        Message.system("你是一个严谨的助手。需要算数或汇率时必须调用工具。"),
        Message.user("320 USD 和 15000 JPY 一共多少人民币？"),
    ]
    i = 0
    while len(messages) < n:
        call = ToolCall(
            id=f"call_{i}",
            name="fx",
            arguments={"amount": 320 + i, "currency": "USD"},
            raw_arguments=f'{{"amount":{320 + i},"currency":"USD"}}',
        )
        messages.append(Message.assistant("", [call]))
        messages.append(Message.tool([ToolResult(call_id=call.id, content=f"{320 + i} USD = 2297.6 CNY")]))
        i += 1
    return tuple(messages[:n])


def timed(fn: Callable[[], object], repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    spec = ToolSpec(
        name="fx",
        description="把外币金额换算成人民币。",
        parameters={
            "type": "object",
            "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}},
            "required": ["amount", "currency"],
        },
    )
    request = Request(model="m", messages=history(args.messages), tools=(spec,))
    n = len(request.messages)
    cases: dict[str, Callable[[], object]] = {}
    for name in ("openai-chat", "anthropic"):
        fmt = get_format(name)
        body = fmt.request_to_wire(request)
        cases[f"{name} request_to_wire"] = lambda fmt=fmt: fmt.request_to_wire(request)
        cases[f"{name} request_from_wire"] = lambda fmt=fmt, body=body: fmt.request_from_wire(body)
        cases[f"{name} orjson.dumps(body)"] = lambda body=body: orjson.dumps(body)
    samples: dict[str, list[float]] = {case: [] for case in cases}
    for _ in range(args.rounds):  # interleaved, so noise from other processes hits every case alike
        for case, fn in cases.items():
            samples[case].append(timed(fn, 200) / n * 1e6)
    print(f"{n}-message history, {args.rounds} interleaved rounds, median µs per message")
    for case, values in samples.items():
        print(f"  {case:38s} {statistics.median(values):6.2f}")
    for name in ("openai-chat", "anthropic"):
        encode = statistics.median(samples[f"{name} request_to_wire"])
        dumps = statistics.median(samples[f"{name} orjson.dumps(body)"])
        print(f"  {name}: request_to_wire / orjson.dumps = {encode / dumps:.1f}x")


if __name__ == "__main__":
    main()
