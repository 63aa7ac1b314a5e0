"""One generation of the embedded model, token by token, that a Ctrl-C or a closed stream stops at once.

llama.cpp's own ``create_completion`` runs to the end once started: a Ctrl-C used to leave it decoding in a
worker thread for up to ~110 s, and the answer arrived whole. Here the tokens come from ``Llama.generate``
one at a time, so the text is handed on as it is written, and each generation watches a
:class:`threading.Event`: between tokens it is checked directly, and during a long prompt evaluation
llama.cpp's abort callback (``llama_set_abort_callback``, asked between graph nodes) reads it, so a stop
takes effect within milliseconds. Usage is counted exactly: the prompt's tokens and the tokens generated.
"""

from __future__ import annotations

import codecs
import logging
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ProviderError

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["Aborter", "Generated", "Stopped", "compiled", "generate", "whole"]

_LLAMA_LOG = logging.getLogger("llama-cpp-python")  # llama-cpp-python prints llama.cpp's log by its level


_LOOP = 32
"""A token written this many times in a row ends the generation, as if at ``max_tokens`` (``length``). Asked to
sum three coffees, the 0.5B model wrote ``calc("(3 * 4.5) * 1000…")`` and then zeros to the token limit: 131 s
for a call that was cut anyway. No answer or argument of a tool-calling turn holds 32 identical tokens."""


class Stopped(Exception):
    """The generation was stopped from outside (its event was set) before it finished."""


@dataclass(eq=False)
class Aborter:
    """llama.cpp's abort callback for one context, reading the event of whichever generation runs now."""

    current: threading.Event | None = None
    _callback: Any = field(default=None, repr=False)
    _quiet: int | None = field(default=None, repr=False)
    """The ctypes function pointer; kept here so it lives as long as the context that calls it."""

    def install(self, llama: Llama) -> None:
        import llama_cpp

        self._callback = llama_cpp.ggml_abort_callback(lambda _data: self.aborted())
        llama_cpp.llama_set_abort_callback(llama.ctx, self._callback, None)

    def aborted(self) -> bool:
        event = self.current
        if event is None or not event.is_set():
            return False
        if self._quiet is None:
            # llama.cpp reports the abort it was asked for as an error ("decode: removing memory module
            # entries..."), which would be the last line a user sees after Ctrl-C; it is expected here.
            self._quiet = _LLAMA_LOG.level
            _LLAMA_LOG.setLevel(logging.CRITICAL)
        return True

    def finished(self) -> None:
        """The generation is over: stop watching its event, and let llama.cpp's errors through again."""
        self.current = None
        if self._quiet is not None:
            _LLAMA_LOG.setLevel(self._quiet)
            self._quiet = None


@dataclass(frozen=True, slots=True)
class Generated:
    """What one generation wrote: its text, why it ended (``stop``, or ``length`` at ``max_tokens`` or in a loop
    of one token), and token counts."""

    text: str
    finish: str
    prompt_tokens: int
    completion_tokens: int


def generate(
    llama: Llama,
    prompt: str,
    options: dict[str, Any],
    *,
    grammar: Any,
    cancel: threading.Event,
    emit: Callable[[str], object],
) -> Generated:
    """Generate from ``prompt`` under ``grammar``, calling ``emit`` with each new piece of text.

    ``options`` holds ``max_tokens``, ``temperature``, ``seed``, ``stop`` and the sampling options. Text
    that may be the start of a stop sequence is held back until it is known not to be one. Raises
    :class:`Stopped` when ``cancel`` is set, and :class:`ProviderError` when the prompt does not fit.
    """
    tokens = llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
    room = llama.n_ctx() - len(tokens)
    if room <= 0:
        raise ProviderError(
            f"the local model cannot take this request: its prompt is {len(tokens)} tokens and the context "
            f"window {llama.n_ctx()}; shorten the conversation or load the model with a larger n_ctx",
            status=400,
        )
    limit = min(int(options["max_tokens"]), room)
    stops: Sequence[str] = [s for s in options["stop"] if s]
    hold = max((len(s) for s in stops), default=1) - 1
    llama.set_seed(int(options["seed"]))
    names = ("top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty")
    sampling: dict[str, Any] = {k: options[k] for k in names if k in options}
    sampling["temp"] = float(options["temperature"])
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    text, sent, finish, count = "", 0, "length", 0
    written: list[int] = []
    try:
        for token in llama.generate(tokens, grammar=grammar, **sampling):
            if cancel.is_set():
                raise Stopped
            if _is_end(llama, token):
                finish = "stop"
                break
            written.append(token)
            count += 1
            text += decoder.decode(llama.detokenize([token], prev_tokens=tokens + written[:-1]))
            cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
            if cut >= 0:
                text, finish = text[:cut], "stop"
                break
            if len(text) - hold > sent:
                emit(text[sent : len(text) - hold])
                sent = len(text) - hold
            if count >= limit or (count >= _LOOP and len(set(written[-_LOOP:])) == 1):
                break
    except RuntimeError as exc:  # llama_decode returned 2: the abort callback stopped it
        if cancel.is_set():
            raise Stopped from exc
        raise ProviderError(f"the local model failed while generating: {exc}") from exc
    text += decoder.decode(b"", final=True)
    if len(text) > sent:
        emit(text[sent:])
    return Generated(text=text, finish=finish, prompt_tokens=len(tokens), completion_tokens=count)


def _is_end(llama: Llama, token: int) -> bool:
    import llama_cpp

    # llama-cpp-python keeps the vocabulary on its private model wrapper; create_completion reads it there too.
    return bool(llama_cpp.llama_vocab_is_eog(llama._model.vocab, token))


async def whole(pieces: AsyncIterator[str | Generated]) -> Generated:
    """The :class:`Generated` at the end of a generation's pieces, its text not streamed (it may be asked again)."""
    async for piece in pieces:
        if isinstance(piece, Generated):
            return piece
    raise ProviderError("the local model ended without an answer")  # pragma: no cover - pieces always end so


def compiled(source: str) -> Any:
    """A GBNF grammar compiled by llama.cpp (imported here: loading llama.cpp is paid only when decoding)."""
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(source, verbose=False)
