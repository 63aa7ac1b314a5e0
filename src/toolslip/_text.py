"""Text analysis for tool search and the linter: identifiers split, words stemmed, queries expanded.

Tool names are identifiers (``getOrderById``, ``currency_exchange.convert``) and descriptions are prose,
in English or in a language written without spaces; questions name instances ("500 US dollars", "2 pounds")
where tool docs name the class ("currency", "weight"). Everything here is small, pure and cached.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

__all__ = ["CAMEL", "CJK", "expand", "stem", "terms"]

_STOP = frozenset(
    """a an and are as at be been by can could do does for from get given has have how i if in into is it
    its me my of on or our please should so than that the their them then there these this those to us
    was we what when where which who whom will with would you your""".split()
)
# Identifier boundaries: "getHTTPResponse" -> get HTTP Response; digits stand alone.
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD = re.compile(r"[A-Za-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
"""One character of a script written without spaces (Japanese kana, CJK ideographs, Hangul)."""
_SUFFIXES = (
    "ational", "ations", "ation", "ically", "ical", "ions", "ion", "ings", "ing", "edly",
    "ies", "ied", "ers", "er", "ed", "es", "ly", "s",
)  # fmt: skip


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix stripper: enough to make plural, -ing, -ed and -ation forms meet."""
    if len(word) <= 3 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                return stem + "y"
            if suffix.startswith("ation"):  # "calculation" meets "calculate", "calculating": "calculat"
                return stem + "at"
            if suffix.startswith("ical"):  # "genetically", "genetical" -> "genetic"
                return stem + "ic"
            if suffix.startswith("ion"):  # "invention" -> "invent", "discussion" -> "discuss"; not "region"
                if stem[-1] not in "st" or len(stem) < 4:
                    continue
                return stem
            if suffix == "s" and word.endswith("ss"):
                return word
            if suffix in ("es", "ed", "er", "ers") and stem[-1] == stem[-2:-1]:  # "stopped" -> "stop"
                return stem[:-1]
            return stem.rstrip("e") if len(stem) > 3 else stem
    return word.rstrip("e") if len(word) > 4 else word


def terms(text: str) -> list[str]:
    """The index terms of ``text``: split identifiers, lower-cased, stop words out, stemmed; CJK bigrams."""
    return [term for chunk in _WORD.findall(text) for term in _chunk_terms(chunk)]


@lru_cache(maxsize=131072)
def _chunk_terms(chunk: str) -> tuple[str, ...]:
    """Terms of one run of letters and digits; cached, since tool sets repeat their words a lot."""
    if CJK.match(chunk):
        return (chunk,) if len(chunk) == 1 else tuple(chunk[i : i + 2] for i in range(len(chunk) - 1))
    words = (piece.lower() for piece in CAMEL.findall(chunk))
    return tuple(stem(word) for word in words if word not in _STOP)


_CONCEPTS = {
    "currency": "dollar dollars usd eur euro euros yen jpy gbp yuan cny rmb rupee rupees inr chf peso pesos won krw",
    "distance length unit": "mile miles km kilometer kilometers kilometre meter meters metre feet foot inch inches "
    "yard yards",
    "weight unit measurement": "ounce ounces oz pound pounds lb lbs kg kilogram kilograms gram grams ton tons",
    "volume unit measurement": "cup cups liter liters litre litres gallon gallons ml tablespoon tablespoons teaspoon "
    "teaspoons",
    "temperature": "celsius fahrenheit kelvin",
    "date": "monday tuesday wednesday thursday friday saturday sunday january february march april june july "
    "august september october november december",
}


@lru_cache(maxsize=1)
def _concepts() -> Mapping[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for classes, words in _CONCEPTS.items():
        for word in words.split():
            out[stem(word)] = out.get(stem(word), ()) + tuple(terms(classes))
    return out


def expand(query: str, known: Mapping[str, object]) -> dict[str, float]:
    """Query terms with weights: the terms themselves, the class of each instance word, and compounds.

    A compound is two adjacent words written as one ("board game" -> "boardgame"), added only when
    ``known`` (the index vocabulary) has it.
    """
    weights = dict.fromkeys(terms(query), 1.0)
    for term in list(weights):
        for concept in _concepts().get(term, ()):
            weights.setdefault(concept, 1.0)
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", query)]
    for first, second in zip(words, words[1:], strict=False):
        joined = stem(first + second)
        if joined in known:
            weights.setdefault(joined, 1.0)
    return weights
