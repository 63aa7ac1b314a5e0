"""What automatic cache breakpoints save on a 30-step agent run, billed as the provider bills it.

The same run twice, through one wire to ``toolslip serve`` with a scripted model, which counts cache reads
and writes as the service does (:mod:`toolslip.server.cache`):

- ``--wire anthropic`` (the default) and ``--wire bedrock`` (Converse, ``cachePoint`` blocks): only marked
  prefixes are written, read back at a marked point or up to 20 blocks before it, none under 1,024 tokens,
  5 minutes of life. The run goes once without breakpoints (``cache=False``: what a client that marks
  nothing pays) and once with toolslip's automatic breakpoints (``cache=True``, the default against the
  real service);
- ``--wire gemini``: Gemini 2.5 caches implicitly (every prefix of 2,048 tokens or more, nothing to mark),
  so there is one run, and the figure is what implicit caching reads back unasked.

The run: a 1,600-token system prompt, six tools, and 29 steps of one call each whose results are about
600 tokens, then the answer. Each step's usage is priced by genai-prices at the model's list price
(cache reads at a tenth of the input price, 5-minute writes at 1.25 times it) and the steps are summed.
The tokens are the o200k counts the scripted model reports, not Claude's tokenizer: the ratio is what
carries over, not the absolute figure.

Usage: ``python benchmarks/caching.py [--steps 30] [--wire anthropic|bedrock|gemini] [--model M] [--json]``
(``--model``: the genai-prices model to price as; by default Claude Sonnet 4.5 on Anthropic and Bedrock,
Gemini 2.5 Flash on Gemini).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import dataclass, replace

from toolslip import Agent, ModelResponse, Request, Toolbox, Usage, tool
from toolslip.agent.pricing import cost
from toolslip.core.events import Event, ModelResponded
from toolslip.core.messages import ToolCall
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.http import HttpModel
from toolslip.providers.scripted import estimate_usage, to_response
from toolslip.server import serve

POLICY = " ".join(
    f"Rule {i}: when a customer asks about order state, check the ledger, quote the order id, name the "
    f"warehouse and never promise a delivery date the carrier has not confirmed in writing."
    for i in range(1, 60)
)
SYSTEM = f"You are the support agent of a shop. Follow every rule.\n{POLICY}"


def _tool(name: str, what: str) -> object:
    @tool(name=name, effects="read_only", description=f"{what}. Returns the record as text with every field.")
    def lookup(id: int) -> str:
        fields = " ".join(f"field_{k}=value {id * k} of {name}" for k in range(1, 90))
        return f"{name} {id}: {fields}"

    return lookup


TOOLS = Toolbox(
    [
        _tool(n, w)
        for n, w in [
            ("order", "Read one order"),
            ("customer", "Read one customer"),
            ("ledger", "Read one ledger line"),
            ("shipment", "Read one shipment"),
            ("warehouse", "Read one warehouse"),
            ("refund", "Read one refund"),
        ]
    ]
)


class Scripted:
    """Calls one tool per step, in turn, then answers; its usage is estimated as the scripted demo's is
    (o200k tokens of what it was sent), and it is named ``scripted`` so serve counts the service's cache."""

    name = "scripted:caching"

    def __init__(self, steps: int) -> None:
        self.steps = steps

    async def complete(self, request: Request) -> ModelResponse:
        done = sum(1 for m in request.messages if m.role == "assistant")
        names = TOOLS.names
        if done >= self.steps - 1:
            turn: str | ToolCall = f"Checked {done} records."
        else:
            turn = ToolCall(id=f"call_{done}", name=names[done % len(names)], arguments={"id": done + 1})
        response = to_response(turn)
        return replace(response, usage=estimate_usage(request, response))


@dataclass
class Bill:
    usage: Usage
    dollars: float
    steps: int


PRICED_AS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "bedrock": "anthropic:claude-sonnet-4-5",
    "gemini": "gemini:gemini-2.5-flash",
}
"""The model each wire's run is priced as by default (Bedrock's Claude is listed at Anthropic's prices)."""


def client_of(wire: str, base: str, breakpoints: bool) -> HttpModel:
    if wire == "bedrock":
        from botocore.credentials import Credentials

        from toolslip.providers.bedrock import BedrockModel

        keys = Credentials("AKIDEXAMPLE", "not-a-secret")  # serve reads the SigV4 header; nobody checks the key
        model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
        return BedrockModel(model, region="us-east-1", base_url=base, credentials=keys, cache=breakpoints)
    if wire == "gemini":
        from toolslip.providers.gemini import GeminiModel

        return GeminiModel("gemini-2.5-flash", base_url=base, api_key="none")
    return AnthropicModel("claude-sonnet-4-5", base_url=base, api_key="none", cache=breakpoints)


async def one_run(wire: str, base: str, breakpoints: bool, steps: int, priced_as: str) -> Bill:
    client = client_of(wire, base, breakpoints)
    bill = Bill(Usage(), 0.0, 0)

    def listen(event: Event) -> None:
        if isinstance(event, ModelResponded):
            bill.usage = bill.usage + event.response.usage
            bill.dollars += cost(priced_as, event.response.usage, required=True) or 0.0
            bill.steps += 1

    agent: Agent[None] = Agent(model=client, tools=TOOLS, system=SYSTEM, max_steps=steps)
    try:
        result = await agent.arun("Check the records of the open orders.", on_event=listen)
    finally:
        await client.aclose()
    assert result.stop_reason == "completed", result.stop_reason
    return bill


async def main(steps: int, priced_as: str, wire: str = "anthropic") -> dict[str, object]:
    bills = {}
    runs = (("implicit", False),) if wire == "gemini" else (("without", False), ("with", True))
    for label, breakpoints in runs:
        async with serve(Scripted(steps)) as base:  # a fresh server, so a fresh cache, for each run
            bills[label] = await one_run(wire, base, breakpoints, steps, priced_as)
    out: dict[str, object] = {"steps": steps, "wire": wire, "priced_as": priced_as}
    for label, bill in bills.items():
        u = bill.usage
        out[label] = {
            "input_tokens": u.input_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "all_input_tokens": _all_input(u),
            "output_tokens": u.output_tokens,
            "dollars": round(bill.dollars, 4),
        }
    if wire == "gemini":  # the saving is against the same tokens all billed as input
        bill = bills["implicit"]
        uncached = cost(priced_as, Usage(input_tokens=_all_input(bill.usage), output_tokens=bill.usage.output_tokens))
        out["saving"] = round(1 - bill.dollars / uncached, 3) if uncached else None
        return out
    without, with_ = bills["without"].dollars, bills["with"].dollars
    out["saving"] = round(1 - with_ / without, 3) if without else None
    return out


def _all_input(usage: Usage) -> int:
    return usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--wire", choices=sorted(PRICED_AS), default="anthropic")
    parser.add_argument("--model", help="the genai-prices model to price as (default: the wire's, see PRICED_AS)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.model = args.model or PRICED_AS[args.wire]
    report = asyncio.run(main(args.steps, args.model, args.wire))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"{args.steps}-step run on the {args.wire} wire priced as {args.model} (genai-prices), step by step")
        print(f"{'':10} {'input':>9} {'cache read':>11} {'cache write':>12} {'all input':>10} {'dollars':>9}")
        for label in ("implicit",) if args.wire == "gemini" else ("without", "with"):
            row = report[label]
            assert isinstance(row, dict)
            print(
                f"{label:10} {row['input_tokens']:>9,} {row['cache_read_tokens']:>11,} "
                f"{row['cache_write_tokens']:>12,} {row['all_input_tokens']:>10,} {row['dollars']:>9.4f}"
            )
        saved = "implicit caching, against no cache" if args.wire == "gemini" else "automatic breakpoints"
        print(f"saving with {saved}: {report['saving']:.1%}")
