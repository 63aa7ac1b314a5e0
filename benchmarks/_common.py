"""Shared pieces of the benchmarks: the fake server process, the task's tool, and the loops to compare.

Every implementation does the same job against ``fake_server.py``: K tool steps (``add(a=i, b=1)``) and a
final answer, sending the whole history and the tool list on every request, as a real loop must.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from statistics import median
from typing import Any

HERE = Path(__file__).resolve().parent
RunOnce = Callable[[int], Awaitable[str]]
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


def add(a: int, b: int) -> int:
    return a + b


async def add_async(a: int, b: int) -> int:
    """The same tool as a coroutine: toolslip runs it on the event loop, as the hand-written loops do.

    A plain ``def`` tool is run in a worker thread instead (so a slow tool cannot stall other runs);
    the ``*_sync_tool`` variant measures what that thread hop costs.
    """
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


# --- the implementations ------------------------------------------------------------------------------


def _toolslip(protocol: str, sync_tool: bool = False) -> Callable[[str], Awaitable[RunOnce]]:
    async def setup(base: str) -> RunOnce:
        from toolslip import Agent, Toolbox, tool
        from toolslip.providers.anthropic import AnthropicModel
        from toolslip.providers.openai import OpenAIChatModel

        add_tool = tool(add, effects="read_only") if sync_tool else tool(add_async, name="add", effects="read_only")
        agents: dict[int, Any] = {}

        async def run(k: int) -> str:
            if k not in agents:
                model = (
                    OpenAIChatModel(f"fake-k{k}", base_url=f"{base}/v1")
                    if protocol == "openai"
                    else AnthropicModel(f"fake-k{k}", base_url=base)
                )
                agents[k] = Agent(model=model, tools=Toolbox([add_tool]), max_steps=k + 1)
            result = await agents[k].arun(PROMPT)
            return str(result.output)

        return run

    return setup


Post = Callable[[bytes], Awaitable[bytes]]


def _hand_loop(post: Post, dumps: Callable[[Any], bytes], loads: Callable[[bytes], Any]) -> RunOnce:
    """The seed's loop on plain dicts: POST the history, append the answer, run its calls, repeat."""

    async def run(k: int) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
        while True:
            body = dumps({"model": f"fake-k{k}", "messages": messages, "tools": OPENAI_TOOLS})
            message = loads(await post(body))["choices"][0]["message"]
            messages.append(message)
            if not message.get("tool_calls"):
                return str(message["content"])
            for call in message["tool_calls"]:
                output = add(**json.loads(call["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(output)})

    return run


HEADERS = {"Content-Type": "application/json", "Authorization": "Bearer x"}


def _raw_aiohttp(dumps: Callable[[Any], bytes], loads: Callable[[bytes], Any]) -> Callable[[str], Awaitable[RunOnce]]:
    async def setup(base: str) -> RunOnce:
        import aiohttp

        session = aiohttp.ClientSession(headers=HEADERS)
        url = f"{base}/v1/chat/completions"

        async def post(body: bytes) -> bytes:
            async with session.post(url, data=body) as response:
                return await response.read()

        return _hand_loop(post, dumps, loads)

    return setup


async def _raw_httpx(base: str) -> RunOnce:
    try:
        import httpx
    except ImportError:
        import httpx2 as httpx  # the openai/anthropic SDKs' own fork of httpx
    client = httpx.AsyncClient(headers=HEADERS)
    url = f"{base}/v1/chat/completions"

    async def post(body: bytes) -> bytes:
        return (await client.post(url, content=body)).content

    return _hand_loop(post, lambda v: json.dumps(v).encode(), json.loads)


async def _sdk_openai(base: str) -> RunOnce:
    import openai

    client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0)

    async def run(k: int) -> str:
        messages: list[Any] = [{"role": "user", "content": PROMPT}]
        while True:
            reply = await client.chat.completions.create(model=f"fake-k{k}", messages=messages, tools=OPENAI_TOOLS)  # type: ignore[arg-type]
            message = reply.choices[0].message
            messages.append(message)  # as the seed does: the SDK object goes back into the history
            if not message.tool_calls:
                return str(message.content)
            for call in message.tool_calls:
                output = add(**json.loads(call.function.arguments))  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})

    return run


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
            messages.append({"role": "assistant", "content": reply.content})
            calls = [b for b in reply.content if b.type == "tool_use"]
            if not calls:
                return "".join(b.text for b in reply.content if b.type == "text")
            results = [
                {"type": "tool_result", "tool_use_id": c.id, "content": str(add(**c.input))}  # type: ignore[arg-type]
                for c in calls
            ]
            messages.append({"role": "user", "content": results})

    return run


def _orjson_pair() -> tuple[Callable[[Any], bytes], Callable[[bytes], Any]]:
    import orjson

    return orjson.dumps, orjson.loads


IMPLS: dict[str, Callable[[str], Awaitable[RunOnce]]] = {
    "toolslip_openai": _toolslip("openai"),
    "toolslip_anthropic": _toolslip("anthropic"),
    "toolslip_openai_sync_tool": _toolslip("openai", sync_tool=True),
    "raw_aiohttp_json": _raw_aiohttp(lambda v: json.dumps(v).encode(), json.loads),
    "raw_aiohttp_orjson": _raw_aiohttp(*_orjson_pair()),
    "raw_httpx": _raw_httpx,
    "sdk_openai": _sdk_openai,
    "sdk_anthropic": _sdk_anthropic,
}


def check(output: str, k: int) -> None:
    if f"The answer is {k}." not in output:
        raise AssertionError(f"wrong final answer for K={k}: {output!r}")


def spread(values: list[float], fmt: str = "{:,.0f}") -> str:
    """``median [min-max]`` of ``values``, each formatted with ``fmt``."""
    return f"{fmt.format(median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


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
