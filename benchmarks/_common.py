"""Shared pieces of the benchmarks: the fake server process, the task's tool, and the loops to compare.

Every implementation does the same job against ``fake_server.py``: K tool steps (``add(a=i, b=1)``) and a
final answer, sending the whole history and the tool list on every request, as a real loop must.

Fairness rules (issue 20): a baseline is compared with the toolslip row that uses the same JSON library
(orjson, unless the row's name says ``json``) and the same tool kind. ``_def``: a plain function, what the
README shows, which toolslip runs in a worker thread; ``_inline``: the same function declared
``isolate="none"``, which toolslip calls on the event loop as a hand loop does; ``_async``: a coroutine.
The SDK loops keep plain dicts in their history (``to_dict()`` of the SDK's answer), as a careful user
would; ``sdk_openai_objects`` is the seed's habit of appending the SDK's own objects, which the SDK then
re-serialises on every call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from statistics import median
from typing import Any

import orjson
from typing_extensions import TypedDict

HERE = Path(__file__).resolve().parent
RunOnce = Callable[[int], Awaitable[str]]
SyncRunOnce = Callable[[int], str]
Setup = Callable[[str], Awaitable[RunOnce]]
PROMPT = "Add the numbers step by step with the add tool, then give the answer."
ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "add", "description": "Add two integers.", "parameters": ADD_SCHEMA}}
]
ANTHROPIC_TOOLS = [{"name": "add", "description": "Add two integers.", "input_schema": ADD_SCHEMA}]
HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer x"}


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def add_async(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@contextlib.contextmanager
def fake_server(latency: float = 0.0) -> Iterator[str]:
    """Start ``fake_server.py`` in its own process; yields its base URL; stops it by its PID."""
    command = [sys.executable, str(HERE / "fake_server.py"), "--port", "0", "--latency", str(latency)]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            if not line.startswith("PORT "):
                raise RuntimeError(f"fake server did not start: {line!r}")
            yield f"http://127.0.0.1:{int(line.split()[1])}"
        finally:
            process.terminate()
            process.wait(10)


# --- toolslip -----------------------------------------------------------------------------------------


def _toolslip_tool(kind: str) -> Any:
    """``def``: a plain function, run in a worker thread (the default); ``inline``: the same declared
    ``isolate="none"``, run on the event loop; ``async``: a coroutine."""
    from toolslip import tool

    if kind == "async":
        return tool(add_async, name="add", effects="read_only")
    return tool(add, effects="read_only", isolate="none" if kind == "inline" else "thread")


def _toolslip_model(protocol: str, base: str, k: int) -> Any:
    from toolslip.providers.anthropic import AnthropicModel
    from toolslip.providers.openai import OpenAIChatModel

    if protocol == "openai":
        return OpenAIChatModel(f"fake-k{k}", base_url=f"{base}/v1")
    if protocol == "gemini":
        from toolslip.providers.gemini import GeminiModel

        return GeminiModel(f"fake-k{k}", base_url=base, api_key="x")
    if protocol == "bedrock":  # a Bedrock API key (bearer), as the OpenAI rows send theirs; SigV4 has its own row
        from toolslip.providers.bedrock import BedrockModel

        return BedrockModel(f"fake-k{k}", region="us-east-1", base_url=base, api_key="x")
    if protocol == "bedrock-sigv4":
        from botocore.credentials import Credentials

        from toolslip.providers.bedrock import BedrockModel

        return BedrockModel(f"fake-k{k}", region="us-east-1", base_url=base, credentials=Credentials("AKID", "x"))
    return AnthropicModel(f"fake-k{k}", base_url=base)


class TypedAnswer(TypedDict):
    """The typed row's answer (``output_type``): the same sentence, as a validated field."""

    answer: str


def _toolslip(protocol: str, kind: str, typed: bool = False) -> Setup:
    """A reused ``Agent`` per K, run with ``await agent.arun(...)``; ``typed``: with ``output_type`` (native
    structured output: the request carries the schema, the answer is validated)."""

    async def setup(base: str) -> RunOnce:
        from toolslip import Agent, Toolbox

        tools = Toolbox([_toolslip_tool(kind)])
        agents: dict[int, Any] = {}
        output = {"output_type": TypedAnswer} if typed else {}

        async def run(k: int) -> str:
            if k not in agents:
                agents[k] = Agent(model=_toolslip_model(protocol, base, k), tools=tools, max_steps=k + 1, **output)
            result = await agents[k].arun(PROMPT)
            return str(result.data["answer"] if typed else result.output)

        return run

    return setup


def _toolslip_agent_sync(base: str) -> SyncRunOnce:
    """A reused ``Agent`` per K, run with the synchronous ``agent.run(...)`` (a script without asyncio)."""
    from toolslip import Agent, Toolbox

    tools = Toolbox([_toolslip_tool("def")])
    agents: dict[int, Any] = {}

    def run(k: int) -> str:
        if k not in agents:
            agents[k] = Agent(model=_toolslip_model("openai", base, k), tools=tools, max_steps=k + 1)
        return str(agents[k].run(PROMPT).output)

    return run


def _toolslip_oneliner(base: str) -> SyncRunOnce:
    """The README's one-liner, ``toolslip.run("openai:MODEL@URL", prompt, [tool])``, called once per run."""
    import toolslip

    add_tool = _toolslip_tool("def")

    def run(k: int) -> str:
        return str(toolslip.run(f"openai:fake-k{k}@{base}/v1", PROMPT, [add_tool], max_steps=k + 1).output)

    return run


# --- hand-written loops -------------------------------------------------------------------------------

Post = Callable[[bytes], Awaitable[bytes]]


def _hand_loop(post: Post, dumps: Callable[[Any], bytes], loads: Callable[[Any], Any], kind: str) -> RunOnce:
    """The seed's loop on plain dicts: POST the history, append the answer, run its calls, repeat.

    The tool's arguments are parsed with the same ``loads`` as the answer; a ``def`` tool is called inline,
    an ``async def`` one awaited, as a user would write it.
    """

    async def run(k: int) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        while True:
            body = dumps({"model": f"fake-k{k}", "messages": messages, "tools": OPENAI_TOOLS})
            message = loads(await post(body))["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message["content"])
            for call in message["tool_calls"]:
                arguments = loads(call["function"]["arguments"])
                output = add(**arguments) if kind == "def" else await add_async(**arguments)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(output)})

    return run


def _json_dumps(value: Any) -> bytes:
    return json.dumps(value).encode()


def _hand_aiohttp(library: str, kind: str) -> Setup:
    async def setup(base: str) -> RunOnce:
        import aiohttp

        session = aiohttp.ClientSession(headers=HEADERS)
        url = f"{base}/v1/chat/completions"

        async def post(body: bytes) -> bytes:
            async with session.post(url, data=body) as response:
                return await response.read()

        if library == "orjson":
            return _hand_loop(post, orjson.dumps, orjson.loads, kind)
        return _hand_loop(post, _json_dumps, json.loads, kind)

    return setup


async def _hand_httpx(base: str) -> RunOnce:
    try:
        import httpx
    except ImportError:
        import httpx2 as httpx  # the openai/anthropic SDKs' own fork of httpx
    client = httpx.AsyncClient(headers=HEADERS)
    url = f"{base}/v1/chat/completions"

    async def post(body: bytes) -> bytes:
        return (await client.post(url, content=body)).content

    return _hand_loop(post, orjson.dumps, orjson.loads, "def")


# --- the official SDKs --------------------------------------------------------------------------------


def _sdk_openai(objects: bool) -> Setup:
    async def setup(base: str) -> RunOnce:
        import openai

        client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)

        async def run(k: int) -> str:
            messages: list[Any] = [{"role": "user", "content": PROMPT}]
            while True:
                reply = await client.chat.completions.create(
                    model=f"fake-k{k}",
                    messages=messages,
                    tools=OPENAI_TOOLS,  # type: ignore[arg-type]
                )
                message = reply.choices[0].message
                # Plain dicts by default; the SDK object itself when measuring the seed's habit.
                messages.append(message if objects else message.to_dict())
                if not message.tool_calls:
                    return str(message.content)
                for call in message.tool_calls:
                    output = add(**orjson.loads(call.function.arguments))  # type: ignore[union-attr]
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})

        return run

    return setup


async def _sdk_anthropic(base: str) -> RunOnce:
    import anthropic

    client = anthropic.AsyncAnthropic(base_url=base, api_key="x", max_retries=0)

    async def run(k: int) -> str:
        messages: list[Any] = [{"role": "user", "content": PROMPT}]
        while True:
            reply = await client.messages.create(
                model=f"fake-k{k}",
                max_tokens=1024,
                messages=messages,
                tools=ANTHROPIC_TOOLS,  # type: ignore[arg-type]
            )
            messages.append({"role": "assistant", "content": [block.to_dict() for block in reply.content]})
            calls = [b for b in reply.content if b.type == "tool_use"]
            if not calls:
                return "".join(b.text for b in reply.content if b.type == "text")
            results = [
                {"type": "tool_result", "tool_use_id": c.id, "content": str(add(**c.input))}  # type: ignore[arg-type]
                for c in calls
            ]
            messages.append({"role": "user", "content": results})

    return run


IMPLS: dict[str, Setup] = {
    "toolslip_openai_def": _toolslip("openai", "def"),
    "toolslip_openai_inline": _toolslip("openai", "inline"),
    "toolslip_openai_typed": _toolslip("openai", "inline", typed=True),
    "toolslip_openai_async": _toolslip("openai", "async"),
    "toolslip_anthropic_def": _toolslip("anthropic", "def"),
    "toolslip_anthropic_inline": _toolslip("anthropic", "inline"),
    "toolslip_gemini_inline": _toolslip("gemini", "inline"),
    "toolslip_converse_inline": _toolslip("bedrock", "inline"),
    "toolslip_converse_sigv4_inline": _toolslip("bedrock-sigv4", "inline"),
    "hand_aiohttp_orjson_def": _hand_aiohttp("orjson", "def"),
    "hand_aiohttp_orjson_async": _hand_aiohttp("orjson", "async"),
    "hand_aiohttp_json_def": _hand_aiohttp("json", "def"),
    "hand_httpx_orjson_def": _hand_httpx,
    "sdk_openai": _sdk_openai(objects=False),
    "sdk_openai_objects": _sdk_openai(objects=True),
    "sdk_anthropic": _sdk_anthropic,
}
"""Implementations with an async ``run(k)`` (every one can run concurrently)."""

SYNC_IMPLS: dict[str, Callable[[str], SyncRunOnce]] = {
    "toolslip_oneliner": _toolslip_oneliner,
    "toolslip_agent_sync": _toolslip_agent_sync,
}
"""Implementations whose ``run(k)`` is synchronous (the entry points a script without asyncio uses)."""


def sync_runner(impl: str, base: str) -> SyncRunOnce:
    """``run(k)`` as a plain call: a sync implementation as is, an async one on one event loop kept for them all."""
    if impl in SYNC_IMPLS:
        return SYNC_IMPLS[impl](base)
    loop = asyncio.new_event_loop()
    run = loop.run_until_complete(IMPLS[impl](base))
    return lambda k: loop.run_until_complete(run(k))


def check(output: str, k: int) -> None:
    if f"The answer is {k}." not in output:
        raise AssertionError(f"wrong final answer for K={k}: {output!r}")


def spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    """``median [min-max]`` of ``values``, each formatted with ``fmt``."""
    if not values:
        return "-"
    return f"{fmt.format(median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def machine_load() -> str:
    """How busy the shared machine is: load averages and the share of a core a busy loop gets."""
    w0, c0 = time.perf_counter(), time.process_time()
    while time.process_time() - c0 < 0.2:
        pass
    share = (time.process_time() - c0) / (time.perf_counter() - w0)
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores; a busy loop got {share:.0%} of a core"


def add_child_options(parser: argparse.ArgumentParser) -> None:
    """The hidden ``--child IMPL --base URL`` a benchmark passes to the fresh process that measures IMPL."""
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)


def run_child(script: str, impl: str, base: str, **options: object) -> dict[str, Any]:
    """Run ``script --child IMPL --base BASE --OPTION VALUE ...`` in a fresh process; read the JSON line it
    prints last."""
    args = [script, "--child", impl, "--base", base]
    for name, value in options.items():
        args += [f"--{name}", str(value)]
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))
