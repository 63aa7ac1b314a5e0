"""The synchronous entry points (``toolslip.run``, ``Agent.run``): one event loop per thread, so a script
calling them in a loop reuses its HTTP connection, while each call still behaves like ``asyncio.run``."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Iterator

import pytest
from aiohttp import web

import toolslip
from toolslip import Agent, Toolbox, tool
from toolslip.errors import ToolDefinitionError
from toolslip.providers.openai import OpenAIChatModel
from toolslip.testing import ScriptedModel, call


class ChatServer:
    """A Chat Completions server in its own thread that answers every request with plain text and notes
    which client port (which TCP connection) each request came on."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._answer)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1"
        self._ready.set()
        self._loop.run_forever()

    async def _answer(self, request: web.Request) -> web.Response:
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.ports.append(peer[1] if peer else -1)
        message = {"role": "assistant", "content": "done"}
        return web.json_response({"id": "c", "model": "m", "choices": [{"message": message, "finish_reason": "stop"}]})

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def server() -> Iterator[ChatServer]:
    running = ChatServer()
    yield running
    running.stop()


def test_the_one_liner_reuses_its_connection_from_call_to_call(server: ChatServer) -> None:
    for _ in range(3):
        assert toolslip.run(f"openai:m@{server.url}", "hi").output == "done"
    assert len(server.ports) == 3
    assert len(set(server.ports)) == 1, "each call opened a new TCP connection"


def test_a_reused_agents_sync_run_reuses_its_connection(server: ChatServer) -> None:
    agent = Agent(model=OpenAIChatModel("m", base_url=server.url))
    for _ in range(3):
        assert agent.run("hi").output == "done"
    assert len(set(server.ports)) == 1


def test_each_thread_has_its_own_loop() -> None:
    loops: list[asyncio.AbstractEventLoop] = []

    @tool(effects="read_only")
    async def where() -> str:
        """Which loop runs this."""
        loops.append(asyncio.get_running_loop())
        return "here"

    def one() -> None:
        assert toolslip.run(ScriptedModel([call("where"), "ok"]), "go", [where]).output == "ok"

    one()
    one()
    other = threading.Thread(target=one)
    other.start()
    other.join(30)
    assert len(loops) == 3 and loops[0] is loops[1] and loops[2] is not loops[0]


VISITOR: contextvars.ContextVar[str] = contextvars.ContextVar("visitor", default="nobody")


def test_each_call_sees_the_callers_context_and_leaves_nothing_running() -> None:
    seen: list[str] = []
    leftovers: list[asyncio.Task[None]] = []

    @tool(effects="read_only")
    async def look() -> str:
        """Note the caller's context variable and leave a task behind."""
        seen.append(VISITOR.get())
        VISITOR.set("changed inside the run")
        leftovers.append(asyncio.get_running_loop().create_task(asyncio.sleep(3600)))
        return "looked"

    def script() -> ScriptedModel:
        return ScriptedModel([call("look"), "ok"])

    VISITOR.set("alice")
    assert toolslip.run(script(), "go", [look]).output == "ok"
    VISITOR.set("bob")
    assert toolslip.run(script(), "go", [look]).output == "ok"
    assert seen == ["alice", "bob"]  # copied at each call, as asyncio.run does; never the run's own change
    assert VISITOR.get() == "bob"
    assert all(task.cancelled() for task in leftovers)  # cancelled when the run returned, as asyncio.run does


def test_isolate_none_runs_on_the_event_loop_and_takes_no_timeout() -> None:
    threads: dict[str, int] = {}

    def where(name: str) -> str:
        """Note the thread this runs in."""
        threads[name] = threading.get_ident()
        return name

    inline = tool(where, name="inline", effects="read_only", isolate="none")
    threaded = tool(where, name="threaded", effects="read_only")

    @tool(name="loop", effects="read_only")
    async def loop_thread() -> str:
        """Note the event loop's thread."""
        threads["loop"] = threading.get_ident()
        return "loop"

    model = ScriptedModel([[call("inline", name="inline"), call("threaded", name="threaded"), call("loop")], "ok"])
    assert toolslip.run(model, "go", Toolbox([inline, threaded, loop_thread])).output == "ok"
    assert threads["inline"] == threads["loop"] != threads["threaded"]
    with pytest.raises(ToolDefinitionError, match="cannot have a timeout"):
        tool(where, isolate="none", timeout=1.0)
