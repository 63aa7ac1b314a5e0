"""Stream accumulators: every split of every recorded stream gives the non-streaming parse.

The recorded streams in fixtures/streams were written from the providers' streaming docs; each ``.sse``
has a ``.json`` beside it holding the response the same call returns without streaming.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolslip.errors import ProviderError
from toolslip.formats import (
    anthropic,
    anthropic_stream,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from toolslip.formats.sse import SSEDecoder, encode
from toolslip.messages import Message, ModelResponse, Reasoning, Text, ToolCall, Usage
from toolslip.streaming import ArgsChunk, CallComplete, CallStarted, StreamEvent, TextChunk

STREAMS = Path(__file__).parent / "fixtures" / "streams"
NAMES = sorted(p.stem for p in STREAMS.glob("*.sse"))


class Accumulator(Protocol):
    done: bool

    def feed(self, event: Any) -> list[StreamEvent]: ...
    def finish(self) -> ModelResponse: ...


def formats(name: str) -> tuple[Any, Any]:
    if name.startswith("openai_chat"):
        return openai_chat, openai_chat_stream
    if name.startswith("openai_responses"):
        return openai_responses, openai_responses_stream
    return anthropic, anthropic_stream


def run(name: str, pieces: list[bytes]) -> tuple[list[StreamEvent], ModelResponse]:
    accumulator: Accumulator = formats(name)[1].Accumulator()
    decoder = SSEDecoder()
    events = [e for piece in pieces for sse in decoder.feed(piece) for e in accumulator.feed(sse)]
    return events, accumulator.finish()


def recorded(name: str) -> tuple[bytes, ModelResponse]:
    expected = formats(name)[0].response_from_wire(json.loads((STREAMS / f"{name}.json").read_text()))
    return (STREAMS / f"{name}.sse").read_bytes(), expected


def same(a: ModelResponse, b: ModelResponse) -> None:
    """Equal; for Anthropic and Responses also the per-block wire fields kept for round trips (which ``==`` leaves out).

    OpenAI's non-streaming message has fields its deltas never carry (``annotations: []``), so there only
    the neutral content is compared.
    """
    assert a == b
    if anthropic.NAME in b.message.extra or openai_responses.NAME in b.message.extra:
        assert a.message.extra == b.message.extra


@pytest.mark.parametrize("name", NAMES)
def test_byte_by_byte_and_event_by_event_equal_the_non_streaming_parse(name: str) -> None:
    raw, expected = recorded(name)
    same(run(name, [raw])[1], expected)
    same(run(name, [raw[i : i + 1] for i in range(len(raw))])[1], expected)
    events = raw.split(b"\n\n")
    same(run(name, [e + b"\n\n" for e in events if e])[1], expected)


@pytest.mark.parametrize("name", NAMES)
def test_every_cut_in_two_equals_the_non_streaming_parse(name: str) -> None:
    raw, expected = recorded(name)
    for cut in range(0, len(raw) + 1, 3):
        assert run(name, [raw[:cut], raw[cut:]])[1] == expected, cut


def test_interleaved_parallel_calls_are_reassembled_by_index() -> None:
    raw, expected = recorded("openai_chat_parallel")
    events, response = run("openai_chat_parallel", [raw])
    assert [(c.id, c.arguments) for c in response.message.tool_calls] == [
        ("call_fx_usd", {"amount": 320, "currency": "USD"}),
        ("call_fx_jpy", {"amount": 15000, "currency": "JPY"}),
    ]
    started = [e for e in events if isinstance(e, CallStarted)]
    assert [(e.index, e.id, e.name) for e in started] == [(0, "call_fx_usd", "fx"), (1, "call_fx_jpy", "fx")]
    fragments: dict[int, str] = {}
    for e in events:
        if isinstance(e, ArgsChunk):
            fragments[e.index] = fragments.get(e.index, "") + e.text
    assert fragments == {c_index: c.raw_arguments for c_index, c in enumerate(response.message.tool_calls)}
    complete = [e for e in events if isinstance(e, CallComplete)]
    assert [e.call for e in complete] == response.message.tool_calls
    assert events.index(complete[0]) > max(i for i, e in enumerate(events) if isinstance(e, ArgsChunk))
    assert response.usage == Usage(input_tokens=236, output_tokens=52)


def test_anthropic_events_announce_each_call_and_complete_it_at_its_block_stop() -> None:
    raw, expected = recorded("anthropic_tool_use")
    events, response = run("anthropic_tool_use", [raw])
    assert "".join(e.text for e in events if isinstance(e, TextChunk)) == "好的，我先查一下北京的天气："
    kinds = [type(e).__name__ for e in events if not isinstance(e, TextChunk)]
    assert kinds == ["CallStarted", *["ArgsChunk"] * 3, "CallComplete", "CallStarted", "CallComplete"]
    assert [e.call for e in events if isinstance(e, CallComplete)] == response.message.tool_calls
    assert response.message.tool_calls[1] == ToolCall(id="toolu_01NoArgs", name="get_time", arguments={})
    assert response.usage.output_tokens == 89


def test_thinking_signature_and_server_tool_blocks_are_kept_verbatim() -> None:
    _, thinking = run("anthropic_thinking", [recorded("anthropic_thinking")[0]])
    first = thinking.message.parts[0]
    assert isinstance(first, Reasoning) and first.signature is not None and first.signature.startswith("EqQB")
    _, search = run("anthropic_web_search", [recorded("anthropic_web_search")[0]])
    assert search.usage.server_tool_use == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert search.usage.input_tokens == 10682  # message_delta's cumulative count replaces message_start's
    assert anthropic.response_to_wire(search)["content"][2]["citations"][0]["cited_text"] == "Beijing: 28°C, cloudy"


# --- broken streams end in a clear error, never in a half-parsed response ------------------------------

TRUNCATIONS = [
    ("openai_chat_parallel", b'finish_reason":"tool_calls', "ended before finish_reason"),
    ("openai_chat_text", b'finish_reason":"stop', "ended before finish_reason"),
    ("anthropic_tool_use", b"event: message_stop", "ended before message_stop"),
    ("openai_responses_calls", b"event: response.completed", "ended before response.completed"),
    ("openai_responses_text", b"event: response.output_item.done", "ended before response.completed"),
    ("anthropic_thinking", b'event: content_block_stop\ndata: {"type": "content_block_stop", "index": 2', "ended"),
]


@pytest.mark.parametrize(("name", "marker", "message"), TRUNCATIONS)
def test_a_stream_cut_before_its_end_is_a_retryable_provider_error(name: str, marker: bytes, message: str) -> None:
    raw, _ = recorded(name)
    cut = raw[: raw.index(marker)]
    with pytest.raises(ProviderError, match=message) as info:
        run(name, [cut])
    assert info.value.retryable


def test_openai_without_done_but_with_finish_reason_is_complete() -> None:
    raw, expected = recorded("openai_chat_text")
    assert run("openai_chat_text", [raw.replace(b"data: [DONE]\n\n", b"")])[1] == expected


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("openai_chat_text", b"data: {not json\n\n", "malformed OpenAI stream: an event is not JSON"),
        ("openai_chat_text", b"data: 5\n\n", "malformed OpenAI stream: chunk: expected an object, got int"),
        (
            "anthropic_tool_use",
            b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
            b'"delta": {"type": "text_delta", "text": "x"}}\n\n',
            "content_block_delta for content block 0, which is not open",
        ),
    ],
)
def test_malformed_events_are_not_retryable(name: str, raw: bytes, message: str) -> None:
    with pytest.raises(ProviderError, match=message) as info:
        run(name, [raw])
    assert not info.value.retryable


def test_broken_tool_input_json_is_an_error_not_a_call() -> None:
    raw, _ = recorded("anthropic_tool_use")
    broken = raw.replace(b'"partial_json":": \\"celsius\\"}"', b'"partial_json":": \\"cels"')
    with pytest.raises(ProviderError, match=r"the input of 'get_weather' is not JSON"):
        run("anthropic_tool_use", [broken])


def test_tool_input_that_is_not_an_object_is_malformed() -> None:
    raw, _ = recorded("anthropic_tool_use")
    cut = raw.index(b"event: content_block_stop", raw.index(b'"index":1'))
    start = raw.index(b"event: content_block_delta", raw.index(b'"index":1'))
    array = encode(
        '{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"[1, 2]"}}',
        "content_block_delta",
    )
    with pytest.raises(ProviderError, match=r"malformed Anthropic stream: input: expected an object, got an array"):
        run("anthropic_tool_use", [raw[:start], array, raw[cut:]])


def test_error_events_name_the_provider_error() -> None:
    overloaded = encode('{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}', "error")
    with pytest.raises(ProviderError, match=r"Overloaded \(overloaded_error\)") as info:
        raw = recorded("anthropic_tool_use")[0]
        run("anthropic_tool_use", [raw[: raw.index(b"event: ping")], overloaded])
    assert (info.value.status, info.value.retryable) == (529, True)
    failed = encode('{"error": {"message": "The server had an error", "type": "server_error"}}')
    with pytest.raises(ProviderError, match="The server had an error"):
        run("openai_chat_text", [failed])


# --- the server side: a response written as a stream reads back as itself -------------------------------

RESPONSES = [
    ModelResponse(
        message=Message(role="assistant", parts=(Text(text="我来查 " * 9),)),
        stop_reason="end_turn",
        usage=Usage(input_tokens=10, output_tokens=20, cache_read_tokens=3),
        model="m",
        id="r1",
    ),
    ModelResponse(
        message=Message.assistant(
            "先换算。",
            [
                ToolCall(id="c1", name="fx", arguments={"amount": 320, "currency": "USD"}),
                ToolCall(id="c2", name="calc", arguments={"expr": "2297.6 + 705.0"}),
            ],
        ),
        stop_reason="tool_use",
        usage=Usage(input_tokens=5, output_tokens=7),
        model="m",
        id="r2",
    ),
]


@pytest.mark.parametrize("response", RESPONSES, ids=["text", "calls"])
def test_openai_chunks_read_back_as_the_response(response: ModelResponse) -> None:
    raw = b"".join(encode(json.dumps(c)) for c in openai_chat_stream.response_to_chunks(response, chunk_size=3))
    got = run("openai_chat", [raw + encode("[DONE]")])[1]
    # OpenAI has no slot for raw arguments text of a call read from elsewhere: compare the parsed ones.
    assert got.message.tool_calls == [
        ToolCall(id=c.id, name=c.name, arguments=c.arguments, raw_arguments=got.message.tool_calls[i].raw_arguments)
        for i, c in enumerate(response.message.tool_calls)
    ]
    assert (got.message.text, got.usage, got.stop_reason, got.id) == (
        response.message.text,
        response.usage,
        response.stop_reason,
        response.id,
    )


@pytest.mark.parametrize("name", [n for n in NAMES if n.startswith("anthropic")])
def test_anthropic_events_of_a_recorded_response_read_back_as_it(name: str) -> None:
    _, expected = recorded(name)
    raw = b"".join(encode(json.dumps(d), e) for e, d in anthropic_stream.response_to_events(expected, chunk_size=2))
    same(run(name, [raw])[1], expected)


texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
values = st.one_of(st.integers(-(2**53), 2**53), texts, st.booleans())
arguments = st.dictionaries(st.text(max_size=8), values, max_size=4)


@st.composite
def responses(draw: st.DrawFn) -> ModelResponse:
    text = draw(texts)
    calls = [
        ToolCall(id=f"call_{i}", name=draw(st.sampled_from(["fx", "calc", "天气"])), arguments=draw(arguments))
        for i in range(draw(st.integers(0, 3)))
    ]
    return ModelResponse(
        message=Message.assistant(text, calls),
        stop_reason="tool_use" if calls else draw(st.sampled_from(["end_turn", "max_tokens"])),
        usage=Usage(input_tokens=draw(st.integers(0, 10**6)), output_tokens=draw(st.integers(0, 10**5))),
        model="m",
        id="r",
    )


@settings(max_examples=60, deadline=None)
@given(responses(), st.integers(1, 12))
def test_any_response_streamed_in_either_format_reads_back_as_itself(response: ModelResponse, size: int) -> None:
    events = anthropic_stream.response_to_events(response, chunk_size=size)
    raw = b"".join(encode(json.dumps(d, ensure_ascii=False), e) for e, d in events)
    assert replace(run("anthropic", [raw])[1], raw_stop_reason=None) == response  # the wire adds its own word
    chunks = openai_chat_stream.response_to_chunks(response, chunk_size=size)
    got = run("openai_chat", [b"".join(encode(json.dumps(c)) for c in chunks)])[1]
    assert got.message.text == response.message.text
    assert [(c.id, c.name, c.arguments) for c in got.message.tool_calls] == [
        (c.id, c.name, c.arguments) for c in response.message.tool_calls
    ]
    assert (got.stop_reason, got.usage) == (response.stop_reason, response.usage)
