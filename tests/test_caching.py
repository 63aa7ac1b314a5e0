"""Prompt caching: breakpoints where the wires allow them, serve counting cache reads as the service does,
and a warning when a step's prefix changed."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolslip import Agent, Message, Request, Toolbox, ToolCall, ToolResult, tool
from toolslip.agent.history import clear_tool_results
from toolslip.core.events import CacheBusted, Event, ModelResponded
from toolslip.core.messages import Usage
from toolslip.formats import get_format
from toolslip.formats.caching import MAX_BREAKPOINTS, cache_key, prefix_change, with_breakpoints
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel
from toolslip.server.cache import PromptCache

ROOT = Path(__file__).resolve().parents[1]
LONG = "Follow the shop's rules to the letter. " * 400  # ~3,200 tokens: above every service's minimum


def marks(body: dict[str, Any]) -> list[str]:
    """Where the body's cache_control marks are: tools[i], system[i], messages[i].content[j]."""
    found = [f"tools[{i}]" for i, t in enumerate(body.get("tools", ())) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system[{i}]" for i, b in enumerate(system) if "cache_control" in b]
    for i, m in enumerate(body["messages"]):
        if isinstance(m["content"], list):
            found += [f"messages[{i}].content[{j}]" for j, b in enumerate(m["content"]) if "cache_control" in b]
    return found


@tool(effects="read_only")
def lookup(id: int) -> str:
    """Look a record up."""
    return f"record {id}: " + "field " * 300


def transcript(steps: int) -> Request:
    messages = [Message.system(LONG), Message.user("check the records")]
    for i in range(steps):
        made = ToolCall(id=f"c{i}", name="lookup", arguments={"id": i})
        messages += [Message.assistant(calls=[made]), Message.tool([ToolResult(call_id=made.id, content="x" * 400)])]
    return Request(model="m", messages=tuple(messages), tools=Toolbox([lookup]).specs())


def test_anthropic_gets_four_breakpoints_best_first_and_the_memoised_body_is_untouched() -> None:
    body = get_format("anthropic").request_to_wire(transcript(3))
    before = copy.deepcopy(body)
    marked = with_breakpoints("anthropic", body)
    assert body == before  # copied where marked: the formats' memos share these dicts between requests
    last = len(marked["messages"]) - 1
    assert marks(marked) == [
        "tools[0]",
        "system[0]",
        f"messages[{last - 2}].content[0]",
        f"messages[{last}].content[0]",
    ]
    assert len(marks(marked)) == MAX_BREAKPOINTS


def test_breakpoints_the_caller_set_count_against_the_limit() -> None:
    body = get_format("anthropic").request_to_wire(transcript(3))
    body["messages"][0]["content"] = [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "c", "cache_control": {"type": "ephemeral"}},
    ]
    marked = with_breakpoints("anthropic", body)
    assert len(marks(marked)) == MAX_BREAKPOINTS  # one added: the end of the last message
    assert marks(marked)[-1] == f"messages[{len(marked['messages']) - 1}].content[0]"


def test_thinking_and_empty_text_never_carry_a_mark() -> None:
    body = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "thinking", "thinking": "t"}]},
        ]
    }
    marked = with_breakpoints("anthropic", body)
    assert marked["messages"][1]["content"] == [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}},
        {"type": "thinking", "thinking": "t"},
    ]
    assert with_breakpoints("anthropic", {"messages": [{"role": "user", "content": ""}]})["messages"] == [
        {"role": "user", "content": ""}
    ]


def test_bedrock_gets_cache_points_after_what_is_cached() -> None:
    body = get_format("bedrock").request_to_wire(transcript(2))
    marked = with_breakpoints("bedrock", body)
    point = {"cachePoint": {"type": "default"}}
    assert marked["system"][-1] == point and marked["toolConfig"]["tools"][-1] == point
    assert marked["messages"][-1]["content"][-1] == point
    assert sum(b == point for m in marked["messages"] for b in m["content"]) == 2
    assert point not in body["system"]


def test_openai_gets_one_stable_prompt_cache_key_per_system_and_tools() -> None:
    model = OpenAIChatModel("gpt-4o-mini", api_key="k")  # the official service: caching is on by itself
    first, later = transcript(1), transcript(4)
    assert model._body(first)["prompt_cache_key"] == model._body(later)["prompt_cache_key"] == cache_key(first)
    other = first.with_messages([Message.system("another prompt"), *first.messages[1:]])
    assert cache_key(other) != cache_key(first)
    assert "prompt_cache_key" not in OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")._body(first)


def test_prefix_change_names_what_changed() -> None:
    one = transcript(2)
    assert prefix_change(one, transcript(3)) is None
    changed = one.with_messages([one.messages[0], Message.user("another question"), *one.messages[2:]])
    assert prefix_change(one, changed) == "message 1 (user) changed"
    assert prefix_change(one, Request(model="m", messages=one.messages)) == "the tools offered changed"


def test_the_cache_reads_what_a_marked_prefix_wrote_and_nothing_under_1024_tokens() -> None:
    cache = PromptCache()
    body = with_breakpoints("anthropic", get_format("anthropic").request_to_wire(transcript(2)))
    first = cache.account("anthropic", body, Usage(input_tokens=5000))
    assert first.cache_read_tokens == 0 and first.cache_write_tokens > 4000
    longer = with_breakpoints("anthropic", get_format("anthropic").request_to_wire(transcript(3)))
    second = cache.account("anthropic", longer, Usage(input_tokens=5500))
    assert second.cache_read_tokens >= first.cache_write_tokens * 0.8
    assert second.input_tokens + second.cache_read_tokens + second.cache_write_tokens == 5500
    unmarked = get_format("anthropic").request_to_wire(transcript(3))
    assert PromptCache().account("anthropic", unmarked, Usage(input_tokens=5500)) == Usage(input_tokens=5500)
    short = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {}}]}]}
    cache.account("anthropic", short, Usage(input_tokens=3))
    assert cache.account("anthropic", short, Usage(input_tokens=3)) == Usage(input_tokens=3)


def test_serve_scripted_counts_cache_reads_and_a_changed_prefix_is_warned() -> None:
    """The real command on a free port; the Anthropic client marks breakpoints (cache=True)."""
    command = [sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted", "--port", "0", "--quiet"]
    child = subprocess.Popen(
        command, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        base = next(line for line in child.stdout if line.startswith("toolslip serve: ")).split(" at ", 1)[1].split()[0]
        usages, busted = asyncio.run(_run_against(base))
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()
    assert usages[0].cache_read_tokens == 0 and usages[0].cache_write_tokens > 0
    assert all(u.cache_read_tokens > 0 for u in usages[1:3])  # each step reads what the one before wrote
    # clearing old results changes message 3 at step 4: the service cannot read past it, and the run is told
    assert [(b.step, b.reason) for b in busted] == [(4, "message 3 (tool) changed")]


@tool(effects="read_only")
def fx(amount: float, currency: str) -> str:
    """Convert an amount to CNY."""
    return f"{amount:g} {currency} = {amount * 7:.2f} CNY" + " (at the ledger's rate of the day)" * 5


@tool(effects="read_only")
def calc(expr: str) -> str:
    """Evaluate a sum."""
    left, right = expr.split("+")
    return f"{float(left) + float(right):.2f}"


async def _run_against(base: str) -> tuple[list[Usage], list[CacheBusted]]:
    """The scripted demo's expenses run (fx, fx, calc...), with old results cleared once there are three."""
    model = AnthropicModel("claude-test", base_url=base, api_key="k", cache=True)
    events: list[Event] = []
    agent: Agent[None] = Agent(
        model=model,
        tools=Toolbox([fx, calc]),
        system=LONG,
        history_processors=[clear_tool_results(keep_last=2, min_chars=100)],
    )
    try:
        await agent.arun("320 USD and 15000 JPY in CNY?", on_event=events.append)
    finally:
        await model.aclose()
    usages = [e.response.usage for e in events if isinstance(e, ModelResponded)]
    return usages, [e for e in events if isinstance(e, CacheBusted)]


def test_cache_tokens_are_in_the_stop_line_the_budgets_and_the_eval_summary() -> None:
    from toolslip.agent.limits import Budget, Limits
    from toolslip.cli.outcome import cached
    from toolslip.evals.summary import summarize, summary_table
    from toolslip.evals.trial import TrialRecord

    used = Usage(input_tokens=100, cache_read_tokens=9000, cache_write_tokens=900)
    assert cached(used) == ", 9,000 input tokens read from the prompt cache, 900 written"
    assert cached(Usage(input_tokens=5)) == ""
    assert Budget(Limits(input_tokens=5000), "scripted").after_answer(used) == "max_input_tokens"
    record = TrialRecord(
        suite="s", model="m", task="t", trial=0, reason="pass", cache_read_tokens=9000, cache_write_tokens=900
    )
    assert "(cache: 9000 read, 900 written)" in summary_table(summarize([record]))


def test_a_busted_cache_is_rendered_by_the_cli() -> None:
    import io

    from toolslip.cli.render import Renderer

    out = io.StringIO()
    Renderer(out)(CacheBusted(step=4, model="anthropic:claude-x", reason="message 3 (tool) changed"))
    assert out.getvalue() == (
        "[step 4] warning: message 3 (tool) changed, so anthropic:claude-x cannot read its prompt cache\n"
    )
