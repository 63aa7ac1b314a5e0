"""Typed answers with tools beside them on the embedded model: which calls it makes, and what it answers.

Six questions over the examples' tools, each with an answer type (``output_type``): the seed's trip in
English and Chinese (``Expense``), a form filled from a note that needs no tool, two conversions and
Beijing's weather. The typed answer and the calls are grammar-constrained side by side (issue 36); this
shows whether the model calls the tools the question needs before it answers, and whether it calls one
it does not need. Prints one line per question: seconds, the calls, the answer; the right answers are in
``EXPECTED`` for the reader to compare (they are not graded: a right total reached without ``calc`` is
still right, a wrong call still a wrong call).

    PYTHONPATH=src python benchmarks/typed_with_tools.py [--model local]

These are our own questions. One run each (6 Dec 2026, 0.5B, greedy, one process, load 4-5), before
and after a typed answer that copies the question's figures is asked again with a call required (issue
36): the two conversions, the weather and the form gave the same calls and answers both times (the form
no call; it took 15.5 s after, 4.1 s before: the forced call, ``fx(320, "USD")``, is decoded and then
dropped). The English trip made no call before and invented ``total_cny=32000000.0``; after, it called
``fx(320, "USD")`` and ``calc("15000 * 4")`` and answered 60,000, as the Chinese trip did both times:
still wrong.

The 1.5B default, 7 Dec 2026 (greedy, one process, another job running), before and after a call on a
figure nothing gave is written again on every turn (``rewritten`` / ``dropped`` in the output name those
calls): the English trip went from ``calc("(320 + 15000) * 0.65")`` alone (a made-up rate; 9,958.0 total)
to ``fx(320, "USD")`` and ``calc("(320 + 15000) * 2297.6 / 4")`` (still wrong); 100 EUR kept its right
779.0 but no longer ran ``calc("(100*6.779)/100")`` on a made-up rate after ``fx`` (rewritten, then
dropped); the Chinese trip (``fx``, then ``calc("(2297.6 + 15000) / 4")``), the form (an unneeded
``calc("(12*3)")``, right fields), 200 USD and the weather were the same both times. Once an answer asked
again stands only if it makes no more figures up than the first, the Chinese trip's answer is the first one,
``{4324.4, 1081.1}`` (the total from ``calc``), instead of ``{1081.1, 270.275}``: both wrong. The 0.5B
model's six were the same in all three runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolslip import Agent, Toolbox
from toolslip.providers.local import local_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import expenses
import weather
from newcomer import Extras  # the same hook: each response's extra, where the figure check reports


class Purchase(BaseModel):
    item: str
    quantity: int
    unit_price_usd: float


class Converted(BaseModel):
    cny: float = Field(description="The amount in Chinese yuan.")


class Forecast(BaseModel):
    city: str
    temperature: float
    description: str


MONEY = [expenses.fx, expenses.calc]
CASES: list[tuple[str, type[BaseModel], list[Any], str]] = [
    (
        "trip-en",
        expenses.Expense,
        MONEY,
        "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY in total, and how much per person if "
        "4 people split it?",
    ),
    (
        "trip-zh",
        expenses.Expense,
        MONEY,
        "我出差花了 320 美元和 15000 日元，折人民币一共多少？再帮我算一下平摊到 4 个人是多少。",
    ),
    ("form-en", Purchase, MONEY, "Fill in the form from this note: I bought 3 books at 12 USD each."),
    ("eur-en", Converted, MONEY, "Convert 100 EUR to CNY."),
    ("usd-zh", Converted, MONEY, "200 美元是多少人民币？"),
    ("weather-en", Forecast, [weather.get_weather], "What's the weather in Beijing?"),
]
EXPECTED = {
    "trip-en": "fx twice, calc; total 3002.6, 750.65 each",
    "trip-zh": "fx twice, calc; total 3002.6, 750.65 each",
    "form-en": "no call; books, 3, 12.0",
    "eur-en": "fx(100, EUR); 779.0",
    "usd-zh": "fx(200, USD); 1436.0",
    "weather-en": "get_weather(Beijing); 28, cloudy",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    model = local_model(args.model)
    for name, answer_type, tools, question in CASES:
        started = time.perf_counter()
        extras = Extras()
        result = Agent(model=model, tools=Toolbox(tools), output_type=answer_type, hooks=[extras]).run(question)
        calls = ", ".join(f"{c.name}({c.arguments})" for m in result.messages for c in m.tool_calls) or "no call"
        seconds = time.perf_counter() - started
        # the calls on made-up figures the model was asked to write again, and those dropped
        rewritten = [f"{c['name']}({c['arguments']})" for e in extras.seen for c in e.get("rewritten_calls", ())]
        dropped = [f"{c['name']}({c['arguments']})" for e in extras.seen for c in e.get("dropped_calls", ())]
        print(
            f"{name}: {seconds:.1f} s; {calls}; {result.data!r}; expected {EXPECTED[name]}; "
            f"rewritten {rewritten or 'none'}; dropped {dropped or 'none'}",
            flush=True,
        )


if __name__ == "__main__":
    main()
