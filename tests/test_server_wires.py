"""``toolslip serve`` on the Gemini, Bedrock Converse and Ollama wires, with the official SDKs as clients.

The server is the real command, ``toolslip serve --model scripted:weather``, in a subprocess; the clients
are ``google-genai``, ``boto3`` (``bedrock-runtime`` with ``endpoint_url``) and ``ollama``, each running
the weather tool loop (call, result, answer) streamed and not, over loopback. The scripted answer is built
from the tool result the client sent back, so a result lost or misrouted on the way changes the answer.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import ollama
import pytest
from botocore.eventstream import EventStreamBuffer
from botocore.exceptions import ClientError
from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from conftest import converse_client
from toolslip.server import eventstream

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "real_traffic" / "google_aws_ollama"
QUESTION = "What's the weather in Beijing?"
ANSWER = "It is 28 °C and cloudy in 北京: no coat needed."
WEATHER_RESULT = {"city": "北京", "temp": 28, "unit": "celsius", "desc": "cloudy"}
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
}


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    """The URL of a real ``toolslip serve --model scripted:weather`` on a free port."""
    command = [sys.executable, "-m", "toolslip.cli", "serve", "--model", "scripted:weather", "--port", "0", "--quiet"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as child:
        assert child.stdout is not None
        said = []
        try:
            for line in child.stdout:  # the banner, then nothing more (--quiet)
                said.append(line)
                if line.startswith("toolslip serve: "):
                    yield line.split(" at ", 1)[1].split()[0]
                    break
            else:
                pytest.fail(f"toolslip serve did not start: {''.join(said)}")
        finally:
            child.terminate()
            child.wait(10)


# --- google-genai --------------------------------------------------------------------------------------


@pytest.fixture
def gemini(base: str) -> Iterator[genai.Client]:
    with genai.Client(api_key="not-needed", http_options=types.HttpOptions(base_url=base)) as client:
        yield client


GEMINI_CONFIG = types.GenerateContentConfig(
    tools=[
        types.Tool(
            function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather", description="Current weather of a city.", parameters_json_schema=SCHEMA
                )
            ]
        )
    ],
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


# The sync client: google-genai's async one subclasses aiohttp's ClientSession, which aiohttp deprecates.
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_google_genai_runs_the_tool_loop(gemini: genai.Client, streamed: bool) -> None:
    client = gemini
    contents: list[Any] = [types.Content(role="user", parts=[types.Part(text=QUESTION)])]
    counts: list[int] = []

    def ask() -> tuple[types.Content, list[types.FunctionCall], str, types.GenerateContentResponse]:
        if not streamed:
            reply = client.models.generate_content(model="gemini-2.5-flash", contents=contents, config=GEMINI_CONFIG)
            assert reply.candidates and reply.candidates[0].content
            return reply.candidates[0].content, reply.function_calls or [], reply.text or "", reply
        chunks = list(
            client.models.generate_content_stream(model="gemini-2.5-flash", contents=contents, config=GEMINI_CONFIG)
        )
        counts.append(len(chunks))
        parts = [
            p for c in chunks if c.candidates and c.candidates[0].content for p in c.candidates[0].content.parts or ()
        ]
        calls = [call for c in chunks for call in c.function_calls or ()]
        return types.Content(role="model", parts=parts), calls, "".join(c.text or "" for c in chunks), chunks[-1]

    said, calls, _, first = ask()
    assert [(c.name, c.args) for c in calls] == [("get_weather", {"city": "北京", "unit": "celsius"})]
    assert first.model_version == "gemini-2.5-flash" and first.response_id and len(first.response_id) == 23
    assert first.candidates and first.candidates[0].finish_reason == types.FinishReason.STOP
    result = types.Part.from_function_response(name="get_weather", response=WEATHER_RESULT)
    result.function_response.id = calls[0].id  # type: ignore[union-attr]  # Gemini 3 pairs by id when there is one
    contents += [said, types.Content(role="user", parts=[result])]
    _, calls, text, last = ask()
    assert calls == [] and text == ANSWER
    assert counts == ([] if not streamed else [1, 3])  # a call comes whole; text in pieces of 16 characters
    assert last.usage_metadata and last.usage_metadata.prompt_token_count and last.usage_metadata.total_token_count


def test_google_genai_gets_invalid_argument_naming_the_field(gemini: genai.Client) -> None:
    client = gemini
    with pytest.raises(genai_errors.ClientError) as caught:
        client.models.generate_content(
            model="gemini-2.5-flash", contents=[{"role": "wizard", "parts": [{"text": "hi"}]}]
        )
    assert caught.value.code == 400 and caught.value.status == "INVALID_ARGUMENT"
    assert caught.value.message == "Please use a valid role: user, model."  # recorded from Vertex AI
    violation = caught.value.details["error"]["details"][0]["fieldViolations"][0]
    assert violation["field"] == "contents[0].role"


# --- boto3 bedrock-runtime ------------------------------------------------------------------------------


@pytest.fixture
def bedrock(base: str) -> Iterator[Any]:
    client = converse_client(base)
    yield client
    client.close()


BEDROCK_TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Current weather of a city.",
                "inputSchema": {"json": SCHEMA},
            }
        }
    ]
}
MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def _converse_stream(client: Any, messages: list[Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """The assistant message a ConverseStream built, its stop reason and its metadata event."""
    blocks: dict[int, dict[str, Any]] = {}
    stop, metadata = "", {}
    for event in client.converse_stream(modelId=MODEL_ID, messages=messages, toolConfig=BEDROCK_TOOLS)["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            delta = event["contentBlockDelta"]
            block = blocks.setdefault(delta["contentBlockIndex"], {"text": ""})
            if "text" in delta["delta"]:
                block["text"] += delta["delta"]["text"]
            else:
                block["toolUse"]["input"] += delta["delta"]["toolUse"]["input"]
        elif "messageStop" in event:
            stop = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            metadata = event["metadata"]
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"])
    return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}, stop, metadata


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_boto3_converse_runs_the_tool_loop(bedrock: Any, streamed: bool) -> None:
    client = bedrock
    messages: list[Any] = [{"role": "user", "content": [{"text": QUESTION}]}]

    def ask() -> tuple[dict[str, Any], str, dict[str, Any]]:
        if streamed:
            return _converse_stream(client, messages)
        reply = client.converse(modelId=MODEL_ID, messages=messages, toolConfig=BEDROCK_TOOLS)
        return reply["output"]["message"], reply["stopReason"], reply

    said, stop, first = ask()
    assert stop == "tool_use"
    use = said["content"][-1]["toolUse"]
    assert (use["name"], use["input"]) == ("get_weather", {"city": "北京", "unit": "celsius"})
    assert use["toolUseId"].startswith("tooluse_") and len(use["toolUseId"]) == len("tooluse_") + 22
    assert first["usage"]["inputTokens"] > 0 and first["usage"]["totalTokens"] > first["usage"]["inputTokens"]
    assert isinstance(first["metrics"]["latencyMs"], int)
    result = {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"json": WEATHER_RESULT}]}}
    messages += [said, {"role": "user", "content": [result]}]
    said, stop, _ = ask()
    assert stop == "end_turn" and said["content"] == [{"text": ANSWER}]


def test_boto3_gets_a_validation_exception_naming_the_field(bedrock: Any) -> None:
    client = bedrock
    with pytest.raises(ClientError) as caught:
        client.converse(modelId=MODEL_ID, messages=[{"role": "wizard", "content": [{"text": "hi"}]}])
    error = caught.value.response["Error"]
    assert error["Code"] == "ValidationException" and "'wizard' at 'messages.1.member.role'" in error["Message"]
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


# --- ollama --------------------------------------------------------------------------------------------

OLLAMA_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Current weather.", "parameters": SCHEMA}}
]


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_ollama_client_runs_the_tool_loop(base: str, streamed: bool) -> None:
    async with ollama.AsyncClient(host=base) as client:
        await ollama_loop(client, streamed)


async def ollama_loop(client: ollama.AsyncClient, streamed: bool) -> None:
    messages: list[Any] = [{"role": "user", "content": QUESTION}]

    async def ask() -> tuple[ollama.Message, ollama.ChatResponse]:
        if not streamed:
            reply = await client.chat(model="llama3.2", messages=messages, tools=OLLAMA_TOOLS)
            return reply.message, reply
        chunks = [
            c async for c in await client.chat(model="llama3.2", messages=messages, tools=OLLAMA_TOOLS, stream=True)
        ]
        assert chunks[-1].done and not any(c.done for c in chunks[:-1])
        calls = [call for c in chunks for call in c.message.tool_calls or ()]
        text = "".join(c.message.content or "" for c in chunks)
        return ollama.Message(role="assistant", content=text, tool_calls=calls or None), chunks[-1]

    said, first = await ask()
    assert said.tool_calls and [(c.function.name, dict(c.function.arguments)) for c in said.tool_calls] == [
        ("get_weather", {"city": "北京", "unit": "celsius"})
    ]
    assert first.model == "llama3.2" and first.done_reason == "stop" and (first.prompt_eval_count or 0) > 0
    messages += [said, {"role": "tool", "tool_name": "get_weather", "content": json.dumps(WEATHER_RESULT)}]
    said, last = await ask()
    assert said.content == ANSWER and not said.tool_calls and (last.eval_count or 0) > 0


async def test_ollama_client_gets_the_error_naming_the_field(base: str) -> None:
    async with ollama.AsyncClient(host=base) as client:
        with pytest.raises(ollama.ResponseError) as caught:
            await client.chat(model="llama3.2", messages=[{"role": "wizard", "content": "hi"}])
    assert caught.value.status_code == 400 and caught.value.error.startswith("messages[0].role: unknown role 'wizard'")


# --- the event-stream framing, against botocore's parser and AWS's own bytes ----------------------------


def test_event_stream_frames_read_back_with_botocore() -> None:
    payload = json.dumps({"contentBlockIndex": 0, "delta": {"text": "北京 ☁"}}).encode()
    frames = eventstream.event("contentBlockDelta", payload) + eventstream.exception("throttlingException", b"{}")
    buffer = EventStreamBuffer()
    buffer.add_data(frames[:7])  # a frame cut anywhere waits for the rest
    assert list(buffer) == []
    buffer.add_data(frames[7:])
    first, second = list(buffer)
    assert first.headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert first.payload == payload
    assert second.headers[":message-type"] == "exception" and second.headers[":exception-type"] == "throttlingException"


def recorded_bedrock_streams() -> list[bytes]:
    with gzip.open(CORPUS / "streams.jsonl.gz", "rt") as lines:
        rows = [json.loads(line) for line in lines]
    return [base64.b64decode(r["stream_b64"]) for r in rows if r["stream_kind"] == "eventstream"]


def test_event_stream_frames_equal_the_bytes_bedrock_sent() -> None:
    """Every message of 38 ConverseStream answers recorded from AWS, re-framed from its headers and payload,
    is byte for byte what AWS sent (lengths, header encoding, both CRCs)."""
    streams = recorded_bedrock_streams()
    assert len(streams) >= 30
    count = 0
    for raw in streams:
        buffer = EventStreamBuffer()
        buffer.add_data(raw)
        offset = 0
        for message in buffer:
            length = message.prelude.total_length
            assert eventstream.encode_message(message.headers, message.payload) == raw[offset : offset + length]
            offset += length
            count += 1
        assert offset == len(raw)
    assert count > 500


# --- raw HTTP: what no SDK above asks for --------------------------------------------------------------


async def test_gemini_stream_without_alt_sse_is_one_array_and_refusals_answer_in_kind() -> None:
    import aiohttp

    from toolslip.providers.scripted import ScriptedDemo
    from toolslip.server import serve

    body = {"contents": [{"role": "user", "parts": [{"text": QUESTION}]}], "tools": [{"functionDeclarations": []}]}
    async with serve(ScriptedDemo("weather")) as url, aiohttp.ClientSession() as http:
        async with http.post(f"{url}/v1beta/models/gemini-2.5-flash:streamGenerateContent", json=body) as reply:
            chunks = await reply.json()
        async with http.post(f"{url}/v1beta/models/gemini-2.5-flash:countTokens", json=body) as google:
            google_error = (google.status, await google.json())
        async with http.post(f"{url}/model/m/invoke", json={}) as aws:
            aws_error = (aws.status, aws.headers.get("x-amzn-ErrorType", ""), await aws.json())
        async with http.post(f"{url}/api/generate", json={}) as local:
            ollama_error = (local.status, await local.json())
        searching = {**body, "tools": [{"googleSearch": {}}]}
        async with http.post(f"{url}/v1beta/models/gemini-2.5-flash:generateContent", json=searching) as hosted:
            hosted_error = (hosted.status, await hosted.json())
    assert isinstance(chunks, list) and chunks[-1]["candidates"][0]["finishReason"] == "STOP"
    assert all(c["modelVersion"] == "gemini-2.5-flash" and len(c["responseId"]) == 23 for c in chunks)
    assert google_error[0] == 404 and google_error[1]["error"]["status"] == "NOT_FOUND"
    assert aws_error[0] == 404 and aws_error[1].startswith("ResourceNotFoundException:") and "message" in aws_error[2]
    assert ollama_error[0] == 404 and isinstance(ollama_error[1]["error"], str)
    assert hosted_error[0] == 400 and "googleSearch would run on the provider's" in hosted_error[1]["error"]["message"]
