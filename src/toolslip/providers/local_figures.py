"""Figures the embedded model wrote itself: an answer's numbers that neither the question nor a tool gave.

A 0.5B model answers "Paris is sunny, 20 °C" without calling the weather tool, or "45,500 CNY each" without
the calculator, and the answer reads exactly like tool data. The check is one rule for every question:
with tools offered, each number in the answer must appear (as written or rounded) in the user's or the
system's text, in a tool call's arguments or in a tool's result. Numbers under 10 written without a
decimal point are left alone (counts, list numbering, "4 people"). A number nothing supports is
*ungrounded*: the provider asks the model once more, naming the figures and offering the tools, and if
the second answer still has some, it says so in the answer itself (:func:`marked`), so nobody takes
them for a tool's data.

One module (about 750 lines) because the checks, the lines the model is told, and the streaming gate all
read the same private number parsing and refusal openers: split, each part would import the others'
private helpers, and a change to what counts as a figure must reach all three at once.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.messages import Message, Text, ToolCall, ToolResult, ToolSpec
from ..core.model import IGNORED
from .local_chat import answer_line, answer_messages, fresh_calls, last_question, question_index, with_system_note

__all__ = [
    "ASKED_AGAIN",
    "DROPPED",
    "FigureGate",
    "NUDGE",
    "REWRITTEN",
    "STEER",
    "UNGROUNDED",
    "computing",
    "echoes",
    "failed",
    "fed_back",
    "guesses",
    "ignored",
    "invented",
    "marked",
    "not_from_a_tool",
    "nudged",
    "pending",
    "producers",
    "reconsidered",
    "refuses",
    "reported",
    "response_extra",
    "reused",
    "steered",
    "told_failed",
    "takes_a_figure",
    "ungrounded",
    "unsaid",
    "unsteered",
    "untaken",
    "unused",
]

# ASCII boundaries: Python's \w includes CJK characters, so "是22度" hid its 22 from a \w-bounded pattern.
_NUMBER = re.compile(r"(?<![0-9A-Za-z_.])[-−]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![0-9A-Za-z_])")


_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_UNITS = {"十": 10, "百": 100, "千": 1000}
# A figure in Chinese numerals counts only before a unit of measure: the same characters make ordinary
# words ("十分感谢", "一共", "万一"), and the 0.5B model wrote "哈尔滨现在是二十二度" as readily as "22度".
_CHINESE_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]+(?=[度元块个人岁米斤%％])")


def _chinese_value(written: str) -> float:
    """The value of a figure in Chinese numerals (二十二 22, 一百零五 105, 三万 30000)."""
    total = section = digit = 0
    for char in written:
        if char in _DIGITS:
            digit = _DIGITS[char]
        elif char in _UNITS:
            section += (digit or 1) * _UNITS[char]
            digit = 0
        elif char == "万":
            total += (section + digit) * 10_000
            section = digit = 0
    return float(total + section + digit)


def _numbers(text: str) -> Iterable[tuple[str, float, int]]:
    """Each number in ``text``: as written, its value, and its count of decimal places."""
    for match in _NUMBER.finditer(text):
        written = match.group(0)
        plain = written.replace(",", "").replace("−", "-")
        decimals = len(plain.partition(".")[2])
        yield written, float(plain), decimals
    for match in _CHINESE_NUMBER.finditer(text):
        yield match.group(0), _chinese_value(match.group(0)), 0


def _sources(messages: Sequence[Message], *, calls: bool = True) -> list[float]:
    """The numbers the model was given: the user's and system's text, the tools' results, and (with ``calls``)
    its calls' arguments."""
    values: list[float] = []
    for message in messages:
        texts = [r.text for r in message.tool_results]
        if message.role in ("user", "system", "tool"):
            texts.append(message.text)
        values += [value for text in texts for _, value, _ in _numbers(text)]
        values += _taken(message.tool_calls) if calls else ()
    return values


def _taken(calls: Iterable[ToolCall]) -> set[float]:
    """The numbers in the arguments of ``calls``."""
    texts = (json.dumps(c.arguments, ensure_ascii=False) for c in calls if c.arguments)
    return {value for text in texts for _, value, _ in _numbers(text)}


def _written_as(source: float, value: float, decimals: int) -> bool:
    """Whether ``value``, written with ``decimals`` places, is ``source`` as given or rounded to that precision
    (3002.6 written as 3,003 or 3002.60)."""
    return value == source or round(source, decimals) == value


def ungrounded(answer: str, messages: Sequence[Message]) -> list[str]:
    """The numbers in ``answer`` that no number given to the model supports, as written, without repeats."""
    given = _sources(messages)
    out: list[str] = []
    for written, value, decimals in _numbers(answer):
        if decimals == 0 and abs(value) < 10:
            continue
        if any(_written_as(source, value, decimals) for source in given):
            continue
        if written not in out:
            out.append(written)
    return out


def unused(messages: Sequence[Message], typed: bool = False) -> list[str]:
    """The figures of the user's last question that no tool call since has taken, once a tool was called (or
    from the start, for a ``typed`` answer).

    The 0.5B model converted the first of two amounts and answered with the second one unconverted
    (issue 26): every figure it answered with was given, yet a step was missing. A figure of the question
    that went into no call is the sign, whatever the tools are. Before any call, a prose answer may rightly
    quote the question's figures ("320 is less than 15000"); a typed answer is the result itself, and the
    0.5B model, asked the seed's trip with ``Expense``, filled it with the question's own amounts
    (``{"total_cny": 15000.0, "per_person_cny": 320.0}``) after 0 calls (issue 36).
    """
    last = question_index(messages)
    if last < 0:
        return []
    calls = [c for c in _moving(messages[last:]) if c.arguments]
    if not calls and not typed:
        return []
    taken = _taken(calls)
    out: list[str] = []
    for written, value, _ in _numbers(messages[last].text):
        if value not in taken and written not in out:
            out.append(written)
    return out


def _moving(messages: Sequence[Message]) -> list[ToolCall]:
    """The calls in ``messages`` less those whose result only gave back figures the call passed in: sampled at 0.7,
    the 1.5B model called ``calc("2297.6")`` after ``fx(320, "USD")`` and ``calc("705.0")`` after ``fx(15000,
    "JPY")``; counted as steps, they took both results, nothing waited to be added up, and the answer split
    2297.6 alone in its head (574.4). A call that moved no figure anywhere leaves them waiting."""
    results = {r.call_id: r for m in messages for r in m.tool_results}
    out = []
    for call in (c for m in messages for c in m.tool_calls):
        result = results.get(call.id)
        given = {value for _, value, _ in _numbers(result.text)} if result is not None and _answers(result) else set()
        if not (given and given <= _taken([call])):
            out.append(call)
    return out


def pending(messages: Sequence[Message]) -> bool:
    """Whether a tool still has figures to take: the question's, which no call took yet, or two results or more
    to combine (:func:`untaken`). An answer then with figures of its own is asked again as a call, so it is held
    whole: sampled at 0.7, the 1.5B model wrote "Let's break it down step by step. ... Assume the current rate is
    approximately 6.75" to the seed's trip before any call, and with that text on screen it could only be marked."""
    return bool(unused(messages, typed=True)) or len(untaken(messages)) > 1


def computing(messages: Sequence[Message]) -> bool:
    """Whether the answer due now reports work on the question's own figures: the question gives some (counts
    under 10 aside) and the conversation ends with tool results that answered. Such an answer is held whole
    and checked before it is shown: sampled at 0.7 after the four right calls of the seed's trip, the 1.5B
    model explained with rates of its own ("320 USD × 6.00 CNY/USD = 1920.0") or said only "You're
    welcome!", and on screen that could only be marked. A question with no figure (the weather) streams."""
    last = question_index(messages)
    given = [v for _, v, d in _numbers(messages[last].text) if d or abs(v) >= 10] if last >= 0 else []
    return bool(given) and _answered(messages)


def ignored(answer: str, messages: Sequence[Message]) -> list[str]:
    """The figures tool results gave since the user's last question that neither ``answer`` nor a later call
    took, when ``answer`` has figures of its own: each result that answered must reach the answer or a call.

    After ``fx(320, "USD")`` gave 2297.6 CNY and ``fx(15000, "JPY")`` 705.0, the 0.5B model filled the
    seed's ``Expense`` with ``{"total_cny": 320.0, "per_person_cny": 705.0}`` (issue 36): every figure was
    given, so :func:`ungrounded` saw nothing, yet a result the model fetched was dropped on the floor. A
    result's own figures are the ones its call did not pass in (the 320 of "320 USD = 2297.6 CNY" is the
    question's); one of them reaching the answer, rounded or not, or a later call counts for the result
    (a list of orders needs only the one asked about). An answer with no figure ("Yes, wear shorts") is
    left alone, as are results that say they failed.
    """
    said = [(value, decimals) for _, value, decimals in _numbers(answer) if decimals or abs(value) >= 10]
    if not said:
        return []
    out: list[str] = []
    for at, _, own in _results(messages):
        later = _taken(_moving(messages[at + 1 :]))
        reached = any(value in later or any(_written_as(value, v, d) for v, d in said) for _, value in own)
        out += [] if reached else [written for written, _ in own if written not in out]
    return out


def _results(messages: Sequence[Message]) -> list[tuple[int, str, list[tuple[str, float]]]]:
    """Each tool result since the user's last question that answered, with where it is, the tool's name and its
    own figures: those its call did not pass in (numbers under 10 written without a decimal point left alone)."""
    last = question_index(messages)
    if last < 0:
        return []
    calls = {c.id: c for m in messages[last:] for c in m.tool_calls}
    out = []
    for at, message in enumerate(messages[last:], start=last):
        for result in message.tool_results:
            if not _answers(result):
                continue
            call = calls.get(result.call_id)
            passed = _taken([call]) if call is not None else set()
            own = [
                (written, value)
                for written, value, decimals in _numbers(result.text)
                if (decimals or abs(value) >= 10) and value not in passed
            ]
            out += [(at, call.name if call is not None else result.name or "", own)] if own else []
    return out


def reported(answer: str, messages: Sequence[Message]) -> int:
    """How many of the figures tool results gave since the user's last question ``answer`` gives (as written or
    rounded): asked again after an answer that explained the trip with rates of its own beside 3002.6 and 750.65,
    the 1.5B model wrote "I apologize for the confusion ... not designed to calculate the cost per person"."""
    said = [(value, decimals) for _, value, decimals in _numbers(answer)]
    given = {value for _, _, own in _results(messages) for _, value in own}
    return sum(any(_written_as(value, v, d) for v, d in said) for value in given)


def untaken(messages: Sequence[Message]) -> list[str]:
    """The figures tool results gave since the user's last question that no later call took yet: what a next
    step has to combine. After ``fx`` had given 2297.6 and 705.0, the 1.5B model called
    ``calc("320 * 2.2976")``, a rate of its own, where the sum of the two results was the next step."""
    out: list[str] = []
    for at, _, own in _results(messages):
        later = _taken(_moving(messages[at + 1 :]))
        out += [written for written, value in own if value not in later and written not in out]
    return out


def producers(figures: Sequence[str], messages: Sequence[Message]) -> set[str]:
    """The names of the tools whose results since the user's last question gave one of ``figures``."""
    wanted = {value for _, value, _ in _numbers(" ".join(figures))}
    return {name for _, name, own in _results(messages) if wanted & {value for _, value in own}}


def takes_a_figure(calls: Sequence[ToolCall], messages: Sequence[Message], also: Sequence[str] = ()) -> bool:
    """Whether one of ``calls`` takes a figure of the user's last question (or one of ``also``: results the
    answer left out, :func:`ignored`).

    Made to call a tool after a typed answer of "Fill in the form: I bought 3 books at 12 USD each.", the
    0.5B model called ``fx(320, "USD")``, the example of ``fx``'s docstring: a call that takes none of the
    question's figures serves it no better than the answer it replaced."""
    asked = {value for _, value, _ in _numbers(" ".join([last_question(messages), *also]))}
    return bool(asked & _taken(calls))


def invented(calls: Sequence[ToolCall], messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[str]:
    """The figures in ``calls``' arguments that nothing gave: not the user's or system's text, not a tool's
    result, not a default the tool declares (numbers under 10 written without a decimal point left alone).

    Offered a tool, the 0.5B model writes a call for nearly every question: "What's the capital of France?"
    became ``fx(120, "USD")``, a stock price ``fx(1000, "USD")``. A call on a figure the model made up
    answers nothing the user asked, and its result reads like an answer.
    """
    given = _sources(messages, calls=False)
    given += [value for t in tools for _, value, _ in _numbers(json.dumps(_defaults(t.parameters)))]
    out: list[str] = []
    for call in calls:
        for written, value, decimals in _numbers(json.dumps(call.arguments or {}, ensure_ascii=False)):
            if (decimals == 0 and abs(value) < 10) or value in given or written in out:
                continue
            out.append(written)
    return out


def _lineage(messages: Sequence[Message]) -> dict[float, tuple[set[str], set[float]]]:
    """Each figure tool results gave since the user's last question (not one its call passed in), with the
    tools it came out of and the figures it was made from, directly or through earlier results: 3002.6 from
    ``calc("2297.6 + 705.0")`` came out of ``calc`` and of the ``fx`` calls that gave 2297.6 and 705.0."""
    out: dict[float, tuple[set[str], set[float]]] = {}
    last = question_index(messages)
    calls = {c.id: c for m in messages[max(last, 0) :] for c in m.tool_calls}
    for message in messages[last:] if last >= 0 else ():
        for result in message.tool_results:
            call = calls.get(result.call_id)
            if call is None or not _answers(result):
                continue
            inputs = _taken([call])
            tools, figures = {call.name}, set(inputs)
            for value in inputs & out.keys():
                tools, figures = tools | out[value][0], figures | out[value][1]
            for _, value, decimals in _numbers(result.text):
                if (decimals or abs(value) >= 10) and value not in inputs:
                    before = out.get(value, (set(), set()))
                    out[value] = (before[0] | tools, before[1] | figures)
    return out


def fed_back(calls: Sequence[ToolCall], messages: Sequence[Message]) -> list[str]:
    """The figures ``calls`` pass, as a whole argument, back to a tool they came out of since the user's last
    question (:func:`_lineage`).

    After ``fx(320, "USD")`` gave "320 USD = 2297.6 CNY" and ``fx(15000, "JPY")`` 705.0, the 1.5B model asked
    the seed's trip question called ``fx(2297.6, "USD")``, converting the yuan again as dollars, and answered
    with that result (in Chinese it fed each result back until the step limit); once ``calc`` had added them
    up, it called ``fx(3002.6, "USD")``. A result is what a tool turned its input into: passed back whole, it
    goes through the tool twice. A result inside a longer argument is left alone (``calc("3002.6 / 4")``
    after ``calc`` gave 3002.6 is a next step)."""
    lineage = _lineage(messages)
    out: list[str] = []
    for call in calls:
        for value in (call.arguments or {}).values():
            whole = _NUMBER.fullmatch(value.strip()) if isinstance(value, str) else None
            number = float(whole.group(0).replace(",", "")) if whole else value
            if isinstance(number, int | float) and not isinstance(number, bool):
                written = whole.group(0) if whole else json.dumps(number)
                if call.name in lineage.get(number, ((), ()))[0] and written not in out:
                    out.append(written)
    return out


def reused(calls: Sequence[ToolCall], messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> list[str]:
    """The figures ``calls`` take that calls answered since the user's last question took already, as often as
    the question and the tools' results gave them. A call that repeats an answered one whole is left to
    :func:`.local_chat.fresh_calls` (the answer is decoded instead), unless figures wait for a tool
    (:func:`pending`) and ``tools`` offer another: after both conversions, the 1.5B model sampled at 0.7 called
    ``fx(320, "USD")`` again, and the answer forced instead added them up in its head (2 of 4 seeds).

    After ``fx`` had turned 320 USD into 2297.6 CNY and 15000 JPY into 705.0, and ``calc`` had added them up,
    the 1.5B model asked the seed's trip question called ``calc("320 + 15000")``, dollars plus yen; after
    ``calc("3002.6 / 4")`` gave 750.65 it called ``calc("3002.6 / 4 / 4")``, and so on to the step limit. A
    figure a call took has given its answer; taken again, it mixes up what a step turned it into with what it
    was, or repeats the step. A question that gives a figure twice ("100 USD and 100 EUR") may use it twice.
    """
    last = question_index(messages)
    if last < 0:
        return []
    given = Counter(value for _, value, decimals in _numbers(messages[last].text) if decimals or abs(value) >= 10)
    given.update(value for _, _, own in _results(messages) for _, value in own)
    answered = {r.call_id for m in messages[last:] for r in m.tool_results if _answers(r)}
    taken = Counter(value for c in _moving(messages[last:]) if c.id in answered for value in _taken([c]))
    out: list[str] = []
    whole = len({t.name for t in tools}) > 1 and pending(messages)
    for call in calls if whole else fresh_calls(calls, messages):
        for written, value, decimals in _numbers(json.dumps(call.arguments or {}, ensure_ascii=False)):
            if (decimals or abs(value) >= 10) and taken[value] >= given[value] > 0 and written not in out:
                out.append(written)
    return out


def guesses(calls: Sequence[ToolCall], messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[str]:
    """The figures of ``calls`` that answer no part of the question: made up (:func:`invented`), fed back to the
    tool that gave them (:func:`fed_back`) or taken again (:func:`reused`). Such calls are never run as
    written."""
    return invented(calls, messages, tools) + fed_back(calls, messages) + reused(calls, messages, tools)


def _defaults(schema: Any) -> list[Any]:
    """The ``default`` values anywhere in a JSON Schema."""
    if isinstance(schema, dict):
        own = [schema["default"]] if "default" in schema else []
        return own + [d for value in schema.values() for d in _defaults(value)]
    if isinstance(schema, list):
        return [d for item in schema for d in _defaults(item)]
    return []


STEER = (
    "Call a tool for every figure the question does not give you: conversions, rates, sums, splits. Never work "
    "a figure out yourself."
)
"""Added to the system prompt whenever tools are offered. Without it the 0.5B model, asked the seed's trip
question, began "To solve this problem, we need to convert..." and computed in its head (English) or
refused (Chinese). Its first token, on seven questions (the trip in both languages, Paris's weather, 100
EUR in yuan: a call is right; the capital of France, a haiku, Hamlet's author: no call): 4 of 7 right
with no line, 7 of 7 with this one; "(a rate, a conversion, a measurement, a sum, a split)" made 5 of 7,
the line at the end of the question 4 of 7, and the answer's JSON Schema in the system prompt beside it
4 of 7, so the schema is shown only to the typed answer (issue 36)."""


def steered(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with :data:`STEER` at the end of the system prompt (a system prompt of its own if none), and
    the question quoted after the last results once the work on its figures is done (:func:`computing`, nothing
    :func:`pending`): sampled at 0.7 after the seed's trip's four right calls, the 1.5B model answered "each
    person should pay 750.65 CNY" alone, the total asked for first left out."""
    out = with_system_note(messages, STEER)
    return answer_messages(out) if computing(out) and not pending(out) else out


def unsteered(messages: Sequence[Message]) -> list[Message]:
    """``messages`` without :data:`STEER` (wherever notes after it put it): for an answer decoded with no tool
    offered, where a line asking for calls made the 0.5B model refuse."""
    if not messages or messages[0].role != "system" or STEER not in messages[0].text:
        return list(messages)
    notes = [note for note in messages[0].text.split("\n\n") if note != STEER]
    return ([Message.system("\n\n".join(notes))] if notes else []) + list(messages[1:])


NUDGE = "Call the tool that gives it now; if no tool can, say that you could not get it."
_GUESSED = "An answer with {figures} would be a guess: neither my question nor any tool result gives it."
_UNUSED = "My question's {figures} went into no tool call yet."
_DROPPED_RESULTS = "Your answer leaves out the tool results' {figures}."
_COMBINE = "Use a tool to combine {figures} with {others}."
_USE = "Answer with it."
_SPELLED = "Do not write the tool calls out for me: make them."
_COULD_NOT = "The tools had no data for this question. Tell me you could not find it."
"""After results that all failed. Phrased "...: say that you could not find it.", the 1.5B model wrote the line
itself as its answer for 伦敦 and 成都 (2 of 4 cities); with no request at all, it gave Paris 22 °C and Lhasa 10 °C."""
_GUESSED_CALL = "A call on {figures} would be a guess: neither my question nor any tool result gives it."
_INSTEAD = "Call the tool that gives it now."
_FED_BACK = "{figures} already came out of {tools}: a call of {tools} on it would apply it twice."
_REUSED = "{figures} went into a tool call already: use the result that call gave."

ASKED_AGAIN = "asked_again"
"""``ModelResponse.extra`` key: the first answer, when its figures made the provider ask once more."""

DROPPED = "dropped_calls"
"""``ModelResponse.extra`` key: calls not run, the turn answered instead: written on figures nothing gave
(:func:`invented`), or cut short by the output limit."""

REWRITTEN = "rewritten_calls"
"""``ModelResponse.extra`` key: calls on made-up figures (:func:`invented`), which the model was asked to write
again (what it wrote instead ran, unless it made figures up too: then it was dropped)."""

UNGROUNDED = "ungrounded"
"""``ModelResponse.extra`` key: the figures of the answer that neither the conversation nor a tool gave."""


_OPENERS = (
    "抱歉", "很抱歉", "对不起", "我无法", "我不能", "sorry", "i'm sorry", "i am sorry", "i cannot", "i can't",
    "i'm unable", "i am unable", "unfortunately",
)  # fmt: skip
"""How the 0.5B model's refusals begin: "抱歉，我无法提供这个工具的响应。" right after a result that answered."""
_CANNOT = re.compile(r"could not|couldn't|cannot|can't|unable|no data|not available|sorry|无法|不能|抱歉|没有", re.I)
"""An answer that says it could not (anywhere in it, not only at its start as :data:`_OPENERS`)."""
_NOT_ANSWERED = re.compile(r"error|refused|failed|no data|not supported|unknown|invalid", re.IGNORECASE)


def _answers(result: ToolResult) -> bool:
    """Whether a tool result gave what was asked: not an error, and not a refusal or a "no data" in words."""
    return not result.is_error and not _NOT_ANSWERED.search(result.text)


_CJK = re.compile(r"[\u4e00-\u9fff]")
_FROM_RESULTS = {
    "en": "Answer my question only from the tool results above.",
    "zh": "请只根据上面的工具结果，用中文回答我的问题。",
}
"""Said after a refusal (or a repeated question) that followed a result which answered. Said after every
result, the same line fixed the Chinese refusals but made the model refuse Beijing's weather in English
and write "零度" for a city with no data (issue 37); so it is said only when the answer failed."""
_ECHOED = {"en": "You repeated my question instead of answering it.", "zh": "你只重复了我的问题，没有回答。"}


def _plain(text: str) -> str:
    """``text``'s letters and digits, lower-cased: what is left to compare of a question and an answer."""
    return "".join(c for c in text.lower() if c.isalnum())


def failed(messages: Sequence[Message]) -> set[str]:
    """The tools called since the user's last question when every result since then failed (an error, "no
    data"...), else none: what the answer has to say it could not get, not work out.

    Asked "成都今天多少度？要带伞吗？", the weather tool returned ``{"error": "no weather data for 成都"}`` and the
    1.5B model answered "The current temperature in 成都 is 22 degrees Celsius" (the tool's own docstring says
    "say that no data exists, do not guess")."""
    last = question_index(messages)
    results = [r for m in messages[last:] for r in m.tool_results] if last >= 0 else []
    if not results or any(_answers(r) for r in results):
        return set()
    return {c.name for m in messages[last:] for c in m.tool_calls}


def unsaid(answer: str, messages: Sequence[Message]) -> str:
    """``answer`` without the sentences of the fixed lines said to the model (:data:`_COULD_NOT`, the quoted question
    of :func:`.local_chat.answer_line`, :data:`NUDGE`, :data:`_SPELLED`, :data:`_FROM_RESULTS`; not the lines that
    name figures) that it repeats word for word, or ``answer`` as it is if nothing else is left.
    Asked "杭州现在多少度？我该穿外套吗？" after the weather tool had no data for 杭州, the
    1.5B model answered "The tools did not have data for this question. Tell me you could not find it. Now answer my
    question (杭州现在多少度？我该穿外套吗？) using the tool results above." (greedy, from a clean clone)."""
    lines = [_COULD_NOT, answer_line(messages), NUDGE, _SPELLED, *_FROM_RESULTS.values()]
    sentences = {s for line in lines for s in re.split(r"(?<=[.!?。！？])\s+", line) if s}
    left = answer
    for sentence in sorted(sentences, key=len, reverse=True):  # a longer one may hold a shorter one
        left = left.replace(sentence, "")
    left = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]{2,}", " ", left)).strip()
    return left if left != answer.strip() and any(c.isalnum() for c in left) else answer


def told_failed(messages: Sequence[Message]) -> list[Message]:
    """``messages``, with a line saying the tools found no data when every result since the question failed: for
    the answer decoded after a repeated call. The 1.5B model called the weather tool again for 成都 after its
    error, and the answer forced instead gave "22 degrees Celsius" (and 10 °C for Lhasa)."""
    return _said(messages, _COULD_NOT) if failed(messages) else list(messages)


def _answered(messages: Sequence[Message]) -> bool:
    """Whether the conversation ends with tool results, one of which answered (not an error, no data...)."""
    last = messages[-1] if messages else None
    if last is None or last.role != "tool":
        return False
    return any(_answers(r) for r in last.tool_results)


def refuses(answer: str, messages: Sequence[Message]) -> bool:
    """Whether ``answer`` is a refusal with no figure, of tool results that answered the whole question.

    A refusal that follows only failed results ("no weather data for Paris") is the right answer and is
    left alone; so is one while some figure of the question went into no call (:func:`unused`): asked
    again, the model answered with the part it had ("320 USD = 2297.6 CNY" to the seed's trip, "3 USD =
    21.54 CNY" to three 4.5-dollar coffees) or called tools to the step limit, where it had said it could
    not (newcomer questions, 6 Dec 2026)."""
    opens = answer.lstrip().lower().startswith(_OPENERS)
    return opens and not any(_numbers(answer)) and _refusable(messages)


def _refusable(messages: Sequence[Message]) -> bool:
    return _answered(messages) and not unused(messages)


def echoes(answer: str, messages: Sequence[Message]) -> bool:
    """Whether ``answer`` only repeats the user's question: the 0.5B model answered "北京现在华氏多少度？"
    with those very words after the tool gave 82 °F, and "哈尔滨冷不冷？" without calling it."""
    question = _plain(last_question(messages))
    return bool(question) and _plain(answer) == question


def nudged(messages: Sequence[Message], answer: str, typed: bool = False) -> list[Message] | None:
    """``messages`` with a line saying what is wrong with ``answer``, or ``None`` if nothing is: figures the
    model wrote itself, figures of the question no call took, the question repeated, or a refusal of results
    that answered.

    Added after the conversation when the model is asked once more (in the prompt only).
    """
    guessed, refused, echoed = ungrounded(answer, messages), refuses(answer, messages), echoes(answer, messages)
    # Once a result answered, an answer to work on the question's figures that gives no figure at all ("You're
    # welcome!", sampled at 0.7 after the trip's first or last call) is no answer; one that says it could not stands:
    # asked again after "I could not", the model answered with the part it had or called to the step limit.
    bare = computing(messages) and not (any(_numbers(answer)) or refused or echoed or _CANNOT.search(answer))
    skipped = unused(messages, typed) if typed or echoed or bare or any(_numbers(answer)) else []
    left = ignored(answer, messages)
    if not (guessed or skipped or refused or echoed or left or bare):
        return None
    language = "zh" if _CJK.search(last_question(messages)) else "en"
    lines = [_ECHOED[language]] if echoed else []
    lines += [_GUESSED.format(figures=", ".join(guessed))] if guessed else []
    lines += [_UNUSED.format(figures=", ".join(skipped))] if skipped else []
    lines += [_DROPPED_RESULTS.format(figures=", ".join(left))] if left else []
    waiting = pending(messages)
    # Once nothing waits for a tool, the answer comes from the results: told "Call the tool that gives it now; if no
    # tool can, say that you could not get it." after the trip's four right calls and an answer of its own
    # (17297.6 CNY), the 1.5B model answered "I could not get it." (greedy, "我这次出差一共花了...", untuned).
    done = (bare or (guessed and computing(messages))) and not waiting  # computing: a result answered, none failed
    if refused or done or (echoed and _answered(messages)):
        lines.append(_FROM_RESULTS[language])
    elif guessed and failed(messages):
        lines.append(_COULD_NOT)
    elif (guessed or bare) and len(untaken(messages)) > 1:  # in its head, or nothing, where results wait to be combined
        lines.append(_guessed_instead(messages))
    else:
        lines.append(_leftover(left, messages) if left and not guessed else NUDGE)
    return _said(messages, " ".join(lines))


def reconsidered(
    messages: Sequence[Message], answer: str, calls: Sequence[ToolCall], tools: Sequence[ToolSpec], typed: bool
) -> list[Message] | None:
    """``messages`` with what is wrong with this turn (:func:`nudged` for an answer; for calls, the figures they
    made up), or ``None`` if nothing is.

    Asked the seed's trip question for a typed answer, the 1.5B model's first call was
    ``calc("(320+15000)*0.62")``, a rate of its own, and its answer was built on that result: the tool's
    result carried the made-up rate as a tool's data. Dropped at once, the call would leave a typed answer
    with no call at all; written again with ``calc`` left out, it was ``fx(320, "USD")``."""
    if not calls and pending(messages) and _spelled(answer, tools):  # a call is due, and it says which
        lines = [_UNUSED.format(figures=", ".join(skipped))] if (skipped := unused(messages, True)) else []
        return _said(messages, " ".join([*lines, _SPELLED]))
    if not calls:
        return nudged(messages, answer, typed)
    guessed, again, twice = invented(calls, messages, tools), fed_back(calls, messages), reused(calls, messages, tools)
    if not (guessed or again or twice):
        return None
    lines = [_GUESSED_CALL.format(figures=", ".join(guessed))] if guessed else []
    if again:
        names = " and ".join(sorted({c.name for c in calls if fed_back([c], messages)}))
        lines.append(_FED_BACK.format(figures=", ".join(again), tools=names))
    lines += [_REUSED.format(figures=", ".join(twice))] if twice else []
    if skipped := unused(messages, typed):  # the question's figure the guess stands in for
        lines.append(_UNUSED.format(figures=", ".join(skipped)))
    combine = guessed or (twice and len(untaken(messages)) > 1)  # a repeat, say, while results wait to be combined
    rest = _guessed_instead(messages) if combine else _leftover(again, messages, made_of=True) if again else ""
    lines += [rest] if rest and not (rest == _USE and skipped) else []  # a figure of the question is left
    return _said(messages, " ".join(lines))


def _spelled(answer: str, tools: Sequence[ToolSpec]) -> bool:
    """Whether ``answer`` writes out a call of one of ``tools`` (``calc(...)`` in a program, in a sentence) instead
    of making it: sampled at 0.7, the 1.5B model answered the seed's trip with a JavaScript program calling
    ``calc`` and ``fx``, and later said "you would use the `calc` function with the expression `2297.6 + 705.0`"."""
    return any(re.search(rf"(?<![\w.]){re.escape(t.name)}`?\s*\(|`{re.escape(t.name)}`", answer) for t in tools)


def _guessed_instead(messages: Sequence[Message]) -> str:
    """What to do instead of a call on a made-up figure: combine the results no call took yet, if there are
    two or more (:func:`untaken`), or call the tool that gives the figure."""
    left = untaken(messages)
    return _COMBINE.format(figures=left[0], others=", ".join(left[1:])) if len(left) > 1 else _INSTEAD


def _said(messages: Sequence[Message], line: str) -> list[Message]:
    """``messages`` with ``line`` after the conversation: in the last user or tool message, else a new one."""
    out = list(messages)
    line = "\n\n" + line
    if out and out[-1].role in ("user", "tool"):
        out[-1] = replace(out[-1], parts=(*out[-1].parts, Text(text=line)))
    else:
        out.append(Message.user(line))
    return out


def _leftover(left: Sequence[str], messages: Sequence[Message], *, made_of: bool = False) -> str:
    """What to do with results the answer left out: combine them with the other results' figures through a
    tool, or answer with the one result. Told only which figure it left out, the 0.5B model called ``fx`` on
    it as an amount; told to combine it "with the other results", it added the question's 15000 JPY. With
    ``made_of``, the figures ``left`` were made from are no others (3002.6 is 2297.6 and 705.0 combined)."""
    lineage = _lineage(messages) if made_of else {}
    parts = {f for _, value, _ in _numbers(" ".join(left)) for f in lineage.get(value, ((), ()))[1]}
    others = [w for _, _, own in _results(messages) for w, value in own if w not in left and value not in parts]
    return _COMBINE.format(figures=", ".join(left), others=", ".join(others)) if others else _USE


_WAITING = 500
"""Characters of an answer held while figures wait for a tool (:attr:`FigureGate.waiting`): about 120 tokens. The
0.5B model's story then began 9 s after the command started (the load included), where all of it came at 31 s."""


@dataclass
class FigureGate:
    """What of a streamed answer may be shown before its figures are checked: everything up to the first figure
    that nothing given to the model supports (:func:`ungrounded`).

    A figure is held until it is whole (``3,0`` may go on as ``3,002.6``), then passed on if the question, the
    system prompt, a call or a tool result gave it, and otherwise the gate closes: the rest waits for the
    answer's check, which may ask again or mark it. Closing at the first digit instead held back a whole
    story after its first grounded number, and ``run | head`` then waited for the end of the answer."""

    on: bool
    messages: Sequence[Message] = ()
    tools: Sequence[ToolSpec] = ()
    closed: bool = False
    held: str = ""
    waiting: str | None = None
    """While figures wait for a tool (:func:`pending`), the answer so far: held until it is :data:`_WAITING`
    characters long with no figure of its own and no call of ``tools`` written out in it (:func:`_spelled`), then
    streamed as any other.
    A worked answer shows its own figure or the call it means well before that ("Let's break it down step by
    step. ... Assume the current rate is approximately 6.75"), and is asked again; held whole, "Write a long
    story, at least 600 words" showed nothing for 30 s (the 0.5B model), and Ctrl-C found it all on screen."""
    opening: str | None = None
    """The answer's first words while they may still be a refusal of a result that answered or the question
    repeated (held whole: the provider may ask again, and streamed text could not be taken back); ``None``
    once past them."""

    asked: str = field(init=False, default="")
    """The user's question as :func:`_plain` has it, for telling whether the answer so far repeats it."""
    refusable: bool = field(init=False, default=False)
    """Whether a refusal here would be asked again (:func:`refuses`)."""

    def __post_init__(self) -> None:
        if self.on:
            self.opening, self.asked = "", _plain(last_question(self.messages))
            self.refusable = _refusable(self.messages)
            # Held whole where an answer with figures of its own is asked again, not shown up to the figure and
            # marked: every result failed ("The current temperature in 成都 is 22"), or the answer reports work on
            # the question's figures; held for a while where a tool has figures to take.
            self.closed = bool(failed(self.messages)) or computing(self.messages)
            self.waiting = "" if pending(self.messages) else None

    def let(self, piece: str) -> str:
        """The part of ``piece`` (after what was held) to pass on now."""
        if self.closed or not self.on:
            return "" if self.closed else piece
        if self.waiting is not None:
            self.waiting += piece
            if len(self.waiting) < _WAITING or _spelled(self.waiting, self.tools):
                return ""
            if ungrounded(self.waiting, self.messages):  # a worked answer after all: held to the end
                self.closed = True
                return ""
            piece, self.waiting = self.waiting, None
        if self.opening is not None:
            self.opening += piece
            head = self.opening.lstrip().lower()
            if self.refusable and any(o.startswith(head) or head.startswith(o) for o in _OPENERS):
                self.closed = head.startswith(_OPENERS)  # a refusal: held to the end
                return ""
            if self.asked.startswith(_plain(head)):  # the question again, so far
                return ""
            piece, self.opening = self.opening, None
        text, self.held, shown, at = self.held + piece, "", [], 0
        while (start := next((i for i in range(at, len(text)) if text[i].isdigit()), None)) is not None:
            end = start
            while end < len(text) and (text[end].isdigit() or text[end] in ",." and text[end + 1 : end + 2].isdigit()):
                end += 1
            if end >= len(text) - 1 and (end == len(text) or text[end] in ",."):  # it may go on in the next piece
                shown.append(text[at:start])
                self.held = text[start:]
                return "".join(shown)
            if ungrounded(text[max(0, start - 1) : end + 1], self.messages):
                self.closed = True
                return "".join([*shown, text[at:start]])
            shown.append(text[at:end])
            at = end
        return "".join([*shown, text[at:]])


def response_extra(
    ignored: tuple[str, ...],
    unsupported: Sequence[str],
    doubted: str | None,
    dropped: Sequence[ToolCall] = (),
    rewritten: Sequence[ToolCall] = (),
) -> dict[str, Any]:
    """``ModelResponse.extra``: the settings ignored, the answer's figures no tool gave, the answer asked again,
    the calls dropped (never run: the turn was decoded again as an answer), the calls asked again."""
    extra: dict[str, Any] = {IGNORED: ignored} if ignored else {}
    for key, calls in ((DROPPED, dropped), (REWRITTEN, rewritten)):
        if calls:
            extra[key] = tuple({"name": c.name, "arguments": c.arguments} for c in calls)
    if unsupported:
        extra[UNGROUNDED] = tuple(unsupported)
    if doubted:
        extra[ASKED_AGAIN] = doubted
    return extra


def marked(answer: str, figures: Sequence[str]) -> str:
    """``answer`` with a line saying which of its figures no tool gave."""
    return f"{answer}\n\n{not_from_a_tool(figures)}"


def not_from_a_tool(figures: Sequence[str]) -> str:
    """The line that says which figures no tool gave: at the end of a text answer, beside a typed one."""
    listed = ", ".join(figures)
    return f"[not from a tool: {listed} — the model wrote these figures itself; no tool result gave them]"
