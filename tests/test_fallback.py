"""FallbackModel: a step that one model cannot answer goes to the next, across wires, and says so.

The chain's behaviour is tested on scripted models that fail as providers do; the outage is tested with
real parts: two ``toolslip serve --model scripted`` processes on different wires (OpenAI Chat and
Anthropic Messages), both answering a share of requests as overloaded (``--faults``: 503 and 529), one of
them killed in the middle of the runs. The journal must name the model that answered each step and the
events must show each switch.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolslip import Agent, FallbackModel, Journal, Message, ProviderError, Request, Toolbox, tool
from toolslip.core.errors import InvalidValue
from toolslip.core.events import Event, ModelSwitched
from toolslip.core.messages import Reasoning, ToolCall
from toolslip.providers import check_model_string, resolve_model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.openai import OpenAIChatModel
from toolslip.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[1]


def failing(status: int, message: str = "Overloaded", name: str = "down") -> FunctionModel:
    def fail(request: Request) -> str:
        raise ProviderError(message, status=status)

    return FunctionModel(fail, name=name)


def answering(name: str, seen: list[str]) -> FunctionModel:
    def answer(request: Request) -> str:
        seen.append(name)
        return f"answered by {name}"

    return FunctionModel(answer, name=name)


def test_an_overloaded_model_hands_the_step_to_the_next_and_cools_down() -> None:
    seen: list[str] = []
    asked_a: list[int] = []

    def overloaded(request: Request) -> str:
        asked_a.append(1)
        raise ProviderError("Overloaded", status=529)

    chain = FallbackModel([FunctionModel(overloaded, name="a"), answering("b", seen)], cooldown=60)
    events: list[Event] = []
    agent: Agent[None] = Agent(model=chain)
    first = asyncio.run(agent.arun("hi", on_event=events.append))
    second = asyncio.run(agent.arun("again"))
    assert first.output == second.output == "answered by b"
    assert len(asked_a) == 1  # cooling down: the second run started with b
    (switched,) = [e for e in events if isinstance(e, ModelSwitched)]
    assert switched.model == "b" and switched.failed == ("a: 529 Overloaded",)
    assert first.messages[-1] is not None


def test_a_request_too_long_for_the_window_moves_on_without_a_cooldown() -> None:
    seen: list[str] = []
    asked: list[int] = []

    def small(request: Request) -> str:
        asked.append(1)
        raise ProviderError("prompt is too long: 210000 tokens > 200000 maximum", status=400)

    chain = FallbackModel([FunctionModel(small, name="small"), answering("large", seen)])
    agent: Agent[None] = Agent(model=chain)
    asyncio.run(agent.arun("one"))
    asyncio.run(agent.arun("two"))
    assert len(asked) == 2 and seen == ["large", "large"]


def test_an_error_the_caller_must_fix_is_raised_at_once() -> None:
    seen: list[str] = []
    chain = FallbackModel([failing(401, "invalid x-api-key"), answering("b", seen)])
    with pytest.raises(ProviderError, match="invalid x-api-key"):
        Agent(model=chain).run("hi")
    assert seen == []


def test_when_every_model_fails_one_error_names_each() -> None:
    chain = FallbackModel([failing(503, "busy", "a"), failing(429, "slow down", "b")], rounds=2, pause=0)
    with pytest.raises(ProviderError, match=r"every model of a,b failed \(2 rounds\): a: 503 busy; b: 429 slow down"):
        Agent(model=chain).run("hi")


def test_the_router_picks_the_model_per_request_and_the_rest_stay_behind_it() -> None:
    seen: list[str] = []
    cheap, strong = answering("cheap", seen), answering("strong", seen)

    def route(request: Request, models: object) -> FunctionModel | None:
        return strong if len(request.messages[-1].text) > 20 else None

    chain = FallbackModel([cheap, strong], route=route)
    agent: Agent[None] = Agent(model=chain)
    agent.run("short")
    agent.run("a much longer question that needs the strong model")
    assert seen == ["cheap", "strong"]


def test_a_model_string_with_commas_is_a_chain_and_resumes_as_one() -> None:
    chain = resolve_model("scripted:expenses, scripted:weather")
    assert isinstance(chain, FallbackModel)
    assert [m.name for m in chain.models] == ["scripted:expenses", "scripted:weather"]
    assert chain.name == "scripted:expenses, scripted:weather"  # what the journal's meta records and resume reads
    with pytest.raises(InvalidValue, match="empty place"):
        check_model_string("scripted,,scripted")
    with pytest.raises(InvalidValue, match="unknown model provider"):
        check_model_string("scripted,nosuch:model")


# --- real parts: two servers on two wires, one killed, both overloaded at random --------------------------


@tool(effects="read_only")
def fx(amount: float, currency: str) -> str:
    """Convert an amount to CNY."""
    rate = {"USD": 7.0, "JPY": 0.05}[currency]
    return f"{amount:g} {currency} = {amount * rate:.2f} CNY"


@tool(effects="read_only")
def calc(expr: str) -> str:
    """Evaluate an arithmetic expression."""
    left, op, right = re.fullmatch(r"\s*([\d.]+)\s*([+/])\s*([\d.]+)\s*", expr).groups()  # type: ignore[union-attr]
    return f"{float(left) + float(right) if op == '+' else float(left) / float(right):.2f}"


def start_server(*extra: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted", "--port", "0", "--quiet", *extra]
    child = subprocess.Popen(
        command,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert child.stdout is not None
    for line in child.stdout:
        if line.startswith("toolslip serve: "):
            return child, line.split(" at ", 1)[1].split()[0]
    child.kill()
    child.wait(10)
    child.stdout.close()
    pytest.fail("toolslip serve did not start")


def stop_servers(*children: subprocess.Popen[str]) -> None:
    for child in children:
        child.kill()
        child.wait(10)
        assert child.stdout is not None
        child.stdout.close()


@pytest.fixture
def servers() -> Iterator[tuple[subprocess.Popen[str], str, str]]:
    chat, chat_url = start_server("--faults", "0.3")
    messages, messages_url = start_server("--faults", "0.3")
    try:
        yield chat, chat_url, messages_url
    finally:
        stop_servers(chat, messages)


def test_runs_outlive_a_killed_server_and_an_overloaded_one(
    servers: tuple[subprocess.Popen[str], str, str], tmp_path: Path
) -> None:
    chat, chat_url, messages_url = servers
    first = OpenAIChatModel("gpt-test", base_url=f"{chat_url}/v1", api_key="k", max_retries=0, name="chat")
    second = AnthropicModel("claude-test", base_url=messages_url, api_key="k", max_retries=0, name="messages")
    chain = FallbackModel([first, second], cooldown=0.3, rounds=12, pause=0.02)
    journal = Journal(tmp_path / "runs.sqlite")
    agent: Agent[None] = Agent(model=chain, tools=Toolbox([fx, calc]), hooks=journal.wrap(), max_steps=8)
    events: list[Event] = []
    answered = 0

    def listen(event: Event) -> None:
        nonlocal answered
        events.append(event)
        if type(event).__name__ == "ModelResponded":
            answered += 1
            if answered == 20:
                chat.kill()  # mid-run: other runs are waiting on it right now

    async def main() -> list[object]:
        try:
            return list(
                await asyncio.gather(
                    *(agent.arun("320 USD and 15000 JPY in CNY, split 4 ways?", on_event=listen) for _ in range(12))
                )
            )
        finally:
            await chain.aclose()

    results = asyncio.run(main())
    assert chat.poll() is not None  # it was killed during the runs
    for result in results:
        assert result.stop_reason == "completed", result  # type: ignore[attr-defined]
        assert "2990.00 CNY in total" in result.output and "747.50 CNY each" in result.output  # type: ignore[attr-defined]

    by_step = {}
    for run in journal.store.runs():
        for entry in journal.store.entries(run.run_id):
            if entry.kind == "model":
                by_step[(run.run_id, entry.step)] = entry.data["response"]["extra"]["answered_by"]
    assert len(by_step) == 12 * 5 and set(by_step.values()) == {"chat", "messages"}
    switches = [e for e in events if isinstance(e, ModelSwitched)]
    reasons = " ".join(f for e in switches for f in e.failed)
    assert "chat: 503" in reasons and "messages: 529" in reasons  # both overloads were met
    assert re.search(r"chat: (?:cannot|could not|connection)", reasons, re.IGNORECASE), reasons  # and the dead one
    assert all(e.dropped == () for e in switches)  # plain text and calls: nothing either wire cannot carry


def test_the_error_a_served_fault_gives_is_the_services_own() -> None:
    async def main() -> list[ProviderError]:
        from toolslip.server import serve

        errors = []
        async with serve(FunctionModel(lambda r: "hi"), faults=1.0) as base:
            for model in (
                AnthropicModel("c", base_url=base, api_key="k", max_retries=0),
                OpenAIChatModel("g", base_url=f"{base}/v1", api_key="k", max_retries=0),
            ):
                with pytest.raises(ProviderError) as caught:
                    await model.complete(Request(model="", messages=(Message.user("hi"),)))
                errors.append(caught.value)
                await model.aclose()
        return errors

    anthropic, openai = asyncio.run(main())
    assert anthropic.status == 529 and "overloaded_error" in anthropic.body
    assert openai.status == 503 and "server_error" in openai.body


def test_model_switched_is_rendered_by_the_cli() -> None:
    import io

    from toolslip.cli.render import Renderer

    out = io.StringIO()
    Renderer(out)(ModelSwitched(step=3, model="b", failed=("a: 529 Overloaded",), dropped=("x: y (dropped)",)))
    assert (
        out.getvalue() == "[step 3] answered by b after a: 529 Overloaded\n[step 3]   not sent to b: x: y (dropped)\n"
    )


# --- a thinking transcript carried from Anthropic to Gemini to OpenAI -------------------------------------


def thinker(wire: str, answers_step: int) -> FunctionModel:
    """The model behind one wire: it thinks (signed as its provider signs) and calls a tool at its step,
    and is overloaded at every later step, so the next step must go to the next wire."""

    def answer(request: Request) -> Message | str:
        step = sum(1 for m in request.messages if m.role == "assistant") + 1
        if step > answers_step:
            raise ProviderError("Overloaded", status=529)
        if step == 3:
            return "2990.00 CNY in total"
        thought = Reasoning(text=f"step {step}: convert first", signature=f"sig-{wire}-{step}", source=wire)
        call = ToolCall(id=f"call_{step}", name="fx", arguments={"amount": 320, "currency": "USD"})
        return Message(role="assistant", parts=(thought, call))

    return FunctionModel(answer, name=wire)


def test_a_thinking_transcript_moves_from_anthropic_to_gemini_to_openai() -> None:
    from toolslip.providers.gemini import GeminiModel
    from toolslip.providers.openai import OpenAIResponsesModel
    from toolslip.server import serve

    async def main() -> tuple[object, list[Event]]:
        events: list[Event] = []
        async with (
            serve(thinker("anthropic", 1)) as one,
            serve(thinker("gemini", 2)) as two,
            serve(thinker("openai-responses", 3)) as three,
        ):
            chain = FallbackModel(
                [
                    AnthropicModel("claude-test", base_url=one, api_key="k", max_retries=0, name="anthropic"),
                    GeminiModel("gemini-test", base_url=two, api_key="k", max_retries=0, name="gemini"),
                    OpenAIResponsesModel("gpt-test", base_url=f"{three}/v1", api_key="k", max_retries=0, name="openai"),
                ],
                rounds=1,
            )
            agent: Agent[None] = Agent(model=chain, tools=Toolbox([fx]))
            try:
                return await agent.arun("320 USD in CNY?", on_event=events.append), events
            finally:
                await chain.aclose()

    result, events = asyncio.run(main())
    assert result.output == "2990.00 CNY in total"  # type: ignore[attr-defined]
    second, third = [e for e in events if isinstance(e, ModelSwitched)]
    assert (second.step, second.model, third.step, third.model) == (2, "gemini", 3, "openai")
    assert second.failed[0].startswith("anthropic: 529")
    assert [f.split(":")[0] for f in third.failed] == ["gemini"]  # anthropic is cooling down: not asked again
    # what each wire cannot take is another provider's signature, and only that: the reasoning text goes on
    assert second.dropped and all("signature" in d for d in second.dropped), second.dropped
    assert third.dropped and all("signature" in d for d in third.dropped), third.dropped
    assert {d.split(":")[0] for d in third.dropped} == {
        "messages[1].parts[0].signature",
        "messages[3].parts[0].signature",
    }


def test_a_chain_is_priced_at_its_dearest_model() -> None:
    from toolslip.agent.pricing import cost
    from toolslip.core.messages import Usage

    used = Usage(input_tokens=10_000, output_tokens=1_000)
    sonnet, haiku = cost("anthropic:claude-sonnet-4-5", used), cost("anthropic:claude-haiku-4-5", used)
    assert sonnet is not None and haiku is not None and sonnet > haiku
    assert cost("anthropic:claude-haiku-4-5,anthropic:claude-sonnet-4-5", used) == sonnet
    assert cost("anthropic:claude-haiku-4-5,openai:my-model@http://127.0.0.1:9/v1", used) is None
