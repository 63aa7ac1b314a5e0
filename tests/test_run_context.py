"""The run context (issue 38, item 1): per-run dependencies reach tools, hooks and output validators.

The web-service test is the issue's own: one agent serving fifty users at once, each tool reading its user
from the run's deps, and no run ever sees another user's data, on every kind of tool (async, a thread, a
child process).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pydantic
import pytest

import toolslip
from toolslip import Agent, Context, Hook, RunContext, Toolbox, tool
from toolslip.approval import Approval, resume_paused
from toolslip.errors import ToolDefinitionError
from toolslip.journal import Journal
from toolslip.messages import Request, ToolCall
from toolslip.testing import FunctionModel, Turn, call, last_results, reply


@dataclasses.dataclass(frozen=True)
class Shop:
    """A web request's dependencies: who is asking, and the store every user shares."""

    user: str
    orders: Mapping[str, list[str]]


ORDERS = {f"user{i}": [f"order-{i}-{n}" for n in range(3)] for i in range(50)}


@tool(effects="read_only")
async def my_orders(ctx: RunContext[Shop], status: str) -> str:
    """The asking user's orders with this status."""
    await asyncio.sleep(random.random() / 100)  # let the fifty runs interleave
    return f"{ctx.deps.user} {status}: {', '.join(ctx.deps.orders[ctx.deps.user])}"


@tool(effects="read_only")
def my_orders_in_a_thread(ctx: Context, status: str) -> str:
    """The asking user's orders with this status, read in a worker thread."""
    return f"{ctx.deps.user} {status}: {', '.join(ctx.deps.orders[ctx.deps.user])}"


def _answer_with_the_result(name: str) -> FunctionModel:
    """Calls ``name`` once, then answers with what it returned: the answer is the tool's data, unchanged."""

    def respond(request: Request) -> Turn:
        results = last_results(request)
        return reply(next(iter(results.values()))) if results else call(name, status="open")

    return FunctionModel(respond)


def test_the_context_parameter_is_not_in_the_schema_the_model_sees() -> None:
    assert my_orders.takes_context
    assert list(my_orders.parameters["properties"]) == ["status"]
    assert my_orders.parameters["required"] == ["status"]


@pytest.mark.parametrize("the_tool", [my_orders, my_orders_in_a_thread], ids=["async", "thread"])
async def test_fifty_concurrent_runs_for_fifty_users_each_see_only_their_own_data(the_tool: toolslip.Tool) -> None:
    agent = Agent(model=_answer_with_the_result(the_tool.name), tools=Toolbox([the_tool]))
    users = list(ORDERS)
    results = await asyncio.gather(*(agent.arun("my open orders?", deps=Shop(u, ORDERS)) for u in users))
    for user, result in zip(users, results, strict=True):
        assert result.output == f"{user} open: {', '.join(ORDERS[user])}"


@tool(effects="read_only", isolate="process")
def whoami(ctx: RunContext[dict[str, str]], status: str) -> str:
    """Who is asking, answered from a child process."""
    return f"{ctx.deps['user']} {status} {ctx.run_id} {ctx.call.id if ctx.call else None} {os.getpid()}"


def test_a_tool_in_a_child_process_gets_picklable_deps() -> None:
    agent = Agent(model=_answer_with_the_result("whoami"), tools=Toolbox([whoami]))
    results = [agent.run("who am I?", deps={"user": u}, run_id=f"run-{u}") for u in ("ann", "bob")]
    for user, result in zip(("ann", "bob"), results, strict=True):
        who, status, run_id, call_id, pid = result.output.split()
        assert (who, status, run_id) == (user, "open", f"run-{user}")
        assert call_id == result.messages[-3].tool_calls[0].id and int(pid) != os.getpid()


def test_deps_that_cannot_cross_to_a_child_process_are_one_sentence_for_the_model() -> None:
    agent = Agent(model=_answer_with_the_result("whoami"), tools=Toolbox([whoami]))
    unpicklable = {"user": lambda: None}  # a lambda stands for a connection pool: it cannot be pickled
    result = agent.run("who am I?", deps=unpicklable)
    [tool_result] = result.messages[-2].tool_results
    assert tool_result.is_error and "isolate='thread'" in tool_result.text and "deps" in tool_result.text


def test_hooks_and_output_validators_read_the_same_deps() -> None:
    seen: list[Any] = []

    class Who(Hook):
        async def before_tool(self, ctx: RunContext, call: ToolCall, tool: toolslip.Tool | None) -> None:
            seen.append(ctx.deps)

    class Answer(pydantic.BaseModel):
        user: str

        @pydantic.field_validator("user")
        @classmethod
        def is_the_asking_user(cls, value: str, info: pydantic.ValidationInfo) -> str:
            if value != info.context.deps.user:
                raise ValueError(f"the answer is about {value}, not the asking user")
            return value

    def respond(request: Request) -> Turn:
        if not last_results(request):
            return call("my_orders", status="open")
        return reply('{"user": "user7"}')  # the wrong user: the validator must catch it

    agent = Agent(
        model=FunctionModel(respond), tools=Toolbox([my_orders]), hooks=[Who()], output_type=Answer, output_retries=0
    )
    result = agent.run("whose orders?", deps=Shop("user3", ORDERS))
    assert seen == [Shop("user3", ORDERS)]
    assert result.stop_reason == "output_invalid" and "not the asking user" in (result.output_error or "")
    accepted = agent.run("whose orders?", deps=Shop("user7", ORDERS)).data
    assert isinstance(accepted, Answer) and accepted.user == "user7"


def _pays_ann_then_bob(request: Request) -> Turn:
    """One payment a turn, by position in the transcript, so a resumed run gets the same script."""
    done = sum(m.role == "tool" for m in request.messages)
    return [call("pay", to="ann", amount=5), call("pay", to="bob", amount=5)][done] if done < 2 else reply("ok")


def test_the_idempotency_key_is_one_per_action_and_deps_come_from_whoever_resumes() -> None:
    keys: list[tuple[str, str]] = []

    @tool(effects="side_effect")
    def pay(ctx: RunContext[str], to: str, amount: int) -> str:
        """Pay someone."""
        keys.append((ctx.deps, ctx.idempotency_key))
        return f"paid {amount} to {to}"

    approval = Approval()  # nobody to ask: side effects pause the run
    agent = Agent(model=FunctionModel(_pays_ann_then_bob), tools=Toolbox([pay]), hooks=[approval])
    assert agent.run("pay ann, then bob", run_id="r1", deps="first process").stop_reason == "paused"
    assert keys == []
    for deps in ("second process", "third process"):
        paused = approval.paused("r1")
        assert paused is not None
        asyncio.run(resume_paused(agent, paused, {paused.pending[0].call_id: True}, deps=deps))
    assert [d for d, _ in keys] == ["second process", "third process"]  # deps from the caller, never saved
    assert len({k for _, k in keys}) == 2 and all(len(k) == 32 for _, k in keys)

    ctx: RunContext[None] = RunContext(run_id="r1", model_name="m", tools=Toolbox(), messages=[])
    first = ctx.for_call(ToolCall(id="call_0", name="pay", arguments={"to": "ann", "amount": 5}))
    reordered = ctx.for_call(ToolCall(id="call_0", name="pay", arguments={"amount": 5, "to": "ann"}))
    other_run = dataclasses.replace(first, run_id="r2")
    other_amount = ctx.for_call(ToolCall(id="call_0", name="pay", arguments={"to": "ann", "amount": 6}))
    assert first.idempotency_key == reordered.idempotency_key
    assert len({first.idempotency_key, other_run.idempotency_key, other_amount.idempotency_key}) == 3


def test_a_journaled_run_resumed_later_gets_its_deps_from_the_caller_and_the_same_key(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    @tool(effects="side_effect")
    def pay(ctx: RunContext[str], to: str, amount: int) -> str:
        """Pay someone."""
        seen.append((ctx.deps, ctx.idempotency_key))
        return "paid"

    journal = Journal(str(tmp_path / "runs.db"), approver=None)
    agent = Agent(model=FunctionModel(_pays_ann_then_bob), tools=Toolbox([pay]), hooks=journal.wrap(Approval()))
    first = agent.run("pay", run_id="r", deps="deps-of-the-first-process")
    assert first.stop_reason == "paused" and seen == []
    held = next(m for m in reversed(first.messages) if m.tool_calls).tool_calls[0]
    asyncio.run(journal.resume(agent, "r", {held.id: True}, deps="deps-of-the-resumer"))
    assert [deps for deps, _ in seen] == ["deps-of-the-resumer"]
    assert b"deps-of-the" not in (tmp_path / "runs.db").read_bytes()  # never written to the journal
    expected = RunContext(run_id="r", model_name="", tools=Toolbox(), messages=[]).for_call(held)
    assert seen[0][1] == expected.idempotency_key  # the key of the call the first process was asked


def test_a_context_parameter_anywhere_but_first_is_refused_at_definition() -> None:
    def late(status: str, ctx: RunContext) -> str:
        return status

    with pytest.raises(ToolDefinitionError, match="run context must be the first parameter"):
        tool(late)


def test_a_tool_that_reads_the_context_called_outside_a_run_says_so() -> None:
    from toolslip.agent.calls import execute_call

    lone = ToolCall(id="c", name="my_orders", arguments={"status": "x"})
    result = asyncio.run(execute_call(lone, my_orders, Toolbox([my_orders])))
    assert result.is_error and "outside a run" in result.text


def test_a_step_run_once_inside_another_engine_gets_its_deps(tmp_path: Path) -> None:
    from toolslip.fleet.once import run_once

    seen: list[str] = []

    @tool(effects="read_only")
    def whose(ctx: RunContext[str], status: str) -> str:
        """Who is asking."""
        seen.append(ctx.deps)
        return ctx.deps

    journal = Journal(str(tmp_path / "runs.db"))
    agent = Agent(model=_answer_with_the_result("whose"), tools=Toolbox([whose]), hooks=journal.wrap())
    result = run_once(journal, agent, "who?", workflow_id="wf-1", step_id=3, deps="ann")
    assert result.output == "ann" and seen == ["ann"]
