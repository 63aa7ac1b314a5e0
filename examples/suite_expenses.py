"""An evaluation suite on the seed's weather and expenses tools.

    toolslip eval examples/suite_expenses.py --model reference -k 4      # the checks accept right answers
    toolslip eval examples/suite_expenses.py --model flaky:0.8 -k 8 --report report.html

Each task's ``reference`` is a correct trajectory: the ``reference`` model replays it, and ``flaky:P``
replays it with probability P (otherwise it fails in a typical way), so pass^k should come out near P**k.
With a real model, pass ``--model openai:gpt-4o-mini`` and the references are simply not used.
"""

from typing import Literal

from expenses import EXCHANGE, calc, fx
from weather import get_weather

from toolslip import Message, tool
from toolslip.evals import Outcome, Suite, Task, at_most_steps, called, never_called
from toolslip.testing import call, reply

SYSTEM = "You are a careful assistant. Use the tools for every temperature, exchange rate and sum; never guess."


class ExpenseReport:
    """A fresh expense report per trial: the check reads the final state, not just the answer."""

    def __init__(self) -> None:
        self.entries: list[tuple[str, float]] = []

        @tool(effects="side_effect")
        def add_expense(description: str, amount: float, currency: Literal["CNY", "USD", "EUR", "JPY"]) -> str:
            """Add one expense to the report; foreign amounts are converted to CNY at today's rate.

            Args:
                description: What it was for, e.g. taxi.
                amount: The amount in ``currency``.
                currency: ISO code of the currency paid in.
            """
            cny = round(amount * (1.0 if currency == "CNY" else EXCHANGE[currency]), 2)
            self.entries.append((description, cny))
            return f"added {description}: {cny} CNY (report total {sum(c for _, c in self.entries):.2f} CNY)"

        self.tools = [add_expense, fx, calc]


def check_beijing(o: Outcome) -> None:
    called(o, "get_weather", city="北京")
    assert "28" in o.text, f"the answer should give 28 °C: {o.text!r}"


def check_fahrenheit(o: Outcome) -> None:
    called(o, "get_weather", city="上海", unit="fahrenheit")
    assert "88" in o.text, f"31 °C is 88 °F: {o.text!r}"


def check_follow_up(o: Outcome) -> None:
    called(o, "get_weather", city="哈尔滨")
    never_called(o, "fx")
    assert "19" in o.text, f"Harbin is 19 °C: {o.text!r}"


def check_trip(o: Outcome) -> None:
    called(o, "fx", amount=320, currency="USD")
    called(o, "fx", amount=15000, currency="JPY")
    at_most_steps(o, 5)
    assert "3002.6" in o.text and "750.65" in o.text, f"expected total 3002.6 and 750.65 each: {o.text!r}"


def check_report(o: Outcome) -> None:
    assert o.env.entries == [("taxi", 287.2), ("hotel", 705.0)], f"report holds {o.env.entries}"


suite = Suite(
    name="expenses",
    system=SYSTEM,
    max_steps=6,
    tasks=[
        Task(
            id="weather-beijing",
            prompt="北京现在多少度？",
            tools=[get_weather],
            check=check_beijing,
            reference=[call("get_weather", city="北京"), reply("北京现在 28 °C，多云。")],
        ),
        Task(
            id="weather-fahrenheit",
            prompt="How hot is it in Shanghai, in fahrenheit?",
            tools=[get_weather],
            check=check_fahrenheit,
            reference=[call("get_weather", city="上海", unit="fahrenheit"), reply("Shanghai: 88 °F, cloudy.")],
        ),
        Task(
            id="weather-follow-up",
            prompt=[
                Message.user("What's the weather in Beijing?"),
                Message.assistant("Beijing is 28 °C and cloudy."),
                Message.user("And in Harbin?"),
            ],
            tools=[get_weather, fx],
            check=check_follow_up,
            reference=[call("get_weather", city="哈尔滨"), reply("Harbin is 19 °C and cloudy.")],
        ),
        Task(
            id="trip-total",
            prompt="I spent 320 USD and 15000 JPY on a trip. How much is that in CNY in total, "
            "and how much per person if 4 people split it?",
            tools=[fx, calc],
            check=check_trip,
            reference=[
                [call("fx", amount=320, currency="USD"), call("fx", amount=15000, currency="JPY")],
                call("calc", expr="(2297.6+705)/4"),
                reply("Total 3002.6 CNY, 750.65 CNY per person."),
            ],
        ),
        Task(
            id="file-report",
            prompt="Put my taxi (40 USD) and hotel (15000 JPY) on the expense report, in that order.",
            env=ExpenseReport,
            check=check_report,
            reference=[
                call("add_expense", description="taxi", amount=40, currency="USD"),
                call("add_expense", description="hotel", amount=15000, currency="JPY"),
                reply("Both are on the report: 992.2 CNY in total."),
            ],
        ),
    ],
)
