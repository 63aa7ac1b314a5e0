"""The Responses API stream, both ways: the writer's events are the SDK's event types, and whatever the
writer streams, cut anywhere, the accumulator reads back as the non-streaming parse of the same response.

The recorded streams themselves (``fixtures/streams/openai_responses_*.sse``) are also split every way
in ``test_formats_streams.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openai.types.responses import ResponseStreamEvent

from toolslip.errors import ProviderError
from toolslip.formats import openai_responses
from toolslip.formats.openai_responses_stream import Accumulator, response_to_events
from toolslip.formats.sse import SSEDecoder, encode
from toolslip.messages import Message, ModelResponse, ProviderPart, Reasoning, Text, ToolCall, Usage
from toolslip.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk

STREAMS = Path(__file__).parent / "fixtures" / "streams"
SDK_EVENT: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ResponseStreamEvent)


def recorded(name: str) -> tuple[bytes, ModelResponse]:
    wire = json.loads((STREAMS / f"{name}.json").read_text())
    return (STREAMS / f"{name}.sse").read_bytes(), openai_responses.response_from_wire(wire)


def run(pieces: list[bytes]) -> tuple[list[StreamEvent], ModelResponse]:
    accumulator, decoder = Accumulator(), SSEDecoder()
    events = [e for piece in pieces for sse in decoder.feed(piece) for e in accumulator.feed(sse)]
    return events, accumulator.finish()


def written(response: ModelResponse, size: int = 16) -> bytes:
    events = response_to_events(response, chunk_size=size)
    return b"".join(encode(json.dumps(data, ensure_ascii=False), name) for name, data in events)


def non_streaming(response: ModelResponse) -> ModelResponse:
    """What a client of the non-streaming endpoint reads for ``response``."""
    return openai_responses.response_from_wire(openai_responses.response_to_wire(response))


def same(a: ModelResponse, b: ModelResponse) -> None:
    assert a == b
    assert a.message.extra == b.message.extra and a.extra == b.extra  # item ids, usage details...


SCRIPTED = [
    ModelResponse(
        message=Message.assistant(
            "先换算两笔，",
            [
                ToolCall(id="call_1", name="fx", arguments={"amount": 320, "currency": "USD"}),
                ToolCall(id="call_2", name="fx", arguments={}, raw_arguments=""),
            ],
        ),
        stop_reason="tool_use",
        usage=Usage(input_tokens=12, output_tokens=30, cache_read_tokens=4),
        model="m",
        id="resp_1",
    ),
    ModelResponse(
        message=Message(
            role="assistant",
            parts=(
                ProviderPart(format="openai-responses", data={"id": "rs_1", "type": "reasoning", "summary": []}),
                Text(text="一共 3002.6 元，"),
                Text(text="每人 750.65 元。"),
            ),
        ),
        stop_reason="max_tokens",
        usage=Usage(input_tokens=3, output_tokens=99),
        model="m",
        id="resp_2",
    ),
    openai_responses.response_from_wire(
        {
            "id": "resp_3",
            "model": "m",
            "status": "completed",
            "output": [
                {
                    "id": "msg_r",
                    "type": "message",
                    "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "refusal", "refusal": "I can't help with that."}],
                }
            ],
        }
    ),
]


@pytest.mark.parametrize("response", SCRIPTED, ids=["calls", "incomplete", "refusal"])
def test_written_streams_read_back_as_the_non_streaming_parse_cut_anywhere(response: ModelResponse) -> None:
    raw, expected = written(response, size=3), non_streaming(response)
    same(run([raw])[1], expected)
    same(run([raw[i : i + 1] for i in range(len(raw))])[1], expected)
    same(run([e + b"\n\n" for e in raw.split(b"\n\n") if e])[1], expected)
    for cut in range(0, len(raw) + 1, 7):
        same(run([raw[:cut], raw[cut:]])[1], expected)


@pytest.mark.parametrize("name", ["openai_responses_text", "openai_responses_calls"])
def test_a_recorded_response_written_again_reads_back_as_itself(name: str) -> None:
    _, expected = recorded(name)
    same(run([written(expected, size=2)])[1], expected)


def test_the_writer_speaks_the_documented_event_sequence_in_the_sdks_types() -> None:
    events = response_to_events(SCRIPTED[0], chunk_size=1000)
    names = [name for name, _ in events]
    assert names == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.output_item.added",  # a call with no arguments text has no delta
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    for name, data in events:
        parsed = SDK_EVENT.validate_python(data)
        assert parsed.type == name == data["type"]
    created, completed = events[0][1]["response"], events[-1][1]["response"]
    assert (created["status"], created["output"], created["usage"]) == ("in_progress", [], None)
    final = openai_responses.response_to_wire(SCRIPTED[0])
    assert {**completed, "created_at": 0} == {**final, "created_at": 0}
    added = events[8][1]["item"]
    assert (added["call_id"], added["name"], added["arguments"], added["status"]) == ("call_1", "fx", "", "in_progress")


def test_incomplete_and_refusal_end_as_the_api_ends_them() -> None:
    incomplete = response_to_events(SCRIPTED[1])
    assert incomplete[-1][0] == "response.incomplete"
    assert incomplete[-1][1]["response"]["incomplete_details"] == {"reason": "max_output_tokens"}
    refusal = [name for name, _ in response_to_events(SCRIPTED[2])]
    assert "response.refusal.delta" in refusal and "response.refusal.done" in refusal
    assert refusal[-1] == "response.completed"


def test_recorded_calls_are_announced_then_completed_in_order() -> None:
    raw, expected = recorded("openai_responses_calls")
    events, response = run([raw])
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "我先换算两笔："
    started = [(e.index, e.id, e.name) for e in events if isinstance(e, CallStarted)]
    assert started == [(0, "call_fx_usd", "fx"), (1, "call_fx_jpy", "fx")]
    fragments: dict[int, str] = {}
    for e in events:
        if isinstance(e, ArgsChunk):
            fragments[e.index] = fragments.get(e.index, "") + e.text
    assert fragments == {0: '{"amount":320,"currency":"USD"}', 1: '{"amount":15000,"currency":"JPY"}'}
    complete = [e for e in events if isinstance(e, CallComplete)]
    assert [e.call for e in complete] == response.message.tool_calls == expected.message.tool_calls
    assert events.index(complete[0]) < events.index(next(e for e in events if isinstance(e, CallStarted) and e.index))
    assert response.usage == Usage(input_tokens=236, output_tokens=52) and response.stop_reason == "tool_use"


def test_reasoning_tokens_and_summary_survive_the_stream() -> None:
    raw, expected = recorded("openai_responses_text")
    _, response = run([raw])
    reasoning = response.message.parts[0]
    assert isinstance(reasoning, Reasoning) and reasoning.text.startswith("**Adding up**")
    assert response.message.text == "一共 3002.6 元，每人 750.65 元。"
    wire = openai_responses.response_to_wire(response)
    assert wire["usage"]["output_tokens_details"] == {"reasoning_tokens": 44}
    assert response.usage == expected.usage
    assert response.usage == Usage(input_tokens=146, output_tokens=75, cache_read_tokens=256, reasoning_tokens=44)


def test_a_terminal_response_without_output_gets_the_streamed_items() -> None:
    """Some compatible servers send ``response.completed`` with an empty ``output``."""
    raw, expected = recorded("openai_responses_calls")
    head, _, tail = raw.rpartition(b"event: response.completed\n")
    data = json.loads(tail.removeprefix(b"data: "))
    data["response"]["output"] = []
    same(run([head, encode(json.dumps(data), "response.completed")])[1], expected)


def test_a_failed_response_reads_as_the_non_streaming_one() -> None:
    raw, _ = recorded("openai_responses_calls")
    head = raw[: raw.index(b"event: response.output_item.added")]
    failed = {"id": "resp_x", "model": "m", "status": "failed", "output": [], "error": {"code": "server_error"}}
    event = {"type": "response.failed", "sequence_number": 2, "response": failed}
    _, response = run([head, encode(json.dumps(event), "response.failed")])
    assert response == openai_responses.response_from_wire(failed)
    assert (response.stop_reason, response.raw_stop_reason) == ("other", "failed")


def test_an_error_event_is_a_retryable_provider_error_with_its_message() -> None:
    raw, _ = recorded("openai_responses_text")
    error = {
        "type": "error",
        "sequence_number": 5,
        "code": "server_error",
        "message": "The model crashed",
        "param": None,
    }
    cut = raw.index(b"event: response.output_item.done")
    with pytest.raises(ProviderError, match=r"reported an error: The model crashed \(server_error\)") as info:
        run([raw[:cut], encode(json.dumps(error), "error")])
    assert info.value.retryable and "server_error" in (info.value.body or "")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b'event: response.output_item.added\ndata: {"type": "response.output_item.added", "output_index": 0, '
            b'"item": {"type": "message", "content": []}}\n\n',
            "response.output_item.added before response.created",
        ),
        (
            b'event: response.created\ndata: {"type": "response.created", "response": {"id": "r", "output": []}}\n\n'
            b'event: response.output_text.delta\ndata: {"type": "response.output_text.delta", "output_index": 3, '
            b'"content_index": 0, "delta": "x"}\n\n',
            "response.output_text.delta for output item 3, which was never added",
        ),
        (b"event: response.created\ndata: [1]\n\n", "malformed OpenAI Responses stream: event: expected an object"),
    ],
)
def test_malformed_streams_say_what_is_wrong(raw: bytes, message: str) -> None:
    with pytest.raises(ProviderError, match=message) as info:
        run([raw])
    assert not info.value.retryable


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
values = st.one_of(st.integers(-(2**53), 2**53), texts, st.booleans(), st.none())
arguments = st.dictionaries(st.text(max_size=8), values, max_size=4)


@st.composite
def responses(draw: st.DrawFn) -> ModelResponse:
    calls = [
        ToolCall(id=f"call_{i}", name=draw(st.sampled_from(["fx", "calc", "天气"])), arguments=draw(arguments))
        for i in range(draw(st.integers(0, 3)))
    ]
    return ModelResponse(
        message=Message.assistant(draw(texts), calls),
        stop_reason="tool_use" if calls else draw(st.sampled_from(["end_turn", "max_tokens"])),
        usage=Usage(input_tokens=draw(st.integers(0, 10**6)), output_tokens=draw(st.integers(0, 10**5))),
        model="m",
        id="resp_h",
        # The writer stamps a response without one with the clock; a fixed stamp keeps the streamed and
        # the non-streamed writing of one response equal when a second ticks between them.
        extra={"openai-responses": {"fields": {"created_at": draw(st.integers(0, 2**31))}}},
    )


@settings(max_examples=60, deadline=None)
@given(responses(), st.integers(1, 12), st.integers(0, 10**4))
def test_any_response_streamed_and_cut_reads_back_as_the_non_streaming_parse(
    response: ModelResponse, size: int, cut: int
) -> None:
    raw = written(response, size)
    cut %= len(raw) + 1
    same(run([raw[:cut], raw[cut:]])[1], non_streaming(response))
