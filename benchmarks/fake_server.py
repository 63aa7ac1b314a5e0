"""A fast fake LLM server for the benchmarks: standard library only, precomputed answers.

It speaks just enough HTTP/1.1 (keep-alive, Content-Length bodies) to serve ``POST /v1/chat/completions``
(OpenAI), ``POST /v1/messages`` (Anthropic), ``POST /v1beta/models/MODEL:generateContent`` (Gemini) and
``POST /model/MODEL/converse`` (Bedrock Converse) without parsing JSON, so its own cost stays out of the
client's measurements (it runs in a separate process anyway). The script is stateless:

* the model name ``fake-k<K>`` (in the body, or the URL for Gemini and Converse) sets the number of tool
  steps K;
* the step is the number of assistant (Gemini: ``model``) messages already in the request (a bytes regex);
* step i < K answers one tool call ``add(a=i, b=1)``; step K answers the text ``The answer is K.``, or,
  when an OpenAI Chat request asks for structured output (a ``response_format``), the JSON
  ``{"answer": "The answer is K."}``.

Usage: ``python benchmarks/fake_server.py [--port 0] [--latency 0.05]``; it prints ``PORT <n>`` when ready.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re

MODEL = re.compile(rb'"model":\s*"fake-k(\d+)"')
PATH_MODEL = re.compile(rb"/models?/fake-k(\d+)[:/]")
ASSISTANT = re.compile(rb'"role":\s*"assistant"')
GEMINI_MODEL = re.compile(rb'"role":\s*"model"')


def openai_answer(k: int, step: int, typed: bool = False) -> dict[str, object]:
    if step < k:
        call = {
            "id": f"call_{step}",
            "type": "function",
            "function": {"name": "add", "arguments": f'{{"a": {step}, "b": 1}}'},
        }
        message: dict[str, object] = {"role": "assistant", "content": None, "tool_calls": [call]}
        finish = "tool_calls"
    else:
        text = json.dumps({"answer": f"The answer is {k}."}) if typed else f"The answer is {k}."
        message, finish = {"role": "assistant", "content": text}, "stop"
    return {
        "id": f"chatcmpl-{k}-{step}",
        "object": "chat.completion",
        "created": 1764400000,
        "model": f"fake-k{k}",
        "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
        "usage": {"prompt_tokens": 100 + 20 * step, "completion_tokens": 12, "total_tokens": 112 + 20 * step},
    }


def anthropic_answer(k: int, step: int) -> dict[str, object]:
    if step < k:
        content: list[dict[str, object]] = [
            {"type": "tool_use", "id": f"toolu_{step}", "name": "add", "input": {"a": step, "b": 1}}
        ]
        stop = "tool_use"
    else:
        content, stop = [{"type": "text", "text": f"The answer is {k}."}], "end_turn"
    return {
        "id": f"msg_{k}_{step}",
        "type": "message",
        "role": "assistant",
        "model": f"fake-k{k}",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100 + 20 * step, "output_tokens": 12},
    }


def gemini_answer(k: int, step: int) -> dict[str, object]:
    """As Gemini 2.x answers: a ``functionCall`` with no id (the client pairs by order and name)."""
    part: dict[str, object] = (
        {"functionCall": {"name": "add", "args": {"a": step, "b": 1}}} if step < k else {"text": f"The answer is {k}."}
    )
    return {
        "candidates": [{"content": {"parts": [part], "role": "model"}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": 100 + 20 * step,
            "candidatesTokenCount": 12,
            "totalTokenCount": 112 + 20 * step,
        },
        "modelVersion": f"fake-k{k}",
        "responseId": f"fakeResponseId{k:04d}{step:05d}",
    }


def converse_answer(k: int, step: int) -> dict[str, object]:
    if step < k:
        block: dict[str, object] = {
            "toolUse": {"toolUseId": f"tooluse_{step}", "name": "add", "input": {"a": step, "b": 1}}
        }
    else:
        block = {"text": f"The answer is {k}."}
    return {
        "output": {"message": {"role": "assistant", "content": [block]}},
        "stopReason": "tool_use" if step < k else "end_turn",
        "usage": {"inputTokens": 100 + 20 * step, "outputTokens": 12, "totalTokens": 112 + 20 * step},
        "metrics": {"latencyMs": 1},
    }


ROUTES = {  # path prefix -> (answer, the regex counting the model's turns)
    b"/v1/chat/completions": (openai_answer, ASSISTANT),
    b"/v1/messages": (anthropic_answer, ASSISTANT),
    b"/v1beta/models/": (gemini_answer, GEMINI_MODEL),
    b"/model/": (converse_answer, ASSISTANT),
}


class Answers:
    """Precomputed HTTP responses, built on first use per (path, K, step)."""

    def __init__(self) -> None:
        self._cache: dict[tuple[bytes, int, int, bool], bytes] = {}

    def get(self, path: bytes, body: bytes) -> bytes:
        route = next((r for prefix, r in ROUTES.items() if path.startswith(prefix)), None)
        if route is None:
            return _response(404, b'{"error": {"message": "unknown route"}}')
        answer, turns = route
        found = PATH_MODEL.search(path) or MODEL.search(body)
        k = int(found.group(1)) if found else 1
        step = min(len(turns.findall(body)), k)
        typed = b'"response_format"' in body
        key = (path, k, step, typed)
        if key not in self._cache:
            payload = answer(k, step, typed) if answer is openai_answer else answer(k, step)
            self._cache[key] = _response(200, json.dumps(payload).encode())
        return self._cache[key]


def _response(status: int, payload: bytes) -> bytes:
    reason = b"OK" if status == 200 else b"Not Found"
    head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (
        status,
        reason,
        len(payload),
    )
    return head + payload


class Protocol(asyncio.Protocol):
    def __init__(self, answers: Answers, latency: float) -> None:
        self.answers = answers
        self.latency = latency
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            path = head.split(b" ", 2)[1]
            answer = self.answers.get(path, body)
            if self.latency:
                asyncio.get_running_loop().call_later(self.latency, self._send, answer)
            else:
                self._send(answer)

    def _send(self, answer: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(answer)


async def main(port: int, latency: float) -> None:
    answers = Answers()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Protocol(answers, latency), "127.0.0.1", port, backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer (non-blocking)")
    options = parser.parse_args()
    try:
        asyncio.run(main(options.port, options.latency))
    except KeyboardInterrupt:
        pass
