"""A 200-step run of the embedded model with large tool outputs, once with each built-in history processor.

issue 38's Done-when: the embedded model (``local``, Qwen2.5-Coder-0.5B, an 8,192-token window) reads a
ledger report one page per step for ``--steps`` steps, each page a tool output of ``--page-chars``
characters (2,000 by default, about 500 of the model's tokens: 200 pages are some 100,000 tokens, twelve
windows' worth), behind the output cap ``toolslip run`` sets for the local model (8,192 characters). The
only thing that keeps the run inside the window is the history processor under test:

- ``keep_last_turns``: ``keep_last_turns(1)``;
- ``clear_tool_results``: ``clear_tool_results(keep_last=1)``;
- ``trim_to_tokens``: ``trim_to_tokens(3000)``;
- ``summarize``: ``Summarize(<the same embedded model>, max_tokens=3000, keep_last=2)``, summaries of at
  most 100 tokens.

(``provider_context_management`` is the fifth built-in, but it is request settings for Anthropic and the
Responses API, not a processor: the embedded model has no such field.) The settings are small because
every step costs prompt evaluation on the CPU: a processor that moves its cut each step (keeping the last
turns, trimming) makes llama.cpp evaluate everything after the cut again.

The model is the real one: nothing is scripted. What makes it go on for 200 steps is the loop's own means:
a hook asks for ``tool_choice="required"`` on every step but the last, which asks for ``"none"`` (an
answer), and the tool hands out the page asked for and names the next one. Generation is kept short
(``max_tokens`` 48 per step). At every step the request the processor produced is checked with ``toolslip
check``'s own check in every wire format (the run stops at the first problem), and its prompt is counted
with the model's own tokenizer and chat template before the provider's last-resort cut
(:mod:`toolslip.providers.local_window`), so "largest request" and "over window" are what the processor
alone made. The last request is also given to the real ``toolslip check`` command.

It is CPU-heavy: run it under ``nice -n 10``, one processor at a time (the default runs them in turn)::

    nice -n 10 python benchmarks/long_run.py [--steps 200] [--processor keep_last_turns ...] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toolslip import Agent, Toolbox, tool
from toolslip.agent.history import HistoryProcessor, Summarize, clear_tool_results, keep_last_turns, trim_to_tokens
from toolslip.agent.hooks import Hook, RunContext
from toolslip.agent.output_cap import OutputCap
from toolslip.core.errors import FormatError, ProviderError
from toolslip.core.messages import Request, Settings
from toolslip.formats import get_format
from toolslip.formats.checker import check
from toolslip.providers.local import LocalModel, local_model

QUESTION = (
    "Read the whole ledger report, page by page, starting at page 1, with read_page. When there are no pages "
    "left, say in one sentence which account had the largest amount you saw."
)
FORMATS = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock", "ollama")
"""Every wire ``toolslip check`` knows a request of: a processed transcript must pass in each."""

PROCESSORS: dict[str, Callable[[LocalModel], list[HistoryProcessor]]] = {
    "keep_last_turns": lambda model: [keep_last_turns(1)],
    "clear_tool_results": lambda model: [clear_tool_results(keep_last=1)],
    "trim_to_tokens": lambda model: [trim_to_tokens(3000)],
    "summarize": lambda model: [
        Summarize(model, max_tokens=3000, keep_last=2, max_input_chars=4000, result_chars=200, max_summary_tokens=100)
    ],
}


SITES = ("north warehouse", "harbour depot", "city store", "east plant", "online shop", "head office")
COSTS = ("freight", "rent", "salaries", "packaging", "energy", "insurance", "repairs", "licences")


def page_text(page: int, chars: int) -> str:
    """Page ``page`` of the report: ledger entries in words, one account and amount each, ``chars`` characters."""
    lines: list[str] = []
    line = 0
    while sum(len(x) + 1 for x in lines) < chars:
        line += 1
        seed = page * 7919 + line * 104729
        site, cost = SITES[seed % len(SITES)], COSTS[seed // 7 % len(COSTS)]
        lines.append(
            f"Entry {line}: the {site} booked {cost} costs of {seed % 9000 + 1000} euros to account "
            f"A{seed % 97}, approved by the regional controller after the monthly review."
        )
    return "\n".join(lines)[:chars]


def read_page_tool(chars: int, last: int) -> object:
    @tool(effects="read_only")
    def read_page(page: int) -> str:
        """Read one page of the ledger report (pages start at 1)."""
        if page < 1 or page > last:
            return f"There is no page {page}; the report has pages 1 to {last}."
        after = f"Next: read_page(page={page + 1})." if page < last else "This was the last page."
        return f"{page_text(page, chars)}\n{after}"

    return read_page


@dataclass
class Watch(Hook):
    """Steers the run to ``steps`` steps and checks and measures every request the processors produced."""

    model: LocalModel
    steps: int
    started: float = field(default_factory=time.perf_counter)
    largest: int = 0
    """The most prompt tokens of a processed request, as the model's template and tokenizer count it."""
    checked: int = 0
    over: int = 0
    """Requests whose prompt (with room for the answer) did not fit the window before the provider's own cut."""
    pages: set[int] = field(default_factory=set)
    every: int = 20
    """Print progress every this many steps."""

    async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
        last = ctx.step >= self.steps
        settings = dataclasses.replace(
            request.settings, tool_choice="none" if last else "required", max_tokens=64 if last else 48
        )
        request = dataclasses.replace(request, settings=settings)
        for fmt in FORMATS:  # what `toolslip check` runs, in every format
            report = check(get_format(fmt).request_to_wire(dataclasses.replace(request, model="local")), fmt)
            if report.problems:
                problem = (
                    f"step {ctx.step}: the processed transcript fails toolslip check as {fmt}: {report.problems[0]}"
                )
                raise FormatError(problem)
        self.checked += 1
        tokens = await asyncio.to_thread(self._tokens, request)
        self.largest = max(self.largest, tokens)
        self.over += tokens + 64 > self.model.n_ctx
        for message in request.messages:
            for call in message.tool_calls:
                if isinstance((call.arguments or {}).get("page"), int):
                    self.pages.add(int((call.arguments or {})["page"]))
        if ctx.step % self.every == 0:
            seconds = time.perf_counter() - self.started
            print(f"  step {ctx.step}: {seconds:.0f} s, largest {self.largest} tokens", file=sys.stderr, flush=True)
        return request

    def _tokens(self, request: Request) -> int:
        loaded = self.model.load()
        tools = request.tools if request.settings.tool_choice != "none" else ()
        prompt = loaded.template.render(list(request.messages), tools)
        with loaded.lock:
            return len(loaded.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))


def cli_check(request: Request) -> str:
    """The last request, written as a Chat Completions body and given to the real ``toolslip check``."""
    body = get_format("openai-chat").request_to_wire(dataclasses.replace(request, model="local"))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump(body, out)
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "check", out.name], capture_output=True, text=True, check=False
    )
    Path(out.name).unlink()
    return "passed" if done.returncode == 0 else f"failed: {done.stderr.strip()[:200]}"


def run_one(name: str, steps: int, page_chars: int, model: LocalModel, every: int = 20) -> dict[str, object]:
    watch = Watch(model, steps, every=every)
    seen: list[Request] = []

    class Last(Hook):  # the last request sent, for the CLI check at the end
        async def prepare_request(self, ctx: RunContext, request: Request) -> Request:
            seen[:] = [request]
            return request

    agent: Agent[None] = Agent(
        model=model,
        tools=Toolbox([read_page_tool(page_chars, steps)]),  # type: ignore[list-item]
        max_steps=steps,
        settings=Settings(max_tokens=48),
        history_processors=PROCESSORS[name](model),
        hooks=[watch, Last(), OutputCap(model.n_ctx, why="; the local model reads 8192 characters of a result")],
        stream=False,
    )
    started = time.perf_counter()
    try:
        result = agent.run(QUESTION)
        error = ""
    except (ProviderError, FormatError) as exc:  # the window, or a transcript toolslip check refuses
        result, error = None, str(exc)[:300]
    seconds = time.perf_counter() - started
    row: dict[str, object] = {
        "processor": name,
        "steps": result.steps if result is not None else watch.checked,
        "stop_reason": result.stop_reason if result is not None else "error",
        "error": error,
        "seconds": round(seconds, 1),
        "seconds_per_step": round(seconds / max(1, watch.checked), 2),
        "largest_request_tokens": watch.largest,
        "requests_over_window": watch.over,
        "requests_checked": watch.checked,
        "distinct_pages_called": len(watch.pages),
        "input_tokens": result.usage.input_tokens if result is not None else None,
        "output_tokens": result.usage.output_tokens if result is not None else None,
        "tool_calls": result.tool_calls if result is not None else None,
        "answer": (result.output[:200] if result is not None else ""),
        "cli_check_of_last_request": cli_check(seen[0]) if seen else "no request",
    }
    return row


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--page-chars", type=int, default=2_000)
    parser.add_argument("--processor", action="append", choices=sorted(PROCESSORS), help="default: all, in turn")
    parser.add_argument("--model", default="local")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--every", type=int, default=20, help="print progress every this many steps")
    args = parser.parse_args(argv)
    model = local_model(args.model, n_threads=args.threads)
    assert isinstance(model, LocalModel)
    rows = []
    for name in args.processor or list(PROCESSORS):
        print(f"{name}: {args.steps} steps ...", file=sys.stderr)
        row = run_one(name, args.steps, args.page_chars, model, args.every)
        rows.append(row)
        print(json.dumps(row) if args.json else _line(row), flush=True)


def _line(row: dict[str, object]) -> str:
    return (
        f"{row['processor']:<20} steps {row['steps']:>4}  {row['stop_reason']:<10} {row['seconds']:>8} s "
        f"({row['seconds_per_step']} s/step)  largest request {row['largest_request_tokens']} tokens  "
        f"over window {row['requests_over_window']}  checked {row['requests_checked']}  "
        f"pages {row['distinct_pages_called']}  cli check {row['cli_check_of_last_request']}"
        + (f"  error: {row['error']}" if row["error"] else "")
    )


if __name__ == "__main__":
    main()
