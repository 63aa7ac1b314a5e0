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

from ._text import CAMEL, CJK, stem, terms
from .effects import Effect, is_side_effecting

_WORDS = re.compile(r"[A-Za-z0-9]+")

BOUNDARY = re.compile(
    r"\bonly\b|\bdo not use\b|\bdon't use\b|\bnot for\b|\binstead\b|\bnever\b|\bunless\b"
    r"|\buse (?:it |this(?: tool)? )?(?:when|for|to|if)\b"
    r"|只在|仅在|仅用于|只用于|不要|不适用|请改用|改用|而不是|仅支持|只支持",
    re.IGNORECASE,
)
EMPTY_RESULT = re.compile(
    r"\bempty\b|\bno (?:results?|match(?:es)?|data|records?|items?|entries|\w+ (?:is|are) found)\b|\bnothing\b"
    r"|\bnot found\b|\bnone\b|\[\]|\bzero results\b|\bdoes not exist\b|\bunknown \w+ returns\b"
    r"|空|没有|查不到|不存在|无结果|未找到|找不到",
    re.IGNORECASE,
)
STATES_CHANGE = re.compile(
    r"\b(?:creat|add|insert|updat|sets?\b|delet|remov|drop|sends?\b|sent\b|post|publish|book|reserv|pay|charg"
    r"|transfer|cancel|writ|upload|submit|modif|chang|overwrit|irreversib|cannot be undone|permanent|side effect)"
    r"|创建|新增|添加|修改|更新|删除|发送|支付|扣款|转账|预订|取消|写入|不可撤销|无法撤销",
    re.IGNORECASE,
)
CLOSED_SET = re.compile(
    r"\bone of\b|\beither\b.+\bor\b|\b(?:possible|allowed|valid|accepted) values\b|\boptions are\b"
    r"|(?:['\"`][\w .-]{1,20}['\"`][,/ ]*(?:or |and )?){2,}|\b[A-Za-z]{2,12}(?:/[A-Za-z]{2,12}){1,}\b|可选|取值|之一",
    re.IGNORECASE,
)
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
        re.compile(r"phone|mobile|\btel\b|telephone|手机|电话", re.I),
        re.compile(r"country code|e\.164|\+\d|digits|国家码|区号|不带|带\+", re.I),
        "say whether it includes the country code, e.g. 'E.164 with country code, e.g. +8613800138000'",
    ),
    Topic(
        "date or time",
        re.compile(r"(?<![a-z])(?:date|time(?!out))|\bday\b|birthday|deadline|\bwhen\b|since|until|日期|时间", re.I),
        re.compile(
            r"yyyy|iso ?8601|rfc ?3339|\bhh:mm|unix|epoch|timestamp|format|\d{4}-\d{2}|年|月|秒|分钟|小时"
            r"|\b(?:(?:milli)?seconds?|minutes?|hours?|days|weeks?|months?|years?)\b|" + _EXAMPLE,
            re.I,
        ),
        "state the format, e.g. 'ISO 8601 date, YYYY-MM-DD' or 'ISO 8601 date-time with time zone'",
    ),
    Topic(
        "amount of money",
        re.compile(r"price|amount|cost|money|salary|budget|\bfee|payment|金额|价格|费用", re.I),
        re.compile(r"(?-i:\b[A-Z]{3}\b)|currency|cents?\b|dollars?|euros?|yuan|元|币|iso ?4217", re.I),
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
            r"minutes?|hours?|days?|ms|mph|km/h|liters?|litres?|ml|units?|(?:kilo|centi|milli)?(?:meters?|metres?|grams?))\b"
            r"|°|公斤|千克|克|米|公里|秒|分钟|小时|摄氏|华氏",
            re.I,
        ),
        "state the unit, e.g. 'in kilograms' or 'in seconds'",
        by_name=True,
    ),
)


def size(text: str) -> float:
    """Length in English-word units: a word counts 1, a CJK character 0.5."""
    return len(_WORDS.findall(text)) + len(CJK.findall(text)) / 2


def first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?。！？])\s*", text.strip(), maxsplit=1)[0][:120]


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


def is_free_text(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "string" and not any(k in schema for k in ("enum", "const", "format", "pattern"))


def leading_verb(name: str) -> str:
    words = CAMEL.findall(name)
    return stem(words[0].lower()) if words else ""


def side_effecting(name: str, effects: frozenset[Effect] | None) -> bool:
    """Declared effects decide; without a declaration (a JSON file) the name's leading verb does."""
    if effects is not None:
        return is_side_effecting(effects)
    return leading_verb(name) in MUTATING_VERBS


def is_retrieval(name: str, description: str) -> bool:
    """A tool that looks something up, so it can come back empty (``get_order``, ``order_lookup``, 查询...)."""
    words = {stem(w.lower()) for w in CAMEL.findall(name)}
    return bool(words & RETRIEVAL_VERBS) or bool(re.match(r"\s*(?:查|搜|找|列出|获取|检索)", description))


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
        return cls(frozenset(terms(name)) - _GENERIC, frozenset(terms(" ".join([description, *parameters]))) - _GENERIC)


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
