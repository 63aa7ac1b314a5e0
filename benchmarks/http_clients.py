"""Client CPU per POST for the maintained async HTTP clients on PyPI, on the request toolslip sends most.

The request is a Chat Completions body after 10 tool steps (21 messages, about 2.8 KB) posted over a
kept-alive loopback connection to ``fake_server.py``; the answer is 390 bytes. Each client runs in a fresh
process, interleaved in a random order in every round; the figure is client CPU (``time.process_time``, all
threads: the Rust clients do their I/O in threads of their own). ``raw_streams`` is hand-written HTTP on
asyncio streams: the floor, not a candidate (a hand-written HTTP stack is not an option for toolslip).

Clients that are not installed are skipped. To measure them all::

    pip install httpx aiosonic niquests curl_cffi pyreqwest rnet httpr uvloop

Usage: ``python benchmarks/http_clients.py [--rounds 5] [--requests 300] [--uvloop]``
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import random
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from statistics import median
from typing import Any

from _common import OPENAI_TOOLS, PROMPT, fake_server, machine_load, spread

Post = Callable[[bytes], Awaitable[bytes]]
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json",
    "Authorization": "Bearer x",
    "User-Agent": "toolslip/0.1.0",
}
CLIENTS = {  # name -> the module it needs
    "aiohttp": "aiohttp",
    "httpx": "httpx",
    "httpcore": "httpcore",
    "aiosonic": "aiosonic",
    "niquests": "niquests",
    "curl_cffi": "curl_cffi",
    "pyreqwest": "pyreqwest",
    "rnet": "rnet",
    "httpr": "httpr",
    "raw_streams": "asyncio",
}


def body() -> bytes:
    messages: list[dict[str, Any]] = [{"role": "user", "content": PROMPT}]
    for i in range(10):
        arguments = json.dumps({"a": i, "b": 1})
        call = {"id": f"call_{i}", "type": "function", "function": {"name": "add", "arguments": arguments}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"call_{i}", "content": str(i + 1)})
    return json.dumps({"model": "fake-k20", "messages": messages, "tools": OPENAI_TOOLS}).encode()


async def make_post(name: str, base: str) -> Post:  # noqa: C901 - one branch per client, each a few lines
    url = f"{base}/v1/chat/completions"
    if name == "aiohttp":  # as providers/http.py sets it up
        import aiohttp
        from yarl import URL

        session = aiohttp.ClientSession(
            headers=HEADERS,
            timeout=aiohttp.ClientTimeout(total=600, connect=5),
            connector=aiohttp.TCPConnector(limit=0),
            cookie_jar=aiohttp.DummyCookieJar(),
            skip_auto_headers=("User-Agent",),
        )
        parsed = URL(url)

        async def post_aiohttp(data: bytes) -> bytes:
            response = await session.post(parsed, data=data)
            raw = await response.read()
            response.release()
            return raw

        return post_aiohttp
    if name == "httpx":
        import httpx

        client = httpx.AsyncClient(headers=HEADERS)

        async def post_httpx(data: bytes) -> bytes:
            return (await client.post(url, content=data)).content

        return post_httpx
    if name == "httpcore":
        import httpcore

        pool = httpcore.AsyncConnectionPool()
        fixed = [(k.encode(), v.encode()) for k, v in HEADERS.items()]

        async def post_httpcore(data: bytes) -> bytes:
            headers = [*fixed, (b"Content-Length", str(len(data)).encode())]
            return (await pool.request("POST", url, headers=headers, content=data)).content

        return post_httpcore
    if name == "aiosonic":
        import aiosonic

        sonic = aiosonic.HTTPClient()

        async def post_aiosonic(data: bytes) -> bytes:
            return bytes(await (await sonic.post(url, data=data, headers=HEADERS)).content())

        return post_aiosonic
    if name == "niquests":
        import niquests

        niq = niquests.AsyncSession()
        niq.headers.update(HEADERS)

        async def post_niquests(data: bytes) -> bytes:
            return bytes((await niq.post(url, data=data)).content or b"")

        return post_niquests
    if name == "curl_cffi":
        from curl_cffi.requests import AsyncSession

        curl = AsyncSession(headers=HEADERS)

        async def post_curl(data: bytes) -> bytes:
            return bytes((await curl.post(url, data=data)).content)

        return post_curl
    if name == "pyreqwest":
        from pyreqwest.client import ClientBuilder

        reqwest = ClientBuilder().default_headers(HEADERS).build()

        async def post_pyreqwest(data: bytes) -> bytes:
            response = await reqwest.post(url).body_bytes(data).build().send()
            return bytes(await response.bytes())

        return post_pyreqwest
    if name == "rnet":
        import rnet

        client_rnet = rnet.Client(headers=HEADERS)

        async def post_rnet(data: bytes) -> bytes:
            return bytes(await (await client_rnet.post(url, body=data)).bytes())

        return post_rnet
    if name == "httpr":
        import httpr

        client_httpr = httpr.AsyncClient(headers=HEADERS)

        async def post_httpr(data: bytes) -> bytes:
            return bytes((await client_httpr.post(url, content=data)).content)

        return post_httpr
    host, port = base.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items())

    async def post_raw(data: bytes) -> bytes:
        writer.write(head.encode() + b"Content-Length: %d\r\n\r\n" % len(data) + data)
        answer_head = await reader.readuntil(b"\r\n\r\n")
        length = int(answer_head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        return await reader.readexactly(length)

    return post_raw


async def measure(name: str, base: str, requests: int, blocks: int) -> dict[str, Any]:
    post = await make_post(name, base)
    data = body()
    for _ in range(50):
        answer = await post(data)
    if b"chat.completion" not in answer:
        raise AssertionError(f"{name}: unexpected answer {answer[:200]!r}")
    cpu, wall = [], []
    for _ in range(blocks):
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(requests):
            await post(data)
        cpu.append((time.process_time() - c0) * 1e6 / requests)
        wall.append((time.perf_counter() - w0) * 1e6 / requests)
    return {"client": name, "cpu_us": median(cpu), "wall_us": median(wall)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=300, help="requests per block (5 blocks per child)")
    parser.add_argument("--uvloop", action="store_true", help="run every client on uvloop")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--base", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.uvloop:
            import uvloop

            uvloop.install()
        print(json.dumps(asyncio.run(measure(args.child, args.base, args.requests, 5))))
        return
    names = [n for n, module in CLIENTS.items() if importlib.util.find_spec(module) is not None]
    skipped = sorted(set(CLIENTS) - set(names))
    print(f"before: {machine_load()}" + (f"; not installed: {', '.join(skipped)}" if skipped else ""))
    rows: list[list[dict[str, Any]]] = []
    with fake_server() as base:
        for number in range(args.rounds):
            round_ = []
            for name in random.sample(names, len(names)):
                command = [sys.executable, __file__, "--child", name, "--base", base, "--requests", str(args.requests)]
                command += ["--uvloop"] if args.uvloop else []
                done = subprocess.run(command, capture_output=True, text=True)
                if done.returncode:
                    print(f"{name} failed: {done.stderr.strip().splitlines()[-1:]}")
                    continue
                round_.append(json.loads(done.stdout.strip().splitlines()[-1]))
            rows.append(round_)
            print(f"round {number + 1}/{args.rounds} done", flush=True)
    print(f"after: {machine_load()}")
    print(f"\nclient CPU per POST, median over {args.rounds} rounds [min-max]; ratio to aiohttp within each round")
    print(f"{'client':<14}{'CPU us/request':>26}{'wall us':>12}{'/ aiohttp':>20}")
    for name in names:
        mine = [r for round_ in rows for r in round_ if r["client"] == name]
        ratios = []
        for round_ in rows:
            by = {r["client"]: r for r in round_}
            if name in by and "aiohttp" in by:
                ratios.append(by[name]["cpu_us"] / by["aiohttp"]["cpu_us"])
        cpu = spread([r["cpu_us"] for r in mine])
        wall = median([r["wall_us"] for r in mine]) if mine else 0.0
        print(f"{name:<14}{cpu:>26}{wall:>12,.0f}{spread(ratios, '{:.2f}'):>20}")


if __name__ == "__main__":
    main()
