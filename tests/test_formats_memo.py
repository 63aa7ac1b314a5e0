"""The wire formats' encoding memos: same bytes as a fresh encoding, identity-keyed, gone with their messages."""

from __future__ import annotations

import gc
import sys
import threading
from dataclasses import replace

from toolslip import Message, Request, ToolResult
from toolslip.formats import anthropic, openai_chat
from toolslip.formats._memo import HistoryMemo, MessageMemo
from toolslip.testing import call


def _history() -> list[Message]:
    fx = call("fx", amount=320, currency="USD")
    history = [Message.system("be exact"), Message.user("320 USD?"), Message.assistant(calls=[fx])]
    history.append(Message.tool([ToolResult(call_id=fx.id, content="320 USD = 2297.6 CNY")]))
    return history


def test_a_growing_history_encodes_like_a_fresh_one() -> None:
    history = _history()
    for wire in (openai_chat, anthropic):
        first = wire.request_to_wire(Request(model="m", messages=tuple(history[:3])))
        again = wire.request_to_wire(Request(model="m", messages=tuple(history)))
        assert again["messages"][: len(first["messages"])] == first["messages"]
        # The same history rebuilt from new (equal) message objects must encode identically.
        rebuilt = tuple(Message(role=m.role, parts=m.parts, name=m.name, extra=m.extra) for m in history)
        assert wire.request_to_wire(Request(model="m", messages=rebuilt)) == again


def _counting() -> tuple[HistoryMemo, list[str]]:
    encoded: list[str] = []

    def encode(message: Message) -> list[dict[str, str]]:
        encoded.append(message.text)
        return [{"text": message.text, **message.extra}]

    return HistoryMemo(encode), encoded


def test_an_extended_history_encodes_only_its_new_messages() -> None:
    memo, encoded = _counting()
    a, b, c, d = (Message.user(t) for t in "abcd")
    assert memo((a, b)) == [{"text": "a"}, {"text": "b"}]
    assert memo([a, b, c, d]) == [{"text": t} for t in "abcd"]
    assert encoded == ["a", "b", "c", "d"]
    out = memo((a, b, c, d))
    out.append({"text": "mutated"})  # the caller's list is its own
    assert memo((a, b, c, d)) == [{"text": t} for t in "abcd"]
    assert encoded == ["a", "b", "c", "d"]


def test_two_extensions_of_one_history_each_get_their_own_messages() -> None:
    """An entry's list is extended in place when its history grows: a second branch from the same prefix
    (a retry, an eval trial forked from a shared transcript) must not see the first branch's messages."""
    memo, _ = _counting()
    a, b, c, d = (Message.user(t) for t in "abcd")
    memo((a, b))
    assert memo((a, b, c)) == [{"text": t} for t in "abc"]
    assert memo((a, b, d)) == [{"text": t} for t in "abd"]
    assert memo((a, b, c, d)) == [{"text": t} for t in "abcd"]


def test_threads_extending_one_history_never_mix_their_messages() -> None:
    memo, _ = _counting()
    base = tuple(Message.user(str(i)) for i in range(50))
    problems: list[str] = []

    def extend(tag: str) -> None:
        for round_ in range(300):
            memo(base)
            mine = (*base, Message.user(f"{tag}{round_}"), Message.user(f"{tag}{round_}!"))
            got = [m["text"] for m in memo(mine)]
            if got != [m.text for m in mine]:
                problems.append(f"{tag} round {round_}: {got[-3:]}")

    threads = [threading.Thread(target=extend, args=(tag,)) for tag in "xyz"]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert problems == []


def test_a_replaced_message_is_encoded_again_even_when_equal() -> None:
    """A hook that swaps a middle message for an equal one with other wire fields (``extra`` is left out of
    ``==``) must see its fields sent: the memo checks identity, never equality."""
    memo, encoded = _counting()
    a, b, c = (Message.user(t) for t in "abc")
    memo((a, b, c))
    marked = replace(b, extra={"cache_control": "ephemeral"})
    assert marked == b
    assert memo((a, marked, c)) == [{"text": "a"}, {"text": "b", "cache_control": "ephemeral"}, {"text": "c"}]
    assert encoded == ["a", "b", "c", "b"]  # a and c came from the per-message memo
    assert memo((a, Message.user("b"), c))[1] == {"text": "b"}


def test_encodings_go_with_their_messages() -> None:
    memo, _ = _counting()
    one = MessageMemo(lambda m: m.text)
    history = _history()
    for end in range(1, len(history) + 1):
        memo(history[:end])
    one(history[0])
    # One entry for the longest history, whatever its length, and the first message, encoded alone.
    assert memo.entries() == 2
    assert one.entries() == 1
    del history, end
    gc.collect()
    assert memo.entries() == 0
    assert one.entries() == 0


def test_the_module_memos_keep_nothing_after_a_run() -> None:
    from toolslip.formats._anthropic_blocks import _encoded as anthropic_memo
    from toolslip.formats._chat_messages import _encoded as chat_memo

    gc.collect()
    before = chat_memo.entries(), anthropic_memo.entries()
    history = _history()
    for wire in (openai_chat, anthropic):
        wire.request_to_wire(Request(model="m", messages=tuple(history)))
    assert chat_memo.entries() > before[0] and anthropic_memo.entries() > before[1]
    del history
    gc.collect()
    assert (chat_memo.entries(), anthropic_memo.entries()) == before
