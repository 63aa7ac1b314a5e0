"""Scripted answers: the turn shorthand, and demo models that play the seed's examples without a network.

A *turn* is a model's answer written the short way: a string is an answer, ``call("fx", amount=320)`` a
slip, a list of calls a parallel turn; :func:`to_response` makes the :class:`ModelResponse` a provider
would have sent. The demo models below play turns, and so do the test models of :mod:`toolslip.testing`,
which re-exports the shorthand (``from toolslip.testing import call``).

The demos are *stateless*: the turn to play is the number of assistant messages since the user's last
question, and later turns read the tool results already in the transcript. So one instance can serve
any number of concurrent conversations (``toolslip serve --model scripted``), and the final answer is
built from what the tools really returned: a client that loses or misroutes a result gets a different
answer, not a canned one.

Scripts: ``expenses`` (``fx`` + ``calc``: 320 USD and 15000 JPY to CNY, then split four ways),
``weather`` (``get_weather``) and ``smoke`` (one schema-valid call to each offered tool, then a report: a
smoke test of a user's own tools file). Plain ``scripted`` picks the script by the tools the request offers,
``smoke`` for any other tools.

Usage is estimated as a service would count it (:mod:`toolslip.quality.tokens`: o200k tokens of the messages, the
tool declarations and the answer), so clients that budget or log tokens see plausible numbers, not zeros.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import replace
from typing import Any, TypeAlias

from ..core._display import did_you_mean
from ..core.errors import InvalidValue
from ..core.messages import Message, ModelResponse, Part, Request, ToolCall, ToolResult, Usage
from ..formats.schema_example import example_arguments
from ..formats.structured import FINAL_TOOL

__all__ = [
    "SCRIPTS",
    "ScriptedDemo",
    "Turn",
    "call",
    "call_ids",
    "estimate_usage",
    "fresh_id",
    "raw_call",
    "reply",
    "shaped_answer",
    "to_response",
]

# --- turns ------------------------------------------------------------------------------------------------

_ids = itertools.count(1)


def fresh_id() -> str:
    """A call id no scripted turn of this process has used (``call_1``, ``call_2``...)."""
    return f"call_{next(_ids)}"


def call(name: str, /, **arguments: Any) -> ToolCall:
    """A well-formed slip: ``call("fx", amount=320, currency="USD")``."""
    return ToolCall(
        id=fresh_id(), name=name, arguments=arguments, raw_arguments=json.dumps(arguments, ensure_ascii=False)
    )


def raw_call(name: str, raw_arguments: str) -> ToolCall:
    """A slip whose arguments are whatever text the model wrote, malformed JSON included."""
    try:
        parsed = json.loads(raw_arguments)
    except json.JSONDecodeError:
        parsed = None
    return ToolCall(
        id=fresh_id(),
        name=name,
        arguments=parsed if isinstance(parsed, dict) else None,
        raw_arguments=raw_arguments,
    )


def reply(text: str) -> Message:
    """An answer with no tool call: it ends the run."""
    return Message.assistant(text)


Turn: TypeAlias = Message | ModelResponse | str | ToolCall | Iterable[ToolCall]


def to_response(turn: Turn, usage: Usage | None = None, *, taken: Collection[str] = ()) -> ModelResponse:
    """Normalise a scripted turn to a :class:`ModelResponse` with the stop reason a provider would give.

    Call ids are kept as written, except one already in ``taken`` (the ids of the transcript so far) or
    repeated within the turn: a script replayed in one run gets a fresh id there, so ids stay unique.
    """
    if isinstance(turn, ModelResponse):
        return turn
    if isinstance(turn, str):
        message = Message.assistant(turn)
    elif isinstance(turn, ToolCall):
        message = Message.assistant(calls=[turn])
    elif isinstance(turn, Message):
        message = turn
    else:
        message = Message.assistant(calls=list(turn))
    used = set(taken)
    parts: list[Part] = []
    for part in message.parts:
        if isinstance(part, ToolCall):
            if part.id in used or not part.id:
                fresh = fresh_id()
                while fresh in used:  # a resumed run's transcript holds the ids an earlier process gave out
                    fresh = fresh_id()
                part = replace(part, id=fresh)
            used.add(part.id)
        parts.append(part)
    message = Message(role="assistant", parts=tuple(parts), name=message.name, extra=message.extra)
    return ModelResponse(
        message=message,
        stop_reason="tool_use" if message.tool_calls else "end_turn",
        usage=usage or Usage(input_tokens=0, output_tokens=0),
    )


def call_ids(request: Request) -> set[str]:
    """The ids of every call already in the request's transcript."""
    return {c.id for m in request.messages for c in m.tool_calls}


# --- the demos ------------------------------------------------------------------------------------------

_CNY = re.compile(r"=\s*(-?[\d.]+)\s*CNY")


def _turn(request: Request) -> int:
    """How many assistant turns this conversation already holds since the user last asked."""
    turn = 0
    for message in reversed(request.messages):
        if message.role == "user":
            break
        turn += message.role == "assistant"
    return turn


def _results(request: Request) -> list[tuple[str, ToolResult]]:
    """``(tool name, result)`` for every result since the user last asked, in transcript order."""
    start = max((i for i, m in enumerate(request.messages) if m.role == "user"), default=-1) + 1
    names = {c.id: c.name for m in request.messages[start:] for c in m.tool_calls}
    return [(names.get(r.call_id, r.name or ""), r) for m in request.messages[start:] for r in m.tool_results]


def expenses(request: Request) -> Turn:
    """The seed's agent run: two ``fx`` calls, two ``calc`` calls, then the answer, one call per turn."""
    turn = _turn(request)
    if turn == 0:
        return call("fx", amount=320, currency="USD")
    if turn == 1:
        return call("fx", amount=15000, currency="JPY")
    converted = [m.group(1) for name, r in _results(request) if name == "fx" and (m := _CNY.search(r.text))]
    if len(converted) < 2:
        return "I did not get both currency conversions back from fx, so I cannot add them up."
    sums = [r.text.strip() for name, r in _results(request) if name == "calc" and not r.is_error]
    if turn == 2:
        return call("calc", expr=f"{converted[0]} + {converted[1]}")
    if turn == 3 and sums:
        return call("calc", expr=f"{sums[0]} / 4")
    if len(sums) < 2:
        return "The calculator did not answer, so I cannot give the total."
    text = (
        f"320 USD is {converted[0]} CNY and 15000 JPY is {converted[1]} CNY, "
        f"{sums[0]} CNY in total; split between 4 people that is {sums[1]} CNY each."
    )
    facts = {"total": sums[0], "per person": sums[1], "each": sums[1], "usd": converted[0], "jpy": converted[1]}
    return shaped_answer(request, text, facts)


# --- answers in the shape a request asks for (structured output) -----------------------------------------


def shaped_answer(request: Request, text: str, facts: Mapping[str, str]) -> Turn:
    """``text``, or the same answer as the JSON the request asks for: in its structured-output schema
    (``Request.output``), as a call of the offered final-answer tool, or as the JSON Schema the system
    prompt shows. Each number field takes the fact whose words its name contains (``total_cny`` takes
    ``total``); a string field takes ``text``."""
    schema, as_call = _asked_shape(request)
    if schema is None:
        return text
    value = _fill(schema, text, facts)
    if as_call:
        return call(FINAL_TOOL, **value) if isinstance(value, dict) else text
    return json.dumps(value, ensure_ascii=False)


def _asked_shape(request: Request) -> tuple[Mapping[str, Any] | None, bool]:
    if request.output is not None:
        return request.output.schema, False
    for spec in request.tools:
        if spec.name == FINAL_TOOL:
            return spec.parameters, True
    system = request.messages[0].text if request.messages and request.messages[0].role == "system" else ""
    at = system.find("JSON Schema")
    start = system.find("{", at) if at >= 0 else -1
    if start >= 0:
        try:
            shown = json.JSONDecoder().raw_decode(system[start:])[0]
        except json.JSONDecodeError:
            return None, False
        return (shown, False) if isinstance(shown, dict) else (None, False)
    return None, False


def _fill(schema: Mapping[str, Any], text: str, facts: Mapping[str, str]) -> Any:
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    for branch in schema.get("anyOf") or ():
        if isinstance(branch, dict) and branch.get("type") != "null":
            return _fill(branch, text, facts)
    if "object" in kinds and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or ())
        fields = {name: _field(name, sub, text, facts) for name, sub in schema["properties"].items()}
        return {name: value for name, value in fields.items() if name in required or value is not None}
    if "string" in kinds:
        return text
    return None


def _field(name: str, schema: Any, text: str, facts: Mapping[str, str]) -> Any:
    kinds = schema.get("type") if isinstance(schema, dict) else None
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "number" in kinds or "integer" in kinds:
        words = set(re.split(r"[^a-z0-9]+", name.lower()))
        for fact, number in facts.items():
            if set(fact.split()) <= words:
                return int(float(number)) if "number" not in kinds else float(number)
        return None if "null" in kinds else 0
    if not isinstance(schema, dict) or "null" in kinds or {"type": "null"} in (schema.get("anyOf") or ()):
        return None  # an optional field stays empty
    return _fill(schema, text, facts)


def weather(request: Request) -> Turn:
    """The seed's weather round trip: one ``get_weather`` call, then an answer from its result."""
    if _turn(request) == 0:
        return call("get_weather", city="北京", unit="celsius")
    found = [r for name, r in _results(request) if name == "get_weather"]
    try:
        data = json.loads(found[-1].text) if found else {}
    except json.JSONDecodeError:
        data = {}
    if not isinstance(data, dict) or "temp" not in data:
        return f"I could not get the weather: {found[-1].text if found else 'no result came back'}"
    unit = "°C" if data.get("unit") == "celsius" else "°F"
    coat = "take a light jacket" if data.get("unit") == "celsius" and data["temp"] < 25 else "no coat needed"
    return f"It is {data['temp']} {unit} and {data.get('desc', '')} in {data.get('city', '')}: {coat}."


def smoke(request: Request) -> Turn:
    """The smoke test of a user's tools: one schema-valid call to each offered tool, all in one turn (a tool
    whose schema defeats :func:`~toolslip.formats.schema_example.example_arguments` is skipped, never called
    with bad arguments), then an answer listing what each call returned."""
    tools = [spec for spec in request.tools if spec.name != FINAL_TOOL]  # the typed answer's tool is no user tool
    if not tools:
        return shaped_answer(request, "This is toolslip's scripted demo model; no tools were offered to try.", {})
    planned = [
        (spec.name, arguments) for spec in tools if (arguments := example_arguments(spec.parameters)) is not None
    ]
    if _turn(request) == 0 and planned:  # one turn of calls, so any number of tools fits the step limit
        return [call(name, **arguments) for name, arguments in planned]
    lines = [f"Smoke test by toolslip's scripted demo model: {len(planned)} of {len(tools)} tools called."]
    for name, result in _results(request):
        text = " ".join(result.text.split())
        lines.append(
            f"- {name}: {'ERROR' if result.is_error else 'ok'}: {text if len(text) <= 120 else text[:117] + '...'}"
        )
    called = {name for name, _ in planned}
    lines += [
        f"- {s.name}: not called: no arguments made here satisfy its schema" for s in tools if s.name not in called
    ]
    return shaped_answer(request, "\n".join(lines), {})  # a client asking for a schema still gets JSON in it


SCRIPTS: dict[str, Callable[[Request], Turn]] = {"expenses": expenses, "weather": weather, "smoke": smoke}


def _pick(request: Request) -> Callable[[Request], Turn]:
    offered = {t.name for t in request.tools}
    if {"fx", "calc"} <= offered:
        return expenses
    if "get_weather" in offered:
        return weather
    return smoke


class ScriptedDemo:
    """A stateless scripted :class:`~toolslip.core.model.Model`; ``script=None`` picks one from the tools.

    Asked for structured output it answers the JSON the request's schema asks for (``shaped_answer``)."""

    output_mode = "native"
    """A typed answer is asked for in ``Request.output`` by default (see ``toolslip.agent.answers``)."""

    def __init__(self, script: str | None = None) -> None:
        if script is not None and script not in SCRIPTS:
            hint = did_you_mean(script, SCRIPTS)
            raise InvalidValue(f"there is no scripted demo {script!r}{hint}; choose one of: {', '.join(SCRIPTS)}")
        self._script = SCRIPTS[script] if script else None
        self.name = f"scripted:{script}" if script else "scripted"

    async def complete(self, request: Request) -> ModelResponse:
        script = self._script or _pick(request)
        response = to_response(script(request), taken=call_ids(request))
        return dataclasses.replace(response, model=response.model or self.name, usage=estimate_usage(request, response))


def estimate_usage(request: Request, response: ModelResponse) -> Usage:
    """Tokens in and out as OpenAI would count this chat request and answer (see :func:`request_tokens`)."""
    from ..quality.tokens import count_tokens, message_texts, request_tokens

    return Usage(
        input_tokens=request_tokens(request),
        output_tokens=max(1, sum(count_tokens(message_texts(response.message)))),
    )
