"""The linter's rules: heuristics over what the model sees of a tool, in English and Chinese.

Each rule is a function from one tool (or a pair, or the whole set) to findings. The phrase lists below are
the signals the seed chapter names: a usage boundary ("use only when ..."), a signpost to the neighbour
("... use get_order_by_id instead"), explicit formats (country code, YYYY-MM-DD, currency, unit), a
statement of what an empty result means, and a plain statement of what a side-effecting tool changes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.effects import Effect, is_side_effecting
from .text import CAMEL, CJK, stem, terms

_WORDS = re.compile(r"[A-Za-z0-9]+")
NAME_CHARS = re.compile(r"[a-zA-Z0-9_-]+")

BOUNDARY = re.compile(
    r"\bonly\b|\bdo not use\b|\bdon't use\b|\bnot for\b|\binstead\b|\bnever\b|\bunless\b"
    r"|\buse (?:it |this(?: tool)? )?(?:when|for|to|if)\b"
    r"|只在|仅在|仅用于|只用于|不要|不适用|请改用|改用|而不是|仅支持|只支持",
    re.IGNORECASE,
)
EMPTY_RESULT = re.compile(
    r"\bempty\b|\bno (?:results?|match(?:es)?|data|records?|items?|entries|\w+ (?:is|are) found)\b|\bnothing\b"
    r"|\bnot found\b|\bnone\b|\[\]|\bzero results\b|\bdoes not exist\b|\bunknown \w+ returns\b"
    r"|\bno \w+ (?:fits|matches|exists)\b|\bif (?:there (?:is|are) )?no\b|\bno such\b|\bnull\b|\bat least one\b"
    r"|空|没有|查不到|不存在|无结果|未找到|找不到",
    re.IGNORECASE,
)
STATES_CHANGE = re.compile(
    r"\b(?:creat|add|insert|updat|sets?\b|delet|remov|drop|sends?\b|sent\b|post|publish|book|reserv|pay|charg"
    r"|transfer|cancel|writ|upload|submit|modif|chang|overwrit|irreversib|cannot be undone|permanent|side effect"
    r"|merg|appl|plac|regist|assign|initiali[sz]|schedul|stor|sav|install|enabl|disabl|start|stop|restart|kill"
    r"|mov|renam|cop|replac|archiv|approv|reject|unlink|handover|hand over"
    r"|launch|execut|lock|unlock|shar|invit|subscrib|unsubscrib|rent|purchas|buy|refund)"
    r"|创建|新增|添加|修改|更新|删除|发送|支付|扣款|转账|预订|取消|写入|不可撤销|无法撤销",
    re.IGNORECASE,
)
_VALUE = r"(?:\(?['\"`][\w .-]{1,24}['\"`]\)?|[a-z][a-z0-9_-]{0,15}|[A-Z]{2,8})"
CLOSED_SET = re.compile(
    r"(?i:\bone of\b|\beither\b.{1,40}\bor\b|\b(?:possible|allowed|valid|accepted|supported) values\b"
    r"|\boptions(?: are| include|:)|\bmust be (?:one of|either)\b)"
    # a prose enumeration: "low, medium or high", "('local'), ('remote') or ('all')", "'asc' or 'desc'"
    rf"|(?:^|[:(]\s*|\bis\s+|\bare\s+){_VALUE}(?:\s*,\s*{_VALUE})+,?\s+or\s+{_VALUE}\s*(?:[.;)]|$)"
    rf"|['\"`][\w .-]{{1,24}}['\"`]\s+or\s+['\"`][\w .-]{{1,24}}['\"`]"
    r"|(?<![\w/.:-])(?:[A-Z]{3}(?:/[A-Z]{3}){2,}|[a-z]{3,12}(?:/[a-z]{3,12}){2,})(?![\w/.-])"
    r"|可选|取值|之一",
)
_DATE_FORMAT = frozenset("YYYY YY MM DD HH SS yyyy yy mm dd hh ss T Z".split())
# An example is not a closed set: "(e.g., 'America/New_York', 'Europe/London')", "such as a, b or c".
_EXAMPLES = re.compile(
    r"\be\.?g\.?|\bfor example\b|\bsuch as\b|\blike\b|\bincluding\b|\bexamples?\b|\bformat\b|\bformatted\b|例如|比如",
    re.I,
)


def lists_values(text: str, siblings: frozenset[str] = frozenset()) -> bool:
    """The description enumerates the values a free-text parameter takes, outside any example (and not the
    names of the tool's parameters: "provide either 'file_path' or 'content_base64'")."""
    for found in CLOSED_SET.finditer(text):
        if set(re.findall(r"['\"`]([\w.-]+)['\"`]", found.group())) & siblings:
            continue
        letters = set(re.findall(r"[A-Za-z]+", found.group()))
        if letters and letters <= _DATE_FORMAT:
            continue  # "MM/DD/YYYY" is a format, not a set
        before = text[max(0, found.start() - 60) : found.start()]
        after = re.split(r"(?<!e\.g)(?<!i\.e)\.\s", text[found.end() : found.end() + 160])[0]
        if not _EXAMPLES.search(before) and not re.search(r"\betc\b|\.\.\.|…|\band so on\b", after):
            return True
    return False


RETRIEVAL_VERBS = frozenset(
    map(stem, "search find list query lookup look get fetch retrieve read show browse filter".split())
)
MUTATING_VERBS = frozenset(
    map(
        stem,
        "create add insert update set delete remove drop send post publish book reserve pay charge transfer cancel "
        "write put upload submit rename archive approve deploy merge refund purchase buy".split(),
    )
)
_GENERIC = RETRIEVAL_VERBS | frozenset(terms("info details data one"))
GENERIC_NAME_WORDS = _GENERIC


@dataclass(frozen=True)
class Topic:
    """A kind of value whose format must be spelled out, e.g. a date or a phone number."""

    name: str
    about: re.Pattern[str]
    """Matches a parameter's name or description that is about this kind of value."""
    stated: re.Pattern[str]
    """Matches a description (or enum/format keyword) that states the format."""
    suggestion: str
    by_name: bool = False
    """Decide by the parameter's name alone: the words are too common in descriptions ("distance calculation")."""


_EXAMPLE = r"e\.g\.|for example|such as|例如|比如|形如"
TOPICS = (
    Topic(
        "phone number",
        re.compile(r"phone|mobile[ _]?(?:number|no\b)|^mobile$|\btel\b|telephone|手机|电话", re.I),
        re.compile(r"country code|e\.164|\+\d|digits|format|\d{3}-\d{3,4}|国家码|区号|不带|带\+", re.I),
        "say whether it includes the country code, e.g. 'E.164 with country code, e.g. +8613800138000'",
    ),
    Topic(
        "date or time",
        re.compile(
            r"(?<![a-z])(?:date|time(?!out|zone|line|s\b|r))|\bday\b|birthday|deadline|\bsince\b|\buntil\b|日期|时间",
            re.I,
        ),
        re.compile(
            r"yyyy|iso ?8601|rfc ?3339|\bhh:mm|unix|epoch|timestamp|format|\d{4}-\d{2}|年|月|秒|分钟|小时"
            r"|\b(?:(?:milli)?seconds?|minutes?|hours?|days|weeks?|months?|years?)\b|" + _EXAMPLE,
            re.I,
        ),
        "state the format, e.g. 'ISO 8601 date, YYYY-MM-DD' or 'ISO 8601 date-time with time zone'",
    ),
    Topic(
        "amount of money",
        re.compile(r"price|cost|money|salary|budget|\bfee|payment|金额|价格|费用", re.I),
        re.compile(
            r"(?-i:\b[A-Z]{3}\b)|currency|cents?\b|dollars?|euros?|yuan|元|币|iso ?4217"
            r"|\bfactor\b|\branging\b|\bratio\b"
            r"|\b\d+(?:\.\d+)? (?:means|is|represents)\b",
            re.I,
        ),
        "name the currency and the unit, e.g. 'in CNY yuan, not fen' or add a currency parameter",
        by_name=True,
    ),
    Topic(
        "measurement",
        re.compile(
            r"weight|distance|length|height|width|temperature|duration|speed|volume|重量|距离|长度|温度|时长", re.I
        ),
        re.compile(
            r"\b(?:kg|g|lb|lbs|pounds?|km|m|cm|mm|miles?|feet|ft|inch(?:es)?|celsius|fahrenheit|kelvin|seconds?|"
            r"minutes?|hours?|days?|ms|mph|km/h|liters?|litres?|ml|units?|(?:kilo|centi|milli)?(?:meters?|metres?|grams?)"
            r"|characters?|chars|bytes?|bits?|tokens?|words?|items?|lines?|rows?|pixels?|px|percent(?:age)?|degrees?"
            r"|points?|pt|dpi|results?|entries|records?|levels?)\b|\bnumber of\b|\bcount\b|%|°|\b\d+\s*(?:-|to)\s*\d+\b"
            r"|\bbetween -?\d+(?:\.\d+)?\b.{0,15}\band -?\d|\bfrom -?\d+(?:\.\d+)?\b.{0,15}\bto -?\d|\branging\b"
            r"|\b\d+(?:\.\d+)? (?:is|means)\b|\bfactor\b|\bratio\b|\bfraction\b"
            r"|公斤|千克|克|米|公里|秒|分钟|小时|摄氏|华氏",
            re.I,
        ),
        "state the unit, e.g. 'in kilograms' or 'in seconds'",
        by_name=True,
    ),
)


UNIT_IN_NAME = re.compile(
    r"_(?:cm|mm|m|km|px|pt|ms|s|sec|secs|seconds|minutes|mins|hours|days|kg|g|lb|pct|percent|bytes|kb|mb|gb|usd|eur|cny)$"
    r"|_(?:type|mode|unit|units|format|id|name|key)$",
    re.I,
)


def size(text: str) -> float:
    """Length in English-word units: a word counts 1, a CJK character 0.5."""
    return len(_WORDS.findall(text)) + len(CJK.findall(text)) / 2


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?。！？])\s*", text.strip(), maxsplit=1)[0][:120]


def signpost(description: str, other: str) -> str:
    """The sentence that sends a model from one tool to ``other``, made from ``other``'s description:
    "Query orders by status and date." gives "To query orders by status and date, use query_orders instead."
    (a verb leads "to ...", anything else "for ..."), rather than pasting the whole sentence after "for"."""
    sentence = first_sentence(description).rstrip(".!?。！？ ")
    if not sentence:
        return f"For that, use {other} instead."
    first, _, rest = sentence.partition(" ")
    if first[1:2].islower() or len(first) == 1:  # "Query" -> "query"; an acronym (API, URL) keeps its case
        first = first[0].lower() + first[1:]
    verb = _base_form(first)
    if stem(verb) in _ACTION_OF:
        return f"To {' '.join(filter(None, (verb, rest)))}, use {other} instead."
    return f"For {' '.join(filter(None, (first, rest)))}, use {other} instead."


def _base_form(word: str) -> str:
    """A verb as the imperative: "returns" -> "return", "queries" -> "query", "fetches" -> "fetch"."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Param:
    path: str
    schema: Mapping[str, Any]


def params(schema: Mapping[str, Any], prefix: str = "", depth: int = 0) -> Iterator[Param]:
    """Every property of an object schema, nested objects and array items included, as dotted paths."""
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, Mapping) or depth > 3:
        return
    for name, prop in properties.items():
        if not isinstance(prop, Mapping):
            continue
        path = f"{prefix}{name}"
        yield Param(path, prop)
        yield from params(prop, f"{path}.", depth + 1)
        if isinstance(prop.get("items"), Mapping):
            yield from params(prop["items"], f"{path}[].", depth + 1)


_SELF_DESCRIBED = re.compile(r"(?:^|_)(?:text|query|content|message|body|prompt|comment|title)$", re.I)


def needs_description(path: str, schema: Mapping[str, Any]) -> bool:
    """A flag (``whole_word: boolean``) or the text to send (``search_text``, ``query``) says what it is."""
    leaf = path.rsplit(".", 1)[-1].removesuffix("[]")
    return schema.get("type") != "boolean" and "enum" not in schema and not _SELF_DESCRIBED.search(leaf)


def is_free_text(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "string" and not any(k in schema for k in ("enum", "const", "format", "pattern"))


def leading_verb(name: str) -> str:
    words = CAMEL.findall(name)
    return stem(words[0].lower()) if words else ""


_COMPUTES = re.compile(r"^\s*(?:this \w+ )?(?:calculat|comput|return|get|retriev|check|convert|find|search|list)", re.I)


def side_effecting(name: str, effects: frozenset[Effect] | None, description: str = "") -> bool:
    """Declared effects decide; without a declaration (a JSON file) the name's leading verb does, unless the
    description starts by computing or reading (``add``: "Calculates the sum of two integers")."""
    if effects is not None:
        return is_side_effecting(effects)
    return leading_verb(name) in MUTATING_VERBS and not _COMPUTES.match(description)


_SEARCHING = frozenset(map(stem, "search find list query lookup filter browse".split()))
_SEARCHES = re.compile(r"^\s*(?:this \w+ )?(?:\w+\s+)?(?:search|find|list|query|quer|look up|filter|browse)", re.I)


def is_retrieval(name: str, description: str) -> bool:
    """A tool that searches or lists (``search_orders``, ``order_lookup``, "Finds available trains..."), so
    it can come back empty. ``get_current_time`` or ``get_user(id)`` cannot: a missing one is an error."""
    words = {stem(w.lower()) for w in CAMEL.findall(name)}
    return (
        bool(words & _SEARCHING)
        or bool(_SEARCHES.match(description))
        or bool(re.match(r"\s*(?:查|搜|找|列出|检索)", description))
    )


def head(text: str) -> str:
    """The first clause of a description, which says what the value is ("用户 ID，例如 ...": "用户 ID")."""
    return re.split(r"[,;:，；：。(（]", text, maxsplit=1)[0]


@dataclass(frozen=True)
class Profile:
    """What two tools are compared on: the name's words without generic verbs, and the other words."""

    name: frozenset[str]
    text: frozenset[str]

    @classmethod
    def of(cls, name: str, description: str, parameters: list[str]) -> Profile:
        return cls(
            frozenset(t for t in concepts(name) - _GENERIC - _NAME_FILLER - set(_ACTION_OF) if not t.isdigit()),
            concepts(" ".join([description, *parameters])) - _GENERIC,
        )


def same_object(a: Profile, b: Profile, strict: bool = True) -> bool:
    """The names' object words are the same; or, not ``strict``, each name's are in the other's description."""
    if not a.name or not b.name:
        return False
    return a.name == b.name or not strict and a.name - b.name <= b.text and b.name - a.name <= a.text


def similarity(a: Profile, b: Profile) -> float:
    """How interchangeable two tools look: 0.6 x name overlap + 0.4 x description/parameter overlap.

    Generic verbs (get, search, list...) are left out of the names: ``search_orders`` and ``query_orders``
    share everything that matters.
    """
    name_sim = len(a.name & b.name) / len(a.name | b.name) if a.name and b.name else 0.0
    text_sim = len(a.text & b.text) / math.sqrt(len(a.text) * len(b.text)) if a.text and b.text else 0.0
    return 0.6 * name_sim + 0.4 * text_sim


def names_other(description: str, other: str) -> bool:
    return other.lower() in description.lower()


# What a tool does to its object, by the verbs of its name (or the first word of its description): two tools
# whose actions differ (search vs book, create vs list) are not interchangeable, however alike their objects.
_ACTIONS = {
    "search": "search find query lookup look filter browse match",
    "get": "get fetch retrieve read show view display describe return provide give detail info",
    "list": "list",
    "create": "create add new insert make generate register upload",
    "update": "update edit modify set change replace format",
    "move": "move",
    "rename": "rename",
    "copy": "copy duplicate clone",
    "delete": "delete remove drop clear cancel unregister",
    "book": "book reserve buy purchase pay rent",
    "send": "send post publish share notify reply forward",
    "run": "run execute start stop launch",
    "convert": "convert translate transform",
}
_ACTION_OF = {stem(verb): action for action, verbs in _ACTIONS.items() for verb in verbs.split()}
_NAME_FILLER = frozenset(terms("id by detail details info all one many specific v1 v2 tool api"))
# Words tool sets use for one thing: "get_forecast" and "weather_outlook" compare as alike.
_SYNONYMS = {
    "forecast": "outlook prediction predict",
    "movie": "film",
    "image": "picture photo",
    "delete": "remove",
    "buy": "purchase",
    "email": "mail",
    "document": "doc",
    "directory": "folder dir",
    "car": "vehicle",
}
_SYNONYM_OF = {stem(word): stem(head) for head, words in _SYNONYMS.items() for word in words.split()}


def actions(name: str, description: str) -> frozenset[str]:
    """What a tool's name says it does (``search``, ``get``, ``list``, ``create``...), or the first words of its
    description when the name has no verb; a ``get`` of a plural (``get_orders``) is a ``list``."""
    words = CAMEL.findall(name)
    found = {_ACTION_OF[stem(w.lower())] for w in words if stem(w.lower()) in _ACTION_OF}
    if not found:
        first = re.findall(r"[A-Za-z]+", description)[:2]
        found = {_ACTION_OF[stem(w.lower())] for w in first if stem(w.lower()) in _ACTION_OF}
    if found == {"get"} and words and words[-1].lower().endswith("s") and not words[-1].lower().endswith("ss"):
        return frozenset({"list"})
    return frozenset(found - {"get"} if len(found) > 1 else found)  # get_list_x lists, get_search_x searches


def concepts(text: str) -> frozenset[str]:
    """The terms of ``text`` with synonyms made one."""
    return frozenset(_SYNONYM_OF.get(t, t) for t in terms(text))


# Words that say nothing about what a tool does: a description made mostly of them is vague.
_FILLER = frozenset(
    terms(
        """tool function utility helper powerful flexible efficient efficiently easy easily simple simply seamless
        seamlessly robust comprehensive various variety many multiple different several kinds types sort all any
        every some things thing stuff tasks task operations operation actions action work working works handle
        handles handling manage manages management process processes processing perform performs support supports
        provide provides providing help helps helping allow allows enable enables useful purpose purposes general
        generic related relevant accordingly appropriate necessary designed intended capable able ways way also
        well needs need wide range"""
    )
)


def vague(name: str, description: str) -> bool:
    """A description of 12 words or more, half of them filler, naming at most two things besides the tool's
    name: it reads like a description but the model learns nothing from it."""
    words = terms(description)
    if size(description) < 12 or not words:
        return False
    content = set(words) - _FILLER - set(terms(name)) - set(_ACTION_OF)
    return len(content) <= 2 and sum(w in _FILLER for w in words) >= len(words) / 2
