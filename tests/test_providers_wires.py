"""The ``gemini:``, ``bedrock:`` and ``ollama:`` transports: model strings, credentials, signatures, errors
and streams, against ``toolslip serve`` and against recorded answers of the real services over loopback."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import gzip
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from toolslip import Agent, ConfigError, Message, ProviderError, Request
from toolslip.cli.files import load_tools_file
from toolslip.core.model import Model
from toolslip.core.streaming import CallComplete, ResponseDone, StreamEvent, TextChunk
from toolslip.providers import resolve_model
from toolslip.providers.bedrock import BedrockModel
from toolslip.providers.gemini import GeminiModel
from toolslip.providers.ollama import OllamaModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.server import serve

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "real_traffic" / "google_aws_ollama"
QUESTION = "What's the weather in Beijing?"
ANSWER = "It is 28 °C and cloudy in 北京: no coat needed."
MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
ENV = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_DEFAULT_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "OLLAMA_HOST",
    "OLLAMA_API_KEY",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    # botocore's chain must find nothing of this machine's, and never ask the instance-metadata service
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", raising=False)
    monkeypatch.delenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", raising=False)


# --- model strings and credentials ---------------------------------------------------------------------


def test_gemini_takes_either_google_variable_and_names_one_when_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="^GEMINI_API_KEY is not set: export your Gemini API key as GEMINI_API_KEY"):
        resolve_model("gemini:gemini-2.5-flash")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-secret-gemini")
    model = resolve_model("gemini:gemini-2.5-flash")
    assert isinstance(model, GeminiModel) and model.base_url == "https://generativelanguage.googleapis.com"
    assert "AIza" not in repr(model) and "AIza" not in model.name
    monkeypatch.setenv("GOOGLE_API_KEY", "AIza-other")  # google-genai's order: GOOGLE_API_KEY wins
    assert resolve_model("gemini:gemini-2.5-flash")._http.headers["x-goog-api-key"] == "AIza-other"  # type: ignore[attr-defined]
    assert isinstance(resolve_model("gemini:gemini-2.5-flash@http://127.0.0.1:9/"), GeminiModel)


def test_bedrock_names_the_region_variable_then_the_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="^no AWS region is set for Amazon Bedrock: export AWS_REGION"):
        resolve_model(f"bedrock:{MODEL_ID}")
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    with pytest.raises(ConfigError, match="^no AWS credentials found for Amazon Bedrock: set AWS_BEARER_TOKEN_BEDROCK"):
        resolve_model(f"bedrock:{MODEL_ID}")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "ABSK-secret-token")
    model = resolve_model(f"bedrock:{MODEL_ID}")
    assert isinstance(model, BedrockModel) and model.base_url == "https://bedrock-runtime.eu-west-3.amazonaws.com"
    assert "ABSK" not in repr(model)
    monkeypatch.delenv("AWS_BEARER_TOKEN_BEDROCK")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
    assert isinstance(resolve_model(f"bedrock:{MODEL_ID}@http://127.0.0.1:9"), BedrockModel)


def test_bedrock_reads_the_region_from_the_aws_profile(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(
        "[profile work]\nregion = ap-northeast-1\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = x\n"
    )
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_PROFILE", "work")
    model = resolve_model(f"bedrock:{MODEL_ID}")
    assert model.base_url == "https://bedrock-runtime.ap-northeast-1.amazonaws.com"  # type: ignore[attr-defined]


def test_ollama_reads_ollama_host_as_the_official_client_does(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model("ollama:llama3.2").base_url == "http://127.0.0.1:11434"  # type: ignore[attr-defined]
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:8080")
    assert resolve_model("ollama:qwen3:8b").base_url == "http://gpu-box:8080"  # type: ignore[attr-defined]
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box")
    assert resolve_model("ollama:qwen3:8b").base_url == "http://gpu-box:11434"  # type: ignore[attr-defined]
    model = resolve_model("ollama:qwen3:8b@http://10.0.0.2:11434")
    assert (model.name, model.model, model.base_url) == ("ollama:qwen3:8b", "qwen3:8b", "http://10.0.0.2:11434")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="ollama needs a model name after the colon"):
        resolve_model("ollama")


# --- SigV4: botocore signs exactly the bytes sent -----------------------------------------------------

CREDENTIALS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "session-token")


def verify_sigv4(request: web.Request, body: bytes) -> str:
    """Recompute the request's signature from what arrived; the problem, or '' when it matches."""
    authorization = request.headers.get("Authorization", "")
    signed = authorization.split("SignedHeaders=", 1)[1].split(",", 1)[0].split(";")
    url = f"http://{request.host}{request.raw_path}"
    copy = AWSRequest(method="POST", url=url, data=body, headers={h: request.headers[h] for h in signed if h != "host"})
    copy.context["timestamp"] = request.headers["X-Amz-Date"]
    signer = SigV4Auth(CREDENTIALS.get_frozen_credentials(), "bedrock", "us-west-2")
    expected = signer.signature(signer.string_to_sign(copy, signer.canonical_request(copy)), copy)
    return "" if authorization.endswith(f"Signature={expected}") else f"signature mismatch: {authorization}"


async def test_sigv4_signs_the_bytes_and_the_encoded_path_that_are_sent() -> None:
    seen: list[str] = []

    async def bedrock_service(request: web.Request) -> web.Response:
        body = await request.read()
        seen.append(request.raw_path)
        problem = verify_sigv4(request, body)
        if problem:
            return web.json_response({"message": problem}, status=403)
        assert request.headers["X-Amz-Security-Token"] == "session-token"
        return web.json_response(
            {
                "output": {"message": {"role": "assistant", "content": [{"text": "signed"}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 3, "outputTokens": 1, "totalTokens": 4},
                "metrics": {"latencyMs": 1},
            }
        )

    async with one_route(bedrock_service) as url:
        model = BedrockModel(MODEL_ID, region="us-west-2", base_url=url, credentials=CREDENTIALS)
        response = await model.complete(Request(model="", messages=(Message.user("hi"),)))
        await model.aclose()
    assert response.message.text == "signed"
    assert seen == ["/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"]


# --- each transport runs the weather example against toolslip serve -----------------------------------


def transports(base: str) -> dict[str, Model]:
    return {
        "gemini": GeminiModel("gemini-2.5-flash", base_url=base, api_key="AIza-test", max_retries=0),
        "bedrock": BedrockModel(MODEL_ID, region="us-east-1", base_url=base, credentials=CREDENTIALS, max_retries=0),
        "ollama": OllamaModel("llama3.2", base_url=base, max_retries=0),
    }


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", ["gemini", "bedrock", "ollama"])
async def test_the_loop_runs_the_weather_example_through_each_transport(wire: str, streamed: bool) -> None:
    tools = load_tools_file(str(ROOT / "examples" / "weather.py"))
    async with serve(ScriptedDemo("weather")) as base:
        model = transports(base)[wire]
        result = await Agent(model=model, tools=tools, stream=streamed).arun(QUESTION)
        await model.aclose()  # type: ignore[attr-defined]
    assert result.output == ANSWER and result.tool_calls == 1 and result.stop_reason == "completed"
    assert result.usage.input_tokens > 0 and result.usage.output_tokens > 0


async def test_the_cli_runs_the_weather_example_on_each_wire(tmp_path: Path) -> None:
    async with serve(ScriptedDemo("weather")) as base:
        runs = [
            run_cli(["run", "examples/weather.py", QUESTION, "--no-journal", "--model", spec], tmp_path)
            for spec in (f"gemini:gemini-2.5-flash@{base}", f"bedrock:{MODEL_ID}@{base}", f"ollama:llama3.2@{base}")
        ]
        results = await asyncio.gather(*runs)
    for code, out, err in results:
        assert code == 0, err
        assert ANSWER in out


# --- error answers: one sentence that names the field, never a traceback -----------------------------


def recorded_errors() -> list[dict[str, Any]]:
    return [e for e in json.loads((CORPUS / "errors.json").read_text()) if e["status"] < 429]


@pytest.mark.parametrize("error", recorded_errors(), ids=lambda e: f"{e['format']}-{e['status']}-{e['source']}")
async def test_a_recorded_error_answer_is_one_sentence_with_the_services_words(error: dict[str, Any]) -> None:
    async def service(request: web.Request) -> web.Response:
        headers = {k: v for k, v in error["headers"].items() if k != "content-type"}
        return web.json_response(error["body"], status=error["status"], headers=headers)

    async with one_route(service) as url:
        model = transports(url)[error["format"]]
        with pytest.raises(ProviderError) as caught:
            await model.complete(Request(model="", messages=(Message.user("hi"),)))
        await model.aclose()  # type: ignore[attr-defined]
    said = str(caught.value)
    body = error["body"]
    words = body.get("error") if isinstance(body.get("error"), str) else body.get("message") or body["error"]["message"]
    assert "\n" not in said and words in said and caught.value.status == error["status"]
    if error["format"] == "gemini":
        assert f"({body['error']['status']})" in said
    if error["format"] == "bedrock":
        assert said.endswith(f"({error['headers']['x-amzn-errortype'].split(':')[0]})")


@pytest.mark.parametrize(
    ("wire", "said"),
    [
        (
            "gemini",
            "Gemini-compatible server at {base} answered 400 Bad Request: * GenerateContentRequest.contents[0].parts: "
            "contents.parts must not be empty.; contents[0].parts: * GenerateContentRequest.contents[0].parts: "
            "contents.parts must not be empty. (INVALID_ARGUMENT)",
        ),
        (
            "bedrock",
            "Amazon Bedrock-compatible server at {base} answered 400 Bad Request: The content field in the Message "
            "object at messages.0 is empty. Add a ContentBlock object to the content field and try again. "
            "(ValidationException)",
        ),
    ],
)
async def test_serves_refusal_names_the_field_through_each_transport(wire: str, said: str) -> None:
    bad = Request(model="", messages=(Message(role="user", parts=()),))  # a message with nothing in it
    async with serve(ScriptedDemo("weather")) as base:
        model = transports(base)[wire]
        with pytest.raises(ProviderError) as caught:
            await model.complete(bad)
        await model.aclose()  # type: ignore[attr-defined]
    assert caught.value.status == 400 and str(caught.value) == "the " + said.format(base=base)


async def test_the_cli_says_a_bedrock_validation_exception_in_one_line(tmp_path: Path) -> None:
    error = next(e for e in recorded_errors() if e["format"] == "bedrock" and e["status"] == 400)

    async def service(request: web.Request) -> web.Response:
        headers = {"x-amzn-ErrorType": error["headers"]["x-amzn-errortype"]}
        return web.json_response(error["body"], status=400, headers=headers)

    async with one_route(service) as url:
        code, _, err = await run_cli(
            ["run", "examples/weather.py", QUESTION, "--no-journal", "--model", f"bedrock:does-not-exist@{url}"],
            tmp_path,
            AWS_BEARER_TOKEN_BEDROCK="ABSK-secret",
            AWS_REGION="us-east-1",
        )
    assert code == 1 and "Traceback" not in err and "ABSK-secret" not in err
    assert "The provided model identifier is invalid. (ValidationException)" in err
    assert len(err.strip().splitlines()) == 1, err


# --- recorded streams of the real services through each transport -----------------------------------


def recorded_streams(kind: str) -> list[dict[str, Any]]:
    with gzip.open(CORPUS / "streams.jsonl.gz", "rt") as lines:
        return [row for line in lines if (row := json.loads(line))["stream_kind"] == kind and row["request"]]


def stream_of(raw: bytes, media: str) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    async def answer(request: web.Request) -> web.StreamResponse:
        out = web.StreamResponse(headers={"Content-Type": media})
        await out.prepare(request)
        for i in range(0, len(raw), 37):  # cut anywhere: mid-frame, mid-line, mid-character
            await out.write(raw[i : i + 37])
        await out.write_eof()
        return out

    return answer


@pytest.mark.parametrize(
    ("kind", "wire", "media"),
    [
        ("sse", "gemini", "text/event-stream"),
        ("eventstream", "bedrock", "application/vnd.amazon.eventstream"),
        ("ndjson", "ollama", "application/x-ndjson"),
    ],
)
async def test_recorded_streams_read_to_the_same_text_and_calls_as_their_deltas(
    kind: str, wire: str, media: str
) -> None:
    rows = recorded_streams(kind)
    assert rows
    calls = texts = 0
    for row in rows:
        raw = base64.b64decode(row["stream_b64"]) if kind == "eventstream" else row["stream_text"].encode()
        async with one_route(stream_of(raw, media)) as url:
            model = transports(url)[wire]
            events: list[StreamEvent] = [e async for e in model.stream(Request(model="", messages=()))]  # type: ignore[attr-defined]
            await model.aclose()  # type: ignore[attr-defined]
        done = events[-1]
        assert isinstance(done, ResponseDone), row["id"]
        assert "".join(e.text for e in events if isinstance(e, TextChunk)) == done.response.message.text, row["id"]
        assert [e.call for e in events if isinstance(e, CallComplete)] == list(done.response.message.tool_calls)
        calls += len(done.response.message.tool_calls)
        texts += bool(done.response.message.text)
    # the six recorded Ollama streams hold text only; Gemini's and Bedrock's hold calls too
    assert texts > 0 and (calls > 0) == (wire != "ollama")


# --- helpers ------------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def one_route(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_post("/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def run_cli(argv: list[str], home: Path, **env: str) -> tuple[int, str, str]:
    keys = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "us-east-1"}
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "toolslip.cli",
        *argv,
        cwd=ROOT,
        env={**os.environ, "TOOLSLIP_HOME": str(home), **keys, "GEMINI_API_KEY": "AIza-test", **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


MALFORMED = {  # a 200 answer each service would never send, and the field its format names
    "gemini": ({"candidates": [{"content": {"parts": "oops", "role": "model"}}]}, "candidates[0].content.parts"),
    "bedrock": (
        {"output": {"message": {"role": "assistant", "content": [{"toolUse": {"name": "x", "input": {}}}]}}},
        "output.message.content[0].toolUse.toolUseId",
    ),
    "ollama": ({"model": "m", "message": {"role": "assistant", "content": 5}, "done": True}, "message.content"),
}


@pytest.mark.parametrize("wire", sorted(MALFORMED))
async def test_a_malformed_answer_names_its_field_in_one_line_through_the_cli(wire: str, tmp_path: Path) -> None:
    body, field = MALFORMED[wire]

    async def service(request: web.Request) -> web.Response:
        return web.json_response(body)

    async with one_route(service) as url:
        spec = {"gemini": "gemini:g", "bedrock": "bedrock:b", "ollama": "ollama:o"}[wire]
        code, _, err = await run_cli(
            ["run", "examples/weather.py", QUESTION, "--no-journal", "--no-stream", "--model", f"{spec}@{url}"],
            tmp_path,
            AWS_BEARER_TOKEN_BEDROCK="ABSK-x",
        )
    assert code == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert field in err
