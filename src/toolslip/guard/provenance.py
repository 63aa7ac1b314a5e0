"""Where a value in a tool call came from: the user, a trusted tool, or text a third party could write.

The injection gate (:mod:`toolslip.guard.policy`) asks one question of this module: *in which parts of the
transcript does this argument value appear?* :class:`TextProvenance` answers it by matching text, the
cheapest mechanism that works on any model: a value comes from the user when it appears in a user (or
system) message, exactly or after normalisation (case, surrounding punctuation, spaces and dashes inside
IBANs and phone numbers, URL schemes and trailing slashes). A value must be a run of whole tokens of the
text: ``"DE893704"`` comes from a user who wrote ``"DE89 3704 0044"``, ``"DE8937"`` does not.

Text matching cannot see through a value the model computed (a sum, a translation, a paraphrase): such a
value has no provenance and the gate asks. A stronger mechanism (CaMeL-style data-flow tracking through a
restricted interpreter) can replace it by implementing :class:`Provenance`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeAlias

from ..code import PROGRAM_TOOL
from ..core.messages import Message, Text, ToolResult

__all__ = ["CONFIRMATIONS", "Origin", "Provenance", "Source", "TextProvenance", "normalise"]

Origin: TypeAlias = Literal["user", "trusted", "untrusted"]

_WINDOW = 8
"""Longest run of whitespace-separated tokens one value may span (an IBAN in groups of four is 6)."""
_EDGE = "\"'`()[]{}<>.,;:!?#*«»“”‘’"
_SCHEME = re.compile(r"^(?:https?://|mailto:)(?:www\.)?")


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """One piece of the transcript a value can come from."""

    origin: Origin
    label: str
    """Human-readable: ``user message 1``, ``read_issue#call_3``."""
    call_id: str | None = None
    """The call whose result this is (``None`` for messages): rules look the call up to check which
    source it was (``read_file`` of the file the user named)."""

    def __str__(self) -> str:
        return self.label


class Provenance(Protocol):
    """What the gate needs: the sources a value appears in (empty when it appears nowhere)."""

    def sources(self, value: object) -> frozenset[Source]: ...

    def untrusted(self) -> tuple[Source, ...]:
        """Every untrusted source in the context, in order; empty means the context is clean."""
        ...


def normalise(text: str) -> str:
    """The form two spellings of one value share: NFKC, casefolded, no scheme, spaces or dashes."""
    text = unicodedata.normalize("NFKC", text).casefold().strip(_EDGE + " \t\n")
    text = _SCHEME.sub("", text).rstrip("/")
    return re.sub(r"[\s\-]+", "", text)


def _as_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _spellings(value: object) -> list[str]:
    """How a value may be written: a float also with two decimals (98.7 is the bill's "98.70")."""
    raw = _as_text(value).strip()
    if not raw:
        return []
    if isinstance(value, float) and not value.is_integer():
        return list(dict.fromkeys([raw, f"{value:.2f}"]))
    return [raw]


@dataclass(eq=False)
class TextProvenance:
    """Provenance by exact and normalised matching; feed it the transcript with :meth:`observe`."""

    _texts: list[tuple[Source, str]] = field(default_factory=list)
    _windows: list[tuple[Source, frozenset[str]]] = field(default_factory=list)
    _untrusted: list[Source] = field(default_factory=list)
    _words: set[str] = field(default_factory=set)
    """Every word of the context so far: what an echo may repeat without bringing new text."""
    _seen: int = 0
    _results_seen: int = 0
    _user_messages: int = 0

    @classmethod
    def of(cls, messages: Sequence[Message]) -> TextProvenance:
        provenance = cls()
        provenance.observe(messages)
        return provenance

    def observe(self, messages: Sequence[Message], *, echoes: Mapping[str, Collection[str]] | None = None) -> None:
        """Index the messages not seen yet (the transcript only grows).

        ``echoes`` maps the id of a call a gate allowed to what it may say back: its argument values
        and the words of its tool's declaration. Such a result ("sent 50.00 EUR to DE89...") is no new
        untrusted text when every word of it is one of those, a number, one of :data:`CONFIRMATIONS`
        or a word the context already had; anything else (a web page, a whole document) taints as
        usual. An echo never vouches for a value: it is no new source of trust.
        """
        for message in messages[self._seen :]:
            for source, text, taints in self._split(message):
                self._index(source, text, taints, echoes)
        self._seen = len(messages)

    def observe_results(
        self, results: Sequence[ToolResult], *, echoes: Mapping[str, Collection[str]] | None = None
    ) -> None:
        """Index results that reach the run before the transcript: the calls a program makes (code mode).

        A program passes what one call returned to the next call before its own result is in the
        transcript, so these are sources from the moment they arrive (the list only grows)."""
        for result in results[self._results_seen :]:
            for source, text, taints in _result_sources(result):
                self._index(source, text, taints, echoes)
        self._results_seen = len(results)

    def _index(self, source: Source, text: str, taints: bool, echoes: Mapping[str, Collection[str]] | None) -> None:
        said = (echoes or {}).get(source.call_id or "")
        if said is not None and source.origin != "user":
            source = Source(origin="untrusted", label=source.label, call_id=source.call_id)
            taints = not self._echoes(text, said)
        self.add(source, text, taints=taints)

    def _echoes(self, text: str, said: Collection[str]) -> bool:
        """Does ``text`` say nothing but ``said``, numbers, confirmations and words already seen?"""
        values = sorted((v for v in said if " " in v or not v.isalnum()), key=len, reverse=True)
        for value in values:
            text = text.replace(value, " ")
        allowed = {w.casefold() for w in said} | CONFIRMATIONS | self._words
        return all(w.isdigit() or w in allowed for w in _TOKEN.findall(text.casefold()))

    def add(self, source: Source, text: str, *, taints: bool = True) -> None:
        """Index ``text``; an untrusted source also taints the context unless ``taints`` is False."""
        self._texts.append((source, text))
        self._windows.append((source, frozenset(_windows(text))))
        self._words.update(_TOKEN.findall(text.casefold()))
        if source.origin == "untrusted" and taints and source not in self._untrusted:
            self._untrusted.append(source)

    def untrusted(self) -> tuple[Source, ...]:
        return tuple(self._untrusted)

    def sources(self, value: object) -> frozenset[Source]:
        found: set[Source] = set()
        for raw in _spellings(value):
            exact = re.compile(rf"(?<![\w]){re.escape(raw)}(?![\w])")
            wanted = normalise(raw)
            found |= {s for s, text in self._texts if exact.search(text)}
            found |= {s for s, windows in self._windows if wanted and wanted in windows}
        return frozenset(found)

    def _split(self, message: Message) -> Iterator[tuple[Source, str, bool]]:
        if message.role in ("user", "system"):
            self._user_messages += message.role == "user"
            label = "system prompt" if message.role == "system" else f"user message {self._user_messages}"
            yield Source(origin="user", label=label), message.text, False
        elif message.role == "tool":
            for part in message.parts:
                if isinstance(part, ToolResult):
                    yield from _result_sources(part)
                elif isinstance(part, Text):  # text riding along with results: nobody vouches for it
                    yield Source(origin="untrusted", label="text in a tool message"), part.text, True


def _result_sources(result: ToolResult) -> Iterator[tuple[Source, str, bool]]:
    label = f"{result.name or 'tool'}#{result.call_id}"
    text = result.text
    if result.untrusted and result.untrusted_spans and all(span in text for span in result.untrusted_spans):
        # Only the fields an outsider writes are theirs: each taints and vouches for nothing; the rest
        # of the result is as trusted as the tool.
        rest = text
        for span in sorted(result.untrusted_spans, key=len, reverse=True):
            rest = rest.replace(span, " \x00 ")
            yield Source(origin="untrusted", label=f"{label} (outsider field)", call_id=result.call_id), span, True
        yield Source(origin="trusted", label=label, call_id=result.call_id), rest, False
        return
    # An error written by the harness (a denial, a bad argument) echoes the model's own values: it must
    # never vouch for them, yet it brings no third-party text either. So does a program's output (code
    # mode): the model wrote the program, so it prints whatever the model put in it (a refusal it caught
    # printed the attacker's address, which then passed as trusted); the values it passed on are vouched
    # for by its calls' own results, indexed as they arrived.
    harness = result.is_error or result.name == PROGRAM_TOOL
    origin: Origin = "untrusted" if result.untrusted or harness else "trusted"
    yield Source(origin=origin, label=label, call_id=result.call_id), text, result.untrusted


CONFIRMATIONS = frozenset(
    "ok done success successful successfully sent posted added created deleted removed closed shared "
    "forwarded updated changed saved scheduled booked invited moved renamed transferred paid id status "
    "true false null none to on from for the a an of in at with by and was were has have been is are it "
    "transaction payment message email comment event file reservation request order".split()
)
"""Words any tool may use to confirm what it did, whatever its declaration says."""
_TOKEN = re.compile(r"[^\W_]+")


def _windows(text: str) -> Iterator[str]:
    """Normalised runs of 1.._WINDOW consecutive tokens: the spellings of values the text contains."""
    tokens = text.split()
    for start in range(len(tokens)):
        for end in range(start + 1, min(start + _WINDOW, len(tokens)) + 1):
            window = normalise(" ".join(tokens[start:end]))
            if window:
                yield window
