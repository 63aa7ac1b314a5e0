"""The SSE decoder against the WHATWG parsing rules, fed in every possible cut."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from toolslip.formats.sse import ServerSentEvent, SSEDecoder, encode

STREAM = (
    "\ufeff: a comment, then a keep-alive\n"
    ":\n"
    "event: message_start\n"
    'data: {"a": "北京"}\n'
    "\n"
    "data:first line\n"
    "data:  second line keeps one space\n"
    "id: 7\n"
    "retry: 3000\n"
    "\n"
    "event: no data, not dispatched\n"
    "\n"
    "data\n"
    "unknown: ignored\n"
    "\n"
    "data: [DONE]\n"
    "\n"
)
EXPECTED = [
    ServerSentEvent(event="message_start", data='{"a": "北京"}'),
    ServerSentEvent(data="first line\n second line keeps one space", id="7", retry=3000),
    ServerSentEvent(data="", id="7"),
    ServerSentEvent(data="[DONE]", id="7"),
]


def decode(pieces: list[bytes]) -> tuple[list[ServerSentEvent], SSEDecoder]:
    decoder = SSEDecoder()
    events = [e for piece in pieces for e in decoder.feed(piece)]
    return events, decoder


def variants() -> dict[str, bytes]:
    return {ending: STREAM.replace("\n", ending).encode() for ending in ("\n", "\r\n", "\r")}


def test_every_line_ending_gives_the_same_events_whole_and_byte_by_byte() -> None:
    for ending, raw in variants().items():
        assert decode([raw])[0] == EXPECTED, ending
        events, decoder = decode([raw[i : i + 1] for i in range(len(raw))])
        assert events == EXPECTED, ending
        assert not decoder.pending


def test_every_cut_in_two_gives_the_same_events() -> None:
    raw = variants()["\r\n"]
    for cut in range(len(raw) + 1):
        assert decode([raw[:cut], raw[cut:]])[0] == EXPECTED, cut


@given(st.lists(st.integers(min_value=0, max_value=400), max_size=12))
def test_any_cuts_give_the_same_events(cuts: list[int]) -> None:
    raw = variants()["\r\n"]
    points = sorted({min(c, len(raw)) for c in cuts})
    pieces = [raw[a:b] for a, b in zip([0, *points], [*points, len(raw)], strict=True)]
    assert decode(pieces)[0] == EXPECTED


def test_a_stream_cut_mid_event_is_pending_and_dispatches_nothing() -> None:
    events, decoder = decode([b'data: {"partial": tr'])
    assert events == [] and decoder.pending
    events, decoder = decode([b"data: complete line\n"])
    assert events == [] and decoder.pending


def test_encode_is_read_back_including_multi_line_data() -> None:
    raw = encode('{"x": 1}', "message_delta") + encode("two\nlines")
    assert decode([raw])[0] == [
        ServerSentEvent(event="message_delta", data='{"x": 1}'),
        ServerSentEvent(data="two\nlines"),
    ]
