"""The lexical index over tool declarations: BM25 over each tool's name, description and parameters.

It is what a :class:`~toolslip.agent.tools.Toolbox` searches itself with (``toolbox.search``), and what
:class:`~toolslip.ToolSearch` and the hybrid index (:mod:`toolslip.quality.embedding`)
build on, so it sits below the loop: it knows tool declarations, not runs. What made the difference on real
tool sets (see ``benchmarks/tool_search.py``):

* identifiers are split the way people write them: ``getOrderById``, ``get_order_by_id`` and
  ``orders.get`` all yield their words, so a question that says "order" finds them;
* words are lower-cased, stop words dropped and suffixes stripped by a light stemmer
  ("calculating", "calculates", "calculation" meet at one stem);
* Chinese, Japanese and Korean runs, which have no spaces, become overlapping character bigrams;
* a query's instance words also match their class ("yen" -> currency, "miles" -> distance) and two
  adjacent words match a compound ("board game" -> boardgame), see :mod:`toolslip.quality.text`;
* fields are weighted (a word in the name counts more than one in a parameter description) and
  BM25's term scores are computed when the index is built, so a query only adds up numbers.

Scores live in numpy arrays (``pip install 'toolslip[search]'``), so a query over 10,000 tools is a few
array additions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeGuard

from ..core.errors import ConfigError
from .text import expand, intents, terms

__all__ = ["BACKGROUND", "FIELD_WEIGHTS", "Hit", "ToolIndex"]


class _Declared(Protocol):
    """Anything with a tool's declaration: a :class:`~toolslip.agent.tools.Tool` or a ``ToolSpec``."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def parameters(self) -> Mapping[str, Any]: ...


BACKGROUND = 50
"""Tools of other words assumed beside any set when a word's weight is computed (see :class:`ToolIndex`):
without them, a word all six tools of an order set share weighed 0.05 of a rare word, and "show me order
A-1" scored 0.09 on every tool, under the floor. Chosen on BFCL's tuning half (docs/tool-search.md)."""

FIELD_WEIGHTS: Mapping[str, float] = {"name": 3.0, "description": 1.0, "param_name": 1.0, "param_description": 0.5}
"""How much one occurrence of a word counts in each field of a tool."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One search result: the tool's name and its score.

    The score is BM25 with every word's weight (idf) counted in units of the rarest word's, so it does not
    grow with the size of the set: about 1 per rare query word the tool's description matches, 3 in its
    name, less for common words. Scores compare across queries and sets, so one floor can say "nothing
    fits" (see :data:`DEFAULT_FLOOR`).
    """

    name: str
    score: float


def _fields(tool: _Declared) -> Iterator[tuple[str, str]]:
    yield "name", tool.name
    yield "description", tool.description or ""
    yield from _schema_fields(tool.parameters)


def _schema_fields(schema: Mapping[str, Any], depth: int = 0) -> Iterator[tuple[str, str]]:
    """Parameter names and descriptions, nested objects and array items included (3 levels deep)."""
    if depth > 3 or not _is_map(schema):
        return
    properties = schema.get("properties")
    if _is_map(properties):
        for pname, prop in properties.items():
            yield "param_name", str(pname)
            if _is_map(prop):
                if isinstance(prop.get("description"), str):
                    yield "param_description", prop["description"]
                yield from _schema_fields(prop, depth + 1)
    items = schema.get("items")
    if _is_map(items):
        yield from _schema_fields(items, depth + 1)


def _is_map(value: object) -> TypeGuard[Mapping[str, Any]]:
    return type(value) is dict or isinstance(value, Mapping)  # the dict test first: the ABC check is slow


class ToolIndex:
    """A BM25 index over tool declarations; ``search(query, k)`` returns the best ``k`` tool names.

    Several declarations may share a name (versions of one tool); a name then ranks by its best one.

    Args:
        tools: tools or ``ToolSpec`` objects (anything with ``name``, ``description``, ``parameters``).
        weights: per-field weights, see :data:`FIELD_WEIGHTS`.
        analyzer: text -> index terms, for the tools and the queries alike (default :func:`terms`).
        expand: with the default analyzer, also match the class of instance words in a query ("yen" ->
            currency, "miles" -> distance) and two-word compounds ("board game" -> boardgame).
        k1, b: the usual BM25 saturation and length-normalisation constants.
    """

    def __init__(
        self,
        tools: Iterable[_Declared],
        *,
        weights: Mapping[str, float] = FIELD_WEIGHTS,
        analyzer: Callable[[str], list[str]] = terms,
        expand: bool = True,
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self._analyzer = analyzer
        self._expand = expand and analyzer is terms
        self.names: list[str] = []
        self._np = np = _numpy()
        # One flat (term, doc, weight) row per occurrence; numpy sums them into term frequencies.
        vocabulary: dict[str, int] = {}
        term_ids: list[int] = []
        doc_ids: list[int] = []
        row_weights: list[float] = []
        for doc_id, tool in enumerate(tools):
            self.names.append(tool.name)
            for field, text in _fields(tool):
                extra = intents(text) if field == "name" and self._expand else []  # what the name's verbs do
                found = [vocabulary.setdefault(t, len(vocabulary)) for t in [*analyzer(text), *extra]]
                term_ids += found
                doc_ids += [doc_id] * len(found)
                row_weights += [weights.get(field, 0.0)] * len(found)
        n = len(self.names)
        rows = np.array(term_ids, dtype=np.int64) * max(n, 1) + np.array(doc_ids, dtype=np.int64)
        keys, inverse = np.unique(rows, return_inverse=True)
        tf = np.bincount(inverse, weights=row_weights, minlength=len(keys))
        term_of, doc_of = keys // max(n, 1), (keys % max(n, 1)).astype(np.int32)
        length = np.bincount(doc_of, weights=tf, minlength=n)
        norm = k1 * (1 - b + b * length / (length.mean() if n and length.mean() else 1.0))
        df = np.bincount(term_of, minlength=len(vocabulary))
        # idf in units of the largest idf this set can have (a word in one tool only), so a score does not
        # grow with the size of the set and one floor fits a set of 5 tools and one of 10,000; counted as if
        # BACKGROUND tools that share no word stood beside the set, so a word every tool of a small set has
        # ("order" in six order tools) still says the set fits, instead of weighing almost nothing.
        total = n + BACKGROUND
        idf = np.log(1 + (total - df + 0.5) / (df + 0.5)) / np.log(1 + (total - 0.5) / 1.5)
        # Term scores are fixed once the index is built, so store them: a query only adds arrays.
        score = (idf[term_of] * tf * (k1 + 1) / (tf + norm[doc_of])).astype(np.float32)
        bounds = np.searchsorted(term_of, np.arange(len(vocabulary) + 1))  # keys are sorted by term, then doc
        self._postings: dict[str, tuple[Any, Any]] = {
            term: (doc_of[bounds[i] : bounds[i + 1]], score[bounds[i] : bounds[i + 1]])
            for term, i in vocabulary.items()
        }
        self._unique = len(set(self.names)) == len(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def scores(self, query: str) -> Any:
        """The score of every declaration for ``query`` (a numpy array in index order, see :class:`Hit`), e.g.
        to fuse with another retriever's scores."""
        np = self._np
        scores = np.zeros(len(self.names), dtype=np.float32)
        weights = expand(query, self._postings) if self._expand else dict.fromkeys(self._analyzer(query), 1.0)
        for term, weight in weights.items():
            posting = self._postings.get(term)
            if posting is not None:
                scores[posting[0]] += weight * posting[1]
        return scores

    def search(self, query: str, k: int = 5, *, floor: float = 0.0) -> list[Hit]:
        """The ``k`` best tools for ``query``, best first; tools sharing no term with it, or scoring under
        ``floor``, are never returned."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"k must be a whole number of tools, at least 1, not {k!r}")
        np = self._np
        scores = self.scores(query)
        matched = np.flatnonzero(scores > floor) if floor > 0 else np.flatnonzero(scores)
        if self._unique and len(matched) > k:
            matched = matched[np.argpartition(-scores[matched], k - 1)[:k]]
        ranked = matched[np.lexsort((matched, -scores[matched]))]  # best first; ties keep declaration order
        hits: dict[str, Hit] = {}
        for doc_id in ranked.tolist():  # with several docs per name, a name ranks by its best doc
            hits.setdefault(self.names[doc_id], Hit(self.names[doc_id], float(scores[doc_id])))
            if len(hits) == k:
                break
        return list(hits.values())


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        raise ConfigError("tool search needs numpy: pip install 'toolslip[search]'") from None
    return numpy
