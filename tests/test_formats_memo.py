"""The per-message memo of the wire formats: same bytes as a fresh encoding, bounded, identity-keyed."""

from __future__ import annotations

from toolslip import Message, Request, ToolResult
from toolslip.formats import anthropic, openai_chat
from toolslip.formats._memo import MessageMemo
from toolslip.testing import call


def test_a_growing_history_encodes_like_a_fresh_one() -> None:
    fx = call("fx", amount=320, currency="USD")
    history = [Message.system("be exact"), Message.user("320 USD?"), Message.assistant(calls=[fx])]
    history.append(Message.tool([ToolResult(call_id=fx.id, content="320 USD = 2297.6 CNY")]))
    for wire in (openai_chat, anthropic):
        first = wire.request_to_wire(Request(model="m", messages=tuple(history[:3])))
        again = wire.request_to_wire(Request(model="m", messages=tuple(history)))
        assert again["messages"][: len(first["messages"])] == first["messages"]
        # The same history rebuilt from new (equal) message objects must encode identically.
        rebuilt = tuple(Message(role=m.role, parts=m.parts, name=m.name, extra=m.extra) for m in history)
        assert wire.request_to_wire(Request(model="m", messages=rebuilt)) == again


def test_the_memo_keys_on_identity_and_stays_bounded() -> None:
    encoded: list[str] = []

    def encode(message: Message) -> str:
        encoded.append(message.text)
        return message.text.upper()

    memo = MessageMemo(encode, size=2)
    a, b, c = Message.user("a"), Message.user("b"), Message.user("c")
    assert [memo(a), memo(a), memo(Message.user("a"))] == ["A", "A", "A"]
    assert encoded == ["a", "a"]  # an equal but different object is encoded again
    memo(b)
    memo(c)  # evicts the oldest entries beyond two
    memo(a)
    assert encoded == ["a", "a", "b", "c", "a"]
