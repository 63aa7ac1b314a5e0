"""One generation of the embedded model, with a stand-in for llama.cpp's token stream (no weights)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from toolslip.providers import local_decode
from toolslip.providers.local_decode import generate


class _Tokens:
    """What ``generate`` uses of a ``Llama``: tokens in, one token at a time out, each token one character."""

    def __init__(self, written: str) -> None:
        self.written = written

    def tokenize(self, text: bytes, **_: Any) -> list[int]:
        return list(text)

    def n_ctx(self) -> int:
        return 4096

    def set_seed(self, seed: int) -> None:
        pass

    def generate(self, tokens: list[int], **_: Any) -> Iterator[int]:
        yield from self.written.encode()

    def detokenize(self, tokens: list[int], **_: Any) -> bytes:
        return bytes(tokens)


def _run(written: str, max_tokens: int = 1000) -> local_decode.Generated:
    options = {"max_tokens": max_tokens, "stop": [], "seed": 0, "temperature": 0.0}
    return generate(_Tokens(written), "p", options, grammar=None, cancel=threading.Event(), emit=lambda _: None)  # type: ignore[arg-type]


def test_a_token_written_over_and_over_ends_the_generation_as_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_decode, "_is_end", lambda llama, token: False)
    # the 0.5B model's runaway argument: zeros up to the token limit, 131 s for a call that was cut anyway
    looped = _run('{"expr": "(3 * 4.5) * 1' + "0" * 500)
    assert looped.finish == "length" and looped.completion_tokens == 23 + 32
    assert looped.text.endswith("* 1" + "0" * 32)
    # a long run of one token short of the limit, and ordinary text, go on to the end
    assert _run("1" + "0" * 30 + " yuan").text == "1" + "0" * 30 + " yuan"
    assert _run("x" * 40, max_tokens=20).completion_tokens == 20
