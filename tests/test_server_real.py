"""``toolslip serve`` answers with every field the real services send, in their shapes.

The references are real answers of api.openai.com and api.anthropic.com recorded by other projects
(``tests/data/real_api``, see its SOURCE.md). Each recorded *request* is sent to ``serve`` through the
official SDK, and the raw answer is compared with the recorded one: every field the service sent is
there with the same JSON type, ids have the same prefix, alphabet and length, and the SDK's own types
accept it. What ``serve`` cannot know (a system fingerprint, billing) is listed here and in the
side-by-side table of ``docs/providers.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from anthropic.types import Message as AnthropicMessage
from openai.types.chat import ChatCompletion
from openai.types.responses import Response

from toolslip import Message, Request
from toolslip.formats.sse import SSEDecoder
from toolslip.server import serve
from toolslip.testing import FunctionModel, call

DATA = Path(__file__).parent / "data" / "real_api"

# Fields of a real answer that serve leaves out or cannot fill, each with the reason (docs/providers.md).
NOT_SENT = {
    "system_fingerprint",  # an OpenAI backend build: serve says null, as OpenAI does for some models
    "obfuscation",  # random padding OpenAI adds to stream chunks against length side channels
    "billing",  # who pays, for a project key
    "tools[0].parameters.additionalProperties",  # OpenAI rewrites strict tools; serve echoes them as sent
    "tools[0].strict",
}


# Objects whose content is the model's or the caller's, not the protocol's: compared by type only.
OPAQUE = {"input", "metadata"}


def recorded(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return data


def kind(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def differences(real: object, ours: object, path: str = "") -> list[str]:
    """Where ``ours`` lacks a field of ``real`` or holds another JSON type (lists: items of the same type)."""
    if path.lstrip(".") in NOT_SENT:
        return []
    if isinstance(real, dict):
        if not isinstance(ours, dict):
            return [f"{path}: {kind(ours)} instead of an object"]
        if path.rsplit(".", 1)[-1] in OPAQUE:
            return []
        return [d for k, v in real.items() for d in differences(v, ours.get(k, Missing), f"{path}.{k}".lstrip("."))]
    if isinstance(real, list):
        if not isinstance(ours, list):
            return [f"{path}: {kind(ours)} instead of a list"]
        out = []
        for i, item in enumerate(real):
            twin = _twin(item, ours, i)
            out += differences(item, twin, f"{path}[{i}]")
        return out
    if ours is Missing:
        return [f"{path}: missing"]
    if real is not None and kind(real) != kind(ours):
        return [f"{path}: {kind(ours)} instead of {kind(real)}"]
    return []


class _Missing:
    def get(self, key: str, default: object) -> object:
        return self


Missing: Any = _Missing()


def _twin(item: object, ours: list[Any], i: int) -> object:
    """The item of ``ours`` to compare with ``item``: the one of the same ``type``, else the same index."""
    if isinstance(item, dict) and "type" in item:
        same = [o for o in ours if isinstance(o, dict) and o.get("type") == item["type"]]
        return same[0] if same else Missing
    return ours[i] if i < len(ours) else (ours[0] if ours else Missing)


def id_shape(value: str) -> tuple[str, int, str]:
    """``chatcmpl-Bx5k…`` → (prefix, length of the rest, alphabet of the rest)."""
    match = re.fullmatch(r"([a-z]+[_-])(.*)", value)
    assert match, value
    rest = match[2]
    alphabet = "hex" if re.fullmatch(r"[0-9a-f]+", rest) else "base62" if rest.isalnum() else "other"
    return match[1], len(rest), alphabet


def calling_first_tool(arguments: dict[str, Any]) -> FunctionModel:
    """A model that calls the first offered tool with ``arguments``, then answers with text."""

    def answer(request: Request) -> str | Message:
        if request.messages[-1].role == "tool" or not request.tools:
            return "It is 22 °C and sunny."
        return Message.assistant("Let me look that up.", calls=[call(request.tools[0].name, **arguments)])

    return FunctionModel(answer)


@pytest.fixture
async def oai() -> AsyncIterator[openai.AsyncOpenAI]:
    async with serve(calling_first_tool({"location": "Boston"})) as base:
        client = openai.AsyncOpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
        yield client
        await client.close()


@pytest.fixture
async def claude() -> AsyncIterator[anthropic.AsyncAnthropic]:
    async with serve(calling_first_tool({"location": "San Francisco, CA"})) as base:
        client = anthropic.AsyncAnthropic(base_url=base, api_key="unused", max_retries=0)
        yield client
        await client.close()


async def test_chat_completion_has_the_real_fields_and_ids(oai: openai.AsyncOpenAI) -> None:
    real = recorded("openai_chat_tools")
    raw = await oai.chat.completions.with_raw_response.create(**real["request"])
    ours = json.loads(raw.http_response.text)
    assert differences(real["response"], ours) == []
    ChatCompletion.model_validate(ours)
    assert ours["model"] == real["request"]["model"]  # the model asked for
    assert id_shape(ours["id"]) == id_shape(real["response"]["id"])
    real_call, our_call = (r["choices"][0]["message"]["tool_calls"][0] for r in (real["response"], ours))
    assert id_shape(our_call["id"]) == id_shape(real_call["id"])
    assert id_shape(raw.headers["x-request-id"]) == id_shape(real["request_id"])
    usage = ours["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


async def test_chat_stream_chunks_have_the_real_fields(oai: openai.AsyncOpenAI) -> None:
    real = recorded("openai_chat_stream")
    async with oai.chat.completions.with_streaming_response.create(**real["request"]) as raw:
        body = await raw.text()
    ours = [json.loads(e.data) for e in SSEDecoder().feed(body.encode()) if e.data != "[DONE]"]
    theirs = [json.loads(e.data) for e in SSEDecoder().feed(real["events"].encode()) if e.data != "[DONE]"]
    assert body.rstrip().endswith("data: [DONE]") and real["events"].rstrip().endswith("data: [DONE]")
    assert differences(theirs[0], ours[0]) == []  # the role chunk
    assert differences(theirs[1], ours[1]) == []  # a content chunk
    assert differences(theirs[-1], ours[-1]) == []  # the finish chunk
    # no stream_options.include_usage: neither sends a usage chunk
    assert not any("usage" in c for c in theirs) and not any("usage" in c for c in ours)
    assert len({c["id"] for c in ours}) == 1 and id_shape(ours[0]["id"]) == id_shape(theirs[0]["id"])


@pytest.mark.parametrize("name", ["openai_responses_tool_calls", "openai_responses_params"])
async def test_responses_object_has_the_real_fields_and_echoes_the_request(oai: openai.AsyncOpenAI, name: str) -> None:
    real = recorded(name)
    raw = await oai.responses.with_raw_response.create(**real["request"])
    ours = json.loads(raw.http_response.text)
    assert differences(real["response"], ours) == []
    Response.model_validate(ours)
    assert id_shape(ours["id"]) == id_shape(real["response"]["id"])
    for real_item in real["response"]["output"]:
        item = next(o for o in ours["output"] if o["type"] == real_item["type"])
        assert id_shape(item["id"]) == id_shape(real_item["id"])
        if item["type"] == "function_call":
            assert id_shape(item["call_id"]) == id_shape(real_item["call_id"])
    # what the request set comes back as it was sent, as the service echoes it
    for field in ("temperature", "top_p", "max_output_tokens", "tool_choice"):
        assert ours[field] == real["response"][field]
    assert [t["name"] for t in ours["tools"]] == [t["name"] for t in real["response"]["tools"]]


async def test_responses_stream_snapshots_have_the_real_fields(oai: openai.AsyncOpenAI) -> None:
    real = recorded("openai_responses_stream")
    async with oai.responses.with_streaming_response.create(**real["request"]) as raw:
        body = await raw.text()
    ours = [(e.event, json.loads(e.data)) for e in SSEDecoder().feed(body.encode())]
    theirs = [(e.event, json.loads(e.data)) for e in SSEDecoder().feed(real["events"].encode())]
    assert [n for n, _ in ours][:2] == [n for n, _ in theirs][:2] == ["response.created", "response.in_progress"]
    assert ours[-1][0] == theirs[-1][0] == "response.completed"
    for index in (0, 1, 2, -1):
        assert differences(theirs[index][1], ours[index][1]) == [], ours[index][0]
    item_ids = {d["item"]["id"] for n, d in ours if n == "response.output_item.added"}
    delta_ids = {d["item_id"] for n, d in ours if n == "response.output_text.delta"}
    assert delta_ids == item_ids and {id_shape(i) for i in item_ids} == {id_shape(theirs[2][1]["item"]["id"])}


@pytest.mark.filterwarnings("ignore:The model 'claude-sonnet-4-5-20250929' is deprecated:DeprecationWarning")
@pytest.mark.parametrize("name", ["anthropic_tools", "anthropic_message"])
async def test_anthropic_message_has_the_real_fields_and_ids(claude: anthropic.AsyncAnthropic, name: str) -> None:
    real = recorded(name)
    request = {k: v for k, v in real["request"].items() if k != "output_format"}  # a beta the SDK sends apart
    raw = await claude.messages.with_raw_response.create(**request)
    ours = json.loads(raw.http_response.text)
    assert differences(real["response"], ours) == []
    AnthropicMessage.model_validate(ours)
    assert ours["model"] == request["model"]
    assert id_shape(ours["id"]) == id_shape(real["response"]["id"])
    for real_block in real["response"]["content"]:
        if real_block["type"] == "tool_use":
            block = next(b for b in ours["content"] if b["type"] == "tool_use")
            assert id_shape(block["id"]) == id_shape(real_block["id"])
    assert id_shape(raw.headers["request-id"]) == id_shape(real["request_id"])


async def test_anthropic_stream_start_has_the_real_fields(claude: anthropic.AsyncAnthropic) -> None:
    real = recorded("anthropic_tools_stream")
    async with claude.messages.with_streaming_response.create(**real["request"]) as raw:
        body = await raw.text()
    ours = {e.event: json.loads(e.data) for e in SSEDecoder().feed(body.encode())}
    theirs = {e.event: json.loads(e.data) for e in SSEDecoder().feed(real["events"].encode()) if e.event != "ping"}
    assert set(ours) == set(theirs)
    for name in ("message_start", "content_block_start", "message_delta", "message_stop"):
        assert differences(theirs[name], ours[name]) == [], name


@pytest.mark.parametrize("name", ["openai_chat_empty_messages", "openai_chat_max_tokens_0"])
async def test_a_refused_request_gets_the_recorded_body(oai: openai.AsyncOpenAI, name: str) -> None:
    real = recorded(name)  # max_tokens 0 with temperature -0.5 too: the service names max_tokens first
    with pytest.raises(openai.BadRequestError) as refused:
        await oai.post("/chat/completions", cast_to=dict, body=real["request"])
    assert refused.value.status_code == real["status"] == 400
    assert refused.value.body == real["response"]["error"]
