"""Budgets (``Limits``): each one stops a model that never stops calling tools, with its own named stop,
a transcript in which every call has a result, and exit code 4 on the command line; costs are
genai-prices' own figures."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from genai_prices import Usage as PriceUsage
from genai_prices import calc_price

from test_cli_run import toolslip
from toolslip import tool
from toolslip.agent.limits import Limits
from toolslip.agent.loop import Agent
from toolslip.agent.tools import Toolbox
from toolslip.core.errors import ConfigError
from toolslip.core.messages import Message, ModelResponse, Request, Usage
from toolslip.testing import FunctionModel, call

ROOT = Path(__file__).resolve().parents[1]
IN, OUT = 1000, 100  # what the looping model reports for every call

LOOPING_MODEL = f"""
from toolslip.core.messages import Message, ModelResponse, Usage
from toolslip.testing import FunctionModel, call


def _turn(request):
    return ModelResponse(
        message=Message.assistant(calls=[call("ping", n=len(request.messages))]),
        stop_reason="tool_use",
        usage=Usage(input_tokens={IN}, output_tokens={OUT}),
    )


MODEL = FunctionModel(_turn, name="openai:gpt-4o-mini")
"""
PING = '''
from toolslip import tool


@tool(effects="read_only")
def ping(n: int) -> str:
    """Answer pong."""
    return f"pong {n}"
'''


def listed_price(input_tokens: int, output_tokens: int) -> float:
    """gpt-4o-mini's price for this usage, asked of genai-prices directly."""
    usage = PriceUsage(input_tokens=input_tokens, output_tokens=output_tokens)
    return float(calc_price(usage, "gpt-4o-mini", provider_id="openai").total_price)


@tool(effects="read_only")
def ping(n: int) -> str:
    """Answer pong."""
    return f"pong {n}"


def _looping(request: Request) -> ModelResponse:
    return ModelResponse(
        message=Message.assistant(calls=[call("ping", n=len(request.messages))]),
        stop_reason="tool_use",
        usage=Usage(input_tokens=IN, output_tokens=OUT),
    )


def _agent() -> Agent:
    return Agent(model=FunctionModel(_looping, name="openai:gpt-4o-mini"), tools=Toolbox([ping]), max_steps=50)


@pytest.mark.parametrize(
    ("limits", "stop", "steps"),
    [
        (Limits(tool_calls=2), "max_tool_calls", 3),
        (Limits(input_tokens=2500), "max_input_tokens", 3),
        (Limits(output_tokens=150), "max_output_tokens", 2),
        (Limits(total_tokens=2500), "max_total_tokens", 3),
        (Limits(cost=listed_price(2 * IN, 2 * OUT) * 1.2), "max_cost", 3),
    ],
)
def test_each_limit_is_a_named_stop_with_every_call_answered(limits: Limits, stop: str, steps: int) -> None:
    result = _agent().run("go", limits=limits)
    assert result.stop_reason == stop and result.steps == steps
    assert result.tool_calls == steps - 1  # the last answer's call was not run
    last = result.messages[-1].tool_results
    assert len(last) == 1 and last[0].outcome == "not_executed" and "limit" in last[0].text
    assert result.cost == listed_price(steps * IN, steps * OUT)
    follow_up = _agent().run("go on", history=result, limits=Limits(tool_calls=0))
    assert follow_up.messages[: len(result.messages)] == result.messages  # the transcript continues as it was


def test_a_call_the_estimate_says_would_pass_the_limit_is_not_made() -> None:
    model = FunctionModel(_looping, name="openai:gpt-4o-mini")
    agent = Agent(model=model, tools=Toolbox([ping]), max_steps=50, limits=Limits(input_tokens=IN + 5))
    result = agent.run("go")
    # one call reported 1000 tokens; the next request holds more than 5 tokens, so it is never sent
    assert result.stop_reason == "max_input_tokens" and result.steps == 1 and result.tool_calls == 1
    assert result.messages[-1].role == "tool" and result.messages[-1].tool_results[0].outcome == "ran"


def test_a_cost_limit_on_a_model_without_a_price_is_refused_before_the_run() -> None:
    with pytest.raises(ConfigError, match="no price"):
        Agent(model=FunctionModel(_looping, name="function"), tools=Toolbox([ping]), limits=Limits(cost=1.0))
    with pytest.raises(ConfigError, match="at least 0"):
        Limits(tool_calls=-1)


def _toolslip(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``toolslip ARGS`` in a real process, with the tools and model files of ``cwd`` and its own journal."""
    files = [
        str(cwd / a) if a.endswith(".py") else a.replace("loop_model.py", str(cwd / "loop_model.py")) for a in args
    ]
    return toolslip(*files, home=cwd / "home")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "loop_model.py").write_text(LOOPING_MODEL)
    (tmp_path / "ping.py").write_text(PING)
    return tmp_path


@pytest.mark.parametrize(
    ("option", "stop"),
    [
        ("--max-tool-calls=2", "max_tool_calls"),
        ("--max-tokens-total=2500", "max_total_tokens"),
        ("--max-input-tokens=2500", "max_input_tokens"),
        ("--max-output-tokens=150", "max_output_tokens"),
        ("--max-cost=0.0005", "max_cost"),
    ],
)
def test_each_budget_stops_the_cli_with_exit_code_4(folder: Path, option: str, stop: str) -> None:
    done = _toolslip("run", "ping.py", "go", "--model", "loop_model.py:MODEL", "--max-steps", "20", option, cwd=folder)
    assert done.returncode == 4, done.stderr
    assert f"[stop: {stop} after " in done.stdout.splitlines()[-1]


def test_the_recorded_cost_is_genai_prices_figure_for_the_usage(folder: Path) -> None:
    done = _toolslip("run", "ping.py", "go", "--model", "loop_model.py:MODEL", "--max-tool-calls=2", cwd=folder)
    expected = listed_price(3 * IN, 3 * OUT)  # three model calls of 1000 in / 100 out
    run_id = done.stdout.rsplit("run ", 1)[1].rstrip("]\n")
    shown = _toolslip("show", run_id, "--json", cwd=folder)
    finish = [json.loads(line) for line in shown.stdout.splitlines()][-1]
    assert finish["kind"] == "finish" and finish["data"]["cost"] == expected
    assert finish["data"]["usage"]["input_tokens"] == 3 * IN
    listed = _toolslip("runs", cwd=folder).stdout
    assert f"{expected:.2g}" in listed and f"{expected:.2g}" in done.stdout  # $0.00063 in runs and the stop line


class _PricedDemo:
    """The offline expenses demo under a paid model's name: its usage is priced as gpt-4o-mini's."""

    name = "openai:gpt-4o-mini"

    def __init__(self) -> None:
        from toolslip.providers.scripted import ScriptedDemo

        self._demo = ScriptedDemo("expenses")

    async def complete(self, request: Request) -> ModelResponse:
        return await self._demo.complete(request)


def test_the_eval_records_and_reports_each_trials_cost(tmp_path: Path) -> None:
    from toolslip.core._display import dollars
    from toolslip.evals import evaluate, load_suite, summarize
    from toolslip.evals.report import html_report
    from toolslip.evals.summary import summary_table

    suite = load_suite(str(ROOT / "examples" / "suite_expenses.py"))
    records = asyncio.run(evaluate(suite, [_PricedDemo()], k=2))
    assert records and all(r.cost == listed_price(r.input_tokens, r.output_tokens) for r in records)
    total = sum(listed_price(r.input_tokens, r.output_tokens) for r in records)
    summaries = summarize(records)
    assert f"cost ${total:.4f}" in summary_table(summaries)
    assert f"cost {dollars(total)} at list prices" in html_report(summaries)
