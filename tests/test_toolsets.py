"""Tools that change by step and tool sets that compose: what the model is offered is what may run."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from toolslip import Agent, Approval, Journal, Request, Toolbox, tool
from toolslip.agent.hooks import RunContext
from toolslip.agent.tools import Tool
from toolslip.agent.toolsets import filtered, prefixed
from toolslip.core.errors import ConfigError
from toolslip.testing import ScriptedModel, call


@dataclass
class Session:
    user: str
    admin: bool = False
    logged_in: bool = False


def only_logged_in(ctx: RunContext[Session], t: Tool) -> Tool | None:
    return t if ctx.deps.logged_in else None


def only_admins(ctx: RunContext[Session], t: Tool) -> Tool | None:
    return t if ctx.deps.admin else None


@tool(effects="idempotent")
def login(ctx: RunContext[Session]) -> str:
    """Log the user in."""
    ctx.deps.logged_in = True
    return f"{ctx.deps.user} is logged in"


@tool(effects="read_only", prepare=only_logged_in)
def orders(ctx: RunContext[Session]) -> str:
    """List my orders."""
    return f"orders of {ctx.deps.user}: #1, #2"


@tool(effects="read_only", prepare=only_admins)
def all_orders() -> str:
    """List every customer's orders."""
    return "everything"


def offered(request: Request) -> list[str]:
    return [t.name for t in request.tools]


def test_a_tool_is_offered_only_after_login_and_a_hidden_call_never_runs() -> None:
    model = ScriptedModel([call("orders"), call("login"), call("orders"), "done"])
    agent: Agent[None] = Agent(model=model, tools=Toolbox([login, orders, all_orders]))
    result = agent.run("my orders", deps=Session(user="ann"))
    assert [offered(r) for r in model.requests] == [["login"], ["login"], ["login", "orders"], ["login", "orders"]]
    first, _, third = (m.tool_results[0] for m in result.messages if m.role == "tool")
    assert first.is_error and "not available at this step" in first.text and first.outcome == "refused"
    assert third.text == "orders of ann: #1, #2"


def test_deps_decide_per_run_who_sees_a_tool() -> None:
    model = ScriptedModel(["hi", "hi"])
    agent: Agent[None] = Agent(model=model, tools=Toolbox([login, orders, all_orders]))
    agent.run("x", deps=Session(user="root", admin=True, logged_in=True))
    agent.run("x", deps=Session(user="ann"))
    assert [offered(r) for r in model.requests] == [["login", "orders", "all_orders"], ["login"]]


def test_a_changed_tool_holds_the_call_to_its_narrower_schema() -> None:
    @tool(effects="read_only")
    def convert(currency: str) -> str:
        """Convert to this currency."""
        return f"in {currency}"

    def euro_only(ctx: RunContext[None], t: Tool) -> Tool:
        schema = {**t.parameters, "properties": {"currency": {"type": "string", "enum": ["EUR"]}}}
        return Tool.from_schema(
            name=t.name, description="Convert to EUR (the only currency today).", parameters=schema, fn=t.fn
        )

    convert.prepare = euro_only
    model = ScriptedModel([call("convert", currency="JPY"), call("convert", currency="EUR"), "done"])
    result = Agent(model=model, tools=Toolbox([convert])).run("convert")
    assert model.requests[0].tools[0].description == "Convert to EUR (the only currency today)."
    refused, ran = (m.tool_results[0] for m in result.messages if m.role == "tool")
    assert refused.is_error and "invalid arguments for convert" in refused.text
    assert ran.text == "in EUR"


def test_prepare_tools_hides_a_tool_once_it_has_been_used() -> None:
    def unused(ctx: RunContext[None], tools: list[Tool]) -> list[Tool]:
        used = {c.name for m in ctx.messages for c in m.tool_calls}
        return [t for t in tools if t.name not in used]

    model = ScriptedModel([call("all_orders"), "done"])
    Agent(model=model, tools=Toolbox([all_orders]), prepare_tools=unused).run("x", deps=Session("r", admin=True))
    assert [offered(r) for r in model.requests] == [["all_orders"], []]


def test_prefixed_and_filtered_views_follow_their_source() -> None:
    @tool(effects="read_only")
    def search(q: str) -> str:
        """Search."""
        return f"found {q}"

    @tool(effects="side_effect")
    def delete(id: int) -> str:
        """Delete."""
        return "deleted"

    source = Toolbox([search])
    gh = prefixed(source, "gh_")
    safe = filtered(gh, lambda t: t.read_only)
    assert gh.names == ["gh_search"] and safe.names == ["gh_search"]
    source.add(delete)  # a server that lists a new tool
    assert gh.names == ["gh_search", "gh_delete"] and safe.names == ["gh_search"]
    assert source.names == ["search", "delete"]  # the source is unchanged
    with pytest.raises(ConfigError, match="read-only"):
        gh.add(search)
    model = ScriptedModel([call("gh_search", q="bug"), "done"])
    result = Agent(model=model, tools=Toolbox([safe])).run("find")
    assert result.messages[-2].tool_results[0].text == "found bug"


def test_approval_for_a_whole_tool_set() -> None:
    @tool(effects="read_only")
    def read(path: str) -> str:
        """Read a file."""
        return "text"

    asked: list[str] = []

    def approver(request: object) -> bool:
        asked.append(request.tool)  # type: ignore[attr-defined]
        return True

    remote = prefixed(Toolbox([read]), "remote_")
    model = ScriptedModel([call("remote_read", path="a"), call("read", path="b"), "done"])
    Agent(model=model, tools=Toolbox([remote, read]), hooks=[Approval(approver, toolsets=[remote])]).run("go")
    assert asked == ["remote_read"]  # read-only tools never ask by default; the set's do


def test_the_journal_records_what_each_step_offered_and_resume_checks_it(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite")
    turns = [call("login"), call("orders"), "done"]
    agent: Agent[None] = Agent(model=ScriptedModel(list(turns)), tools=Toolbox([login, orders]), hooks=journal.wrap())
    agent.run("my orders", run_id="r", deps=Session(user="ann"))
    recorded = [e.data["offered"] for e in journal.store.entries("r") if e.kind == "model"]
    assert recorded == [["login"], ["login", "orders"], ["login", "orders"]]

    def never(ctx: RunContext[Session], t: Tool) -> Tool | None:
        return None

    hidden = replace(orders, prepare=never)
    again = Journal(tmp_path / "runs.sqlite")
    changed: Agent[None] = Agent(model=ScriptedModel([]), tools=Toolbox([login, hidden]), hooks=again.wrap())
    with pytest.raises(ConfigError, match=r"step 2 of run r offered other tools .*differing: orders"):
        asyncio.run(again.resume(changed, "r", deps=Session(user="ann")))


async def test_an_mcp_server_is_one_tool_set_live_prefixed_and_filtered() -> None:
    """A real MCP server (``mcp-server-time``): the view is empty until the server is entered, then holds its
    tools renamed, and a call of a renamed tool reaches the server."""
    import sys

    import toolslip.mcp as tm

    server = tm.stdio(sys.executable, "-m", "mcp_server_time")
    clock = prefixed(server, "clock_")
    current = filtered(clock, lambda t: "current" in t.name)
    assert clock.names == []
    async with server:
        assert clock.names == [f"clock_{name}" for name in server.names] and len(clock) == 2
        assert current.names == ["clock_get_current_time"]
        model = ScriptedModel([call("clock_get_current_time", timezone="Asia/Tokyo"), "done"])
        result = await Agent(model=model, tools=current).arun("what time is it in Tokyo?")
    answer = result.messages[-2].tool_results[0]
    assert not answer.is_error and "Asia/Tokyo" in answer.text
