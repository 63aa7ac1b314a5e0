"""Model strings, API keys, the HTTP layer's retries and errors, against real local aiohttp servers."""

from __future__ import annotations

import importlib.util
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from toolslip import ConfigError, Message, ProviderError, Request
from toolslip.providers import default_model, model_choice, register_provider, resolve_model
from toolslip.providers.anthropic import AnthropicModel
from toolslip.providers.http import HttpTransport, error_message, retry_delay
from toolslip.providers.openai import OpenAIChatModel, OpenAIResponsesModel
from toolslip.providers.scripted import ScriptedDemo
from toolslip.testing import FunctionModel, reply

KEY_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
    "TOOLSLIP_MODEL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_VARS:
        monkeypatch.delenv(name, raising=False)


# --- model strings ---------------------------------------------------------------------------------


def test_openai_string_takes_the_key_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    model = resolve_model("openai:gpt-4o-mini")
    assert isinstance(model, OpenAIChatModel)
    assert (model.name, model.model, model.base_url) == (
        "openai:gpt-4o-mini",
        "gpt-4o-mini",
        "https://api.openai.com/v1",
    )


def test_missing_key_names_the_variable_and_never_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        resolve_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-openai")
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY is not set") as caught:
        resolve_model("anthropic:claude-sonnet-4-5")
    assert "sk-secret" not in str(caught.value)


def test_compatible_servers_need_a_base_url_but_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    model = resolve_model("openai:llama3.1:8b@http://127.0.0.1:11434/v1")
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.base_url) == ("llama3.1:8b", "http://127.0.0.1:11434/v1")
    with pytest.raises(ConfigError, match="openai-compatible needs a base URL"):
        resolve_model("openai-compatible:qwen")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1/")
    via_env = resolve_model("openai-compatible:qwen")
    assert isinstance(via_env, OpenAIChatModel) and via_env.base_url == "http://127.0.0.1:8000/v1"


def test_openai_responses_string_is_the_responses_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY is not set"):
        resolve_model("openai-responses:gpt-5-mini")
    with pytest.raises(ConfigError, match="needs a model name after the colon, e.g. openai-responses:gpt-4o-mini"):
        resolve_model("openai-responses")
    local = resolve_model("openai-responses:qwen3@http://127.0.0.1:8000/v1")
    assert isinstance(local, OpenAIResponsesModel) and not isinstance(local, OpenAIChatModel)
    assert (local.name, local.model, local.base_url) == (
        "openai-responses:qwen3",
        "qwen3",
        "http://127.0.0.1:8000/v1",
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    assert resolve_model("openai-responses:gpt-5-mini").base_url == "https://api.openai.com/v1"


def test_at_sign_without_a_url_stays_part_of_the_model_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    model = resolve_model("anthropic:claude-3-5-sonnet@20240620")
    assert isinstance(model, AnthropicModel) and model.model == "claude-3-5-sonnet@20240620"


def test_azure_uses_the_endpoint_and_the_api_key_header(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="AZURE_OPENAI_ENDPOINT"):
        resolve_model("azure:gpt4o-prod")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://acme.openai.azure.com/")
    with pytest.raises(ConfigError, match="AZURE_OPENAI_API_KEY"):
        resolve_model("azure:gpt4o-prod")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    model = resolve_model("azure:gpt4o-prod")
    assert isinstance(model, OpenAIChatModel)
    assert (model.name, model.base_url) == ("azure:gpt4o-prod", "https://acme.openai.azure.com/openai/v1")


@pytest.mark.parametrize("spec", ["gpt-4o", "OpenAI:gpt-4o", "openai gpt-4o", "", "openai:gpt 4o", "4o"])
def test_malformed_strings_list_the_valid_forms(spec: str) -> None:
    with pytest.raises(ConfigError, match="expected one of: openai:MODEL.*anthropic:MODEL.*scripted"):
        resolve_model(spec)


def test_unknown_provider_and_missing_model_name() -> None:
    with pytest.raises(ConfigError, match="unknown model provider 'vertex'"):
        resolve_model("vertex:gemini-pro")
    with pytest.raises(ConfigError, match="needs a model name after the colon, e.g. anthropic:"):
        resolve_model("anthropic")
    for dangling in ("scripted:", "anthropic:", "local:"):  # a colon promises a name: never a silent default
        with pytest.raises(ConfigError, match="ends with a colon"):
            resolve_model(dangling)
    with pytest.raises(ConfigError, match="not int 5"):
        resolve_model(5)  # type: ignore[arg-type]


def _without_llama_cpp(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make this environment look like one without the ``local`` extra (llama-cpp-python)."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))


def test_local_is_a_clear_error_until_a_provider_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_llama_cpp(monkeypatch)
    with pytest.raises(ConfigError, match=r"local model needs llama-cpp-python.*pip install 'toolslip\[local\]'"):
        resolve_model("local")
    seen: list[tuple[str, dict[str, Any]]] = []

    def factory(model: str, **options: Any) -> FunctionModel:
        seen.append((model, options))
        return FunctionModel(lambda request: "hi", name=f"local:{model}")

    register_provider("local", factory)
    try:
        assert resolve_model("local:tiny", threads=2).name == "local:tiny"
        assert seen == [("tiny", {"threads": 2})]
        _, reason = default_model()
        assert reason == "no API key set: the embedded local model"
    finally:
        from toolslip import providers

        providers._registry.pop("local")


def test_scripted_strings() -> None:
    assert resolve_model("scripted").name == "scripted"
    assert resolve_model("scripted:expenses").name == "scripted:expenses"
    with pytest.raises(ConfigError, match="no scripted demo 'chess'; choose one of: expenses, weather"):
        resolve_model("scripted:chess")


def test_default_model_order(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_llama_cpp(monkeypatch)
    model, reason = default_model()
    assert model.name == "scripted" and "SCRIPTED" in reason
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    assert default_model()[0].name == "anthropic:claude-sonnet-4-6"
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    model, reason = default_model()
    assert model.name == "openai:gpt-4o-mini" and "OPENAI_API_KEY is set" in reason and "o-key" not in reason
    monkeypatch.setenv("TOOLSLIP_MODEL", "scripted:weather")
    model, reason = default_model()
    assert (model.name, reason) == (
        "scripted:weather",
        "from TOOLSLIP_MODEL; the answers are SCRIPTED by toolslip's offline demo, not generated by a language model",
    )
    monkeypatch.setenv("TOOLSLIP_MODEL", "openai:gpt-4.1@http://127.0.0.1:9/v1")
    model, reason = default_model("scripted:expenses")
    assert model.name == "scripted:expenses" and reason.startswith("given; the answers are SCRIPTED")
    assert default_model()[1] == "from TOOLSLIP_MODEL"


# --- the HTTP layer against a real local server --------------------------------------------------

Handler = Callable[[web.Request], Any]


@pytest.fixture
async def local_server() -> AsyncIterator[Callable[[Handler], Any]]:
    """Start an aiohttp server answering every POST with ``handler``; yields a starter returning the URL."""
    runners: list[web.AppRunner] = []

    async def start(handler: Handler) -> str:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return f"http://127.0.0.1:{runner.addresses[0][1]}"

    yield start
    for runner in runners:
        await runner.cleanup()


def scripted_answers(*answers: Callable[[], web.Response]) -> tuple[Handler, list[web.Request]]:
    """A handler giving the n-th answer to the n-th request (the last one again after that)."""
    seen: list[web.Request] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request)
        return answers[min(len(seen), len(answers)) - 1]()

    return handler, seen


def too_many() -> web.Response:
    body = '{"error": {"message": "Rate limit reached for gpt-4o-mini", "type": "requests"}}'
    return web.Response(status=429, text=body, content_type="application/json", headers={"retry-after": "0"})


async def test_429_with_retry_after_is_retried_then_succeeds(local_server: Any) -> None:
    handler, seen = scripted_answers(too_many, lambda: web.json_response({"ok": True}))
    http = HttpTransport(service="OpenAI", base_url=await local_server(handler), headers={})
    try:
        assert await http.post_json("/chat/completions", {"model": "m"}) == {"ok": True}
    finally:
        await http.aclose()
    assert len(seen) == 2


async def test_5xx_retries_stop_at_max_retries_and_say_so(local_server: Any) -> None:
    handler, seen = scripted_answers(
        lambda: web.Response(status=503, text="upstream overloaded", headers={"retry-after-ms": "1"})
    )
    http = HttpTransport(service="Anthropic", base_url=await local_server(handler), headers={}, max_retries=3)
    with pytest.raises(ProviderError) as caught:
        await http.post_json("/v1/messages", {})
    await http.aclose()
    assert len(seen) == 4
    assert caught.value.status == 503 and caught.value.retryable
    assert (
        str(caught.value) == "Anthropic answered 503 Service Unavailable: upstream overloaded (gave up after 3 retries)"
    )


async def test_client_errors_are_not_retried_and_show_the_services_message(local_server: Any) -> None:
    body = {"error": {"message": "Incorrect API key provided: sk-live-abcdef.", "type": "invalid_request_error"}}
    handler, seen = scripted_answers(lambda: web.json_response(body, status=401))
    http = HttpTransport(
        service="OpenAI", base_url=await local_server(handler), headers={}, secrets=("sk-live-abcdef",)
    )
    with pytest.raises(ProviderError) as caught:
        await http.post_json("/chat/completions", {})
    await http.aclose()
    assert len(seen) == 1
    assert (
        str(caught.value)
        == "OpenAI answered 401 Unauthorized: Incorrect API key provided: ***. (invalid_request_error)"
    )
    assert caught.value.status == 401 and not caught.value.retryable and "sk-live" not in caught.value.body


async def test_x_should_retry_overrides_the_status(local_server: Any) -> None:
    handler, seen = scripted_answers(lambda: web.Response(status=500, text="no", headers={"x-should-retry": "false"}))
    http = HttpTransport(service="S", base_url=await local_server(handler), headers={})
    with pytest.raises(ProviderError, match="S answered 500 Internal Server Error: no$"):
        await http.post_json("/", {})
    await http.aclose()
    assert len(seen) == 1


async def test_unreachable_server_is_a_provider_error_with_status_0() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    http = HttpTransport(service="OpenAI", base_url=f"http://127.0.0.1:{port}", headers={}, max_retries=0)
    with pytest.raises(
        ProviderError, match=f"could not reach OpenAI: POST http://127.0.0.1:{port}/x failed: Cannot connect"
    ) as caught:
        await http.post_json("/x", {})
    await http.aclose()
    assert caught.value.status == 0 and caught.value.retryable


async def test_a_server_that_never_answers_is_a_timeout_after_the_timeout() -> None:
    """A hung service: it accepts the connection, reads the request and says nothing, or sends its headers
    and then a byte now and then, for ever. The request ends at ``timeout`` (the whole request, not one
    read) with an error that says so, and can be retried."""
    import asyncio
    import time

    handlers: list[asyncio.Task[None]] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await asyncio.sleep(30)

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in range(300):  # a byte every 0.1 s: no single read waits long, the whole answer never ends
            writer.write(b"1\r\n:\r\n")
            await writer.drain()
            await asyncio.sleep(0.1)

    def serving(serve: Any) -> Any:
        async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            handlers.append(asyncio.current_task())  # type: ignore[arg-type]
            try:
                await serve(reader, writer)
            finally:
                writer.close()

        return handler

    for serve, stream in ((hang, False), (trickle, True)):
        server = await asyncio.start_server(serving(serve), "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        http = HttpTransport(
            service="OpenAI", base_url=f"http://127.0.0.1:{port}", headers={}, timeout=0.6, max_retries=0
        )
        started = time.monotonic()
        with pytest.raises(ProviderError, match="the request timed out") as caught:
            if stream:
                async for _ in http.post_stream("/x", {}):
                    pass
            else:
                await http.post_json("/x", {})
        seconds = time.monotonic() - started
        await http.aclose()
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        server.close()
        await server.wait_closed()
        assert 0.5 < seconds < 5, (serve.__name__, seconds)
        assert caught.value.retryable


async def test_a_cancelled_request_stays_cancelled_and_a_timed_out_one_is_retried() -> None:
    """The time limit cancels the request's task and turns that into a timeout; a cancellation from anywhere
    else (Ctrl-C, the caller's own ``wait_for``) must still arrive as one, and a timeout is retried."""
    import asyncio
    import time

    seen: list[float] = []

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(time.monotonic())
        try:
            await reader.readuntil(b"\r\n\r\n")
            await asyncio.sleep(30)
        finally:
            writer.close()

    server = await asyncio.start_server(hang, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    patient = HttpTransport(service="OpenAI", base_url=base, headers={}, timeout=30, max_retries=0)
    with pytest.raises(TimeoutError):  # asyncio's own timeout, around ours: not a ProviderError
        await asyncio.wait_for(patient.post_json("/x", {}), 0.3)
    request = asyncio.create_task(patient.post_json("/x", {}))
    await asyncio.sleep(0.2)
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    await patient.aclose()

    seen.clear()
    hasty = HttpTransport(service="OpenAI", base_url=base, headers={}, timeout=0.4, max_retries=1)
    with pytest.raises(ProviderError, match=r"the request timed out \(gave up after 1 retry\)"):
        await hasty.post_json("/x", {})
    await hasty.aclose()
    server.close()
    assert len(seen) == 2 and seen[1] - seen[0] > 0.4  # a second attempt, after the first one's time ran out


async def test_a_non_json_success_body_is_a_provider_error(local_server: Any) -> None:
    handler, _ = scripted_answers(lambda: web.Response(status=200, text="<html>proxy login</html>"))
    http = HttpTransport(service="OpenAI", base_url=await local_server(handler), headers={})
    with pytest.raises(ProviderError, match="answered 200 with a body that is not JSON"):
        await http.post_json("/", {})
    await http.aclose()


def test_retry_delays_follow_the_headers_and_back_off() -> None:
    assert retry_delay(0, {"retry-after-ms": "1500"}, 429) == 1.5
    assert retry_delay(0, {"retry-after": "7"}, 503) == 7.0
    assert retry_delay(0, {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 429) == 0.0  # a date in the past
    assert retry_delay(0, {"retry-after": "3600"}, 429) is None  # longer than two minutes: give up now
    assert retry_delay(0, {}, 400) is None
    assert retry_delay(0, {"x-should-retry": "true"}, 400) is not None
    first, fourth, tenth = (retry_delay(n, {}, 500) for n in (0, 3, 9))
    assert first is not None and 0.375 <= first <= 0.5
    assert fourth is not None and 3.0 <= fourth <= 4.0
    assert tenth is not None and 6.0 <= tenth <= 8.0


def test_error_message_reads_both_services_shapes() -> None:
    assert error_message('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}') == (
        "Overloaded (overloaded_error)"
    )
    assert error_message('{"error": "model not found"}') == "model not found"
    assert error_message("") == "(empty body)"


async def test_scripted_demo_is_stateless_and_reads_the_results() -> None:
    model = ScriptedDemo("weather")
    first = await model.complete(Request(model="", messages=(Message.user("北京冷吗?"),)))
    (call,) = first.message.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "北京", "unit": "celsius"})
    from toolslip.messages import ToolResult

    result = ToolResult(call_id=call.id, content='{"city": "北京", "temp": 19, "unit": "celsius", "desc": "多云"}')
    transcript = (Message.user("北京冷吗?"), first.message, Message.tool([result]))
    answer = await model.complete(Request(model="", messages=transcript))
    assert answer.stop_reason == "end_turn" and "19 °C" in answer.message.text
    again = await model.complete(Request(model="", messages=(*transcript, reply("ok"), Message.user("again?"))))
    assert again.message.tool_calls[0].name == "get_weather"


async def test_transports_send_the_headers_the_official_sdks_send(local_server: Any) -> None:
    chat = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
    }
    messages = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [{"type": "text", "text": "hi"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    handler, seen = scripted_answers(lambda: web.json_response(chat), lambda: web.json_response(messages))
    url = await local_server(handler)
    request = Request(model="", messages=(Message.user("hi"),))
    openai_model = OpenAIChatModel("gpt-4o-mini", base_url=f"{url}/v1", api_key="sk-abc", organization="org-1")
    anthropic_model = AnthropicModel("claude-x", base_url=url, api_key="ant-key")
    assert (await openai_model.complete(request)).message.text == "hi"
    assert (await anthropic_model.complete(request)).message.text == "hi"
    await openai_model.aclose()
    await anthropic_model.aclose()
    sent_openai, sent_anthropic = seen
    assert (sent_openai.method, sent_openai.path) == ("POST", "/v1/chat/completions")
    assert sent_openai.headers["Authorization"] == "Bearer sk-abc"
    assert sent_openai.headers["Content-Type"] == "application/json"
    assert sent_openai.headers["Accept"] == "application/json"
    assert sent_openai.headers["OpenAI-Organization"] == "org-1"
    assert sent_openai.headers["User-Agent"].startswith("toolslip/")
    assert sent_anthropic.path == "/v1/messages" and "Authorization" not in sent_anthropic.headers
    assert (sent_anthropic.headers["x-api-key"], sent_anthropic.headers["anthropic-version"]) == (
        "ant-key",
        "2023-06-01",
    )


async def test_a_key_echoed_by_the_service_is_masked(local_server: Any) -> None:
    body = {"error": {"message": "Incorrect API key provided: sk-proj-SECRET123.", "type": "invalid_request_error"}}
    handler, _ = scripted_answers(lambda: web.json_response(body, status=401))
    model = OpenAIChatModel("gpt-4o-mini", base_url=f"{await local_server(handler)}/v1", api_key="sk-proj-SECRET123")
    with pytest.raises(ProviderError) as caught:
        await model.complete(Request(model="", messages=(Message.user("hi"),)))
    await model.aclose()
    assert "SECRET123" not in str(caught.value) and "SECRET123" not in caught.value.body
    assert "Incorrect API key provided: ***." in str(caught.value)


def test_with_only_the_smaller_local_model_installed_the_default_is_that_model_and_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a 0.5B install from before the default became the 1.5B model: it fell to the scripted demo, "no local
    # model installed", with a working model on the machine
    from toolslip.providers.local_weights import CATALOGUE

    monkeypatch.setenv("TOOLSLIP_CACHE", str(tmp_path))  # nothing assembled yet
    real = importlib.util.find_spec
    missing = CATALOGUE["qwen2.5-coder-1.5b"].parts[0].module
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == missing else real(name, *a))
    if real("llama_cpp") is None or real(CATALOGUE["qwen2.5-coder-0.5b"].parts[0].module) is None:
        pytest.skip("needs toolslip[local-0.5b]")
    assert model_choice() == (
        "local:qwen2.5-coder-0.5b",
        "no API key set: the embedded local model; the default local model is not installed: "
        "pip install 'toolslip[local]'",
    )
