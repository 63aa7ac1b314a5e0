"""How the embedded model is spoken to: its own chat template, a tool-call grammar and a lenient parser.

Three things together made a 0.5B model call tools reliably (issue 3's measurements): the prompt is
the GGUF's own chat template rendered with the tools (the format the model was trained on), the
output is constrained by a llama.cpp grammar built from the tools' JSON Schemas (a call is always
well-formed JSON naming a real tool) with a branch for a plain-text answer, and the loop's
repeated-call guard (:mod:`toolslip.durable.repeats`). The parser still accepts what an unconstrained model
writes (untagged JSON, fenced blocks) so a path to any GGUF works with the grammar switched off.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..core.errors import ConfigError
from ..core.messages import Image, Message, ProviderPart, Text, ToolCall, ToolResult, ToolSpec

ANSWER_PROMPT = "Using the tool results above, answer my question now."
"""Added after the tool results when the model is made to answer instead of repeating a call (in the
prompt only). The loop's RepeatGuard measured it: without it the 0.5B model's forced answer held the
temperature in 0 of 4 weather questions ("Sorry, but I can't assist with that."), with it in 4 of 4."""

QUOTED_ANSWER_PROMPT = "Now answer my question ({question}) using the tool results above."
"""What the model's own repeat guard adds instead, with the user's last question quoted. With
:data:`ANSWER_PROMPT` under a system prompt of the caller's own ("Answer weather questions with the tool.",
as the OpenAI Agents SDK's examples write) the 0.5B model repeated the question as its answer in 2 of 3
weather questions; with the question quoted, 9 of 9 answered across three system prompts (issue 36)."""

__all__ = [
    "ANSWER_PROMPT",
    "CONTINUATION",
    "QUOTED_ANSWER_PROMPT",
    "ChatTemplate",
    "answer_line",
    "answer_messages",
    "calls_rule",
    "fresh_calls",
    "parse_output",
    "last_question",
    "once_each",
    "question_index",
    "tool_grammar",
    "with_system_note",
]


def with_system_note(messages: Sequence[Message], note: str) -> list[Message]:
    """``messages`` with ``note`` at the end of the system prompt (a system prompt of its own if none): how the
    embedded model's provider adds a line of its own to what the caller sent, in the prompt only."""
    if messages and messages[0].role == "system":
        return [Message.system(f"{messages[0].text}\n\n{note}"), *messages[1:]]
    return [Message.system(note), *messages]


def _tojson(x: Any, ensure_ascii: bool = False, indent: int | None = None, sort_keys: bool = False) -> str:
    # Transformers' chat-template filter, not jinja2's HTML-escaping one: templates were written for it.
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, sort_keys=sort_keys)


def _raise(message: str) -> None:
    from jinja2.exceptions import TemplateError

    raise TemplateError(message)


class ChatTemplate:
    """The chat template stored in a GGUF's metadata, rendered the way Hugging Face renders it."""

    def __init__(self, source: str, *, bos_token: str = "", eos_token: str = "") -> None:
        # jinja2 arrives with llama-cpp-python (the ``local`` extra), so it is imported only here.
        from jinja2 import BaseLoader
        from jinja2.exceptions import TemplateError
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(
            loader=BaseLoader(), trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
        )
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        try:
            self._template = env.from_string(source)
        except TemplateError as exc:
            raise ConfigError(f"the model's chat template does not parse: {exc}") from exc
        self.bos_token, self.eos_token = bos_token, eos_token

    def render(self, messages: Sequence[Message], tools: Sequence[ToolSpec]) -> str:
        """The prompt text for ``messages`` with ``tools`` offered, ending where the model writes."""
        wire_tools = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": dict(t.parameters)},
            }
            for t in tools
        ]
        from jinja2.exceptions import TemplateError

        calls = {c.id: c for m in messages for c in m.tool_calls}
        try:
            return self._template.render(
                messages=[m for message in messages for m in _template_messages(message, calls)],
                tools=wire_tools or None,
                add_generation_prompt=True,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError as exc:
            raise ConfigError(f"the model's chat template failed to render this conversation: {exc}") from exc


def _template_messages(message: Message, calls: Mapping[str, ToolCall]) -> list[dict[str, Any]]:
    """A neutral message in the OpenAI-like shape chat templates expect (one dict per tool result); ``calls``
    by id, for the results that say nothing of what they are (:func:`_result_text`)."""
    if message.role == "tool":
        out: list[dict[str, Any]] = []
        for r in message.tool_results:
            content = _result_text(r, calls.get(r.call_id))
            out.append({"role": "tool", "tool_call_id": r.call_id, "name": r.name, "content": content})
        trailing = _text(message)
        return out + ([{"role": "user", "content": trailing}] if trailing else [])
    entry: dict[str, Any] = {"role": message.role, "content": _text(message)}
    if message.tool_calls:
        entry["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {
                    "name": c.name,
                    "arguments": dict(c.arguments) if c.arguments is not None else c.raw_arguments,
                },
            }
            for c in message.tool_calls
        ]
    return [entry]


def _text(message: Message) -> str:
    pieces: list[str] = []
    for part in message.parts:
        if isinstance(part, Text):
            pieces.append(part.text)
        elif isinstance(part, Image):
            pieces.append("[an image was attached here; this model cannot see images]")
        # ProviderPart blocks (another vendor's thinking, server-tool output) mean nothing to this model.
        elif not isinstance(part, ProviderPart | ToolCall | ToolResult):  # pragma: no cover - exhaustive
            raise TypeError(f"unknown part {part!r}")
    return "".join(pieces)


_BARE_FIGURE = re.compile(r"\s*-?\d+(?:\.\d+)?\s*")


def _result_text(result: ToolResult, call: ToolCall | None) -> str:
    """The result as the model reads it; a bare figure with the call that returned it.

    The model matches results to calls by their order alone. After ``calc("2297.6 + 705.0")`` gave 3002.6
    and ``calc("3002.6 / 4")`` 750.65, the 1.5B model asked the seed's trip question answered "divide the
    total by 4: 750.65 / 4 = 187.66"; shown ``calc(expr="3002.6 / 4") returned 750.65``, it answered 3002.6
    in total and 750.65 each (greedy, in English and Chinese; sampled at 0.7, 6 of 10 right with the call
    shown or not). A result that says what it is ("320 USD = 2297.6 CNY") is left as it is."""
    text = result.text
    if not isinstance(result.content, str) and any(isinstance(p, Image) for p in result.content):
        text += "\n[the tool also returned an image; this model cannot see images]"
    if result.is_error:
        return f"ERROR: {text}"
    if call is not None and call.arguments is not None and _BARE_FIGURE.fullmatch(text):
        arguments = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
        return f"{call.name}({arguments}) returned {text.strip()}"
    return text


# --- the grammar ----------------------------------------------------------------------------------


# Where a call is allowed, an answer may not start like one: "<" (a tag), "{" or "[" (untagged JSON), ">"
# (the 0.5B model wrote ``>{"name": ...}`` after a repeated call, and it was returned as the answer) or
# "`" (a fenced block). Whatever spelling a call takes further in, parse_output still reads it as a call.
# "(" stays allowed: the 0.5B model once wrapped its weather answer in parentheses, but with "(" banned it
# answered "抱歉，我无法提供实时天气信息。" ("sorry, no real-time weather") instead (issue 26).
# Where only an answer is allowed (tool_choice "none"), the 0.5B model echoes the call or the tool result
# as text, so quotes and brackets may not start it either. Both were chosen by measuring the weather
# task; forbidding every punctuation start in both cases made the model write nonsense (0/12 answers).
_TEXT_RULE = "text ::= [^<{\\[>` \\t\\n] prose"
_ANSWER_RULE = "text ::= [^<{`\\[ \\t\\n\"'>(] prose"

# The prose of an answer: any text but a tool result's tag (Qwen's <tool_response>, four ordinary tokens): the 1.5B
# model wrote such a block into its English trip answer, a share worked out in its head dressed as a tool's output.
# After a "<" (prose-lt) anything may come that does not go on to "<tool_r" or "</tool_r" ("<tool_call>", "<br>").
_PROSE_RULES = "\n".join(
    (
        'prose ::= ([^<\\x00] | "<" prose-lt)*',
        'prose-lt ::= [^t/<\\x00] | "<" prose-lt | "t" prose-t1 | "/" ([^t<\\x00] | "<" prose-lt | "t" prose-t1)',
        'prose-t1 ::= [^o<\\x00] | "<" prose-lt | "o" prose-t2',
        'prose-t2 ::= [^o<\\x00] | "<" prose-lt | "o" prose-t3',
        'prose-t3 ::= [^l<\\x00] | "<" prose-lt | "l" prose-t4',
        'prose-t4 ::= [^_<\\x00] | "<" prose-lt | "_" prose-t5',
        'prose-t5 ::= [^r<\\x00] | "<" prose-lt',
    )
)
CONTINUATION = f"root ::= prose\n{_PROSE_RULES}"
"""The grammar of whatever continues answer text already streamed."""


def tool_grammar(
    tools: Sequence[ToolSpec], *, allow_text: bool, max_calls: int | None, any_spelling: bool = False
) -> str:
    """A GBNF grammar: one or more calls (``any_spelling``: see :func:`calls_rule`) or, if allowed, plain text.

    Each call is ``{"name": <one of the tools>, "arguments": <that tool's schema>}``, so a sampled call
    always parses and names a real tool. With no tools the grammar allows only an answer.
    """
    if not tools:
        return f"root ::= text\n{_ANSWER_RULE}\n{_PROSE_RULES}"
    from llama_cpp.llama_grammar import SchemaConverter

    # llama-cpp-python's converter is unannotated; these three calls are its whole use here.
    converter = SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    calls = calls_rule(converter, tools, max_calls, any_spelling=any_spelling)
    schema_rules: str = converter.format_grammar()  # type: ignore[no-untyped-call]
    if not allow_text:
        return f"{schema_rules}\nroot ::= {calls}"
    return f"{schema_rules}\nroot ::= {calls} | text\n{_TEXT_RULE}\n{_PROSE_RULES}"


def calls_rule(converter: Any, tools: Sequence[ToolSpec], max_calls: int | None, *, any_spelling: bool = False) -> str:
    """Teach llama.cpp's ``SchemaConverter`` the rule ``call`` (one call of one of ``tools``) and return
    the grammar expression for a turn of calls (one, or several when ``max_calls`` allows).

    Calls are ``<tool_call>`` blocks (what Qwen's template asks for); with ``any_spelling`` they may also be
    bare JSON objects one per line, or a fenced ``json`` block, the two other spellings models use. Left
    unconstrained, the 0.5B model opened a call with ``{"`` or a fence (0.8 to 0.98 of its first token's
    weight on a weather question) and almost never with ``<tool_call>``; allowed only the tag, it answered
    in words instead: "哈尔滨现在是22度" with no call, and ``({"name": ...`` inside its text, a call the
    grammar never shaped, with made-up arguments. A typed answer keeps to the tag: there the other
    spellings made the model call ``fx`` to fill in a form the question alone answered, and stop calling
    ``calc`` for the seed's trip.
    """
    call_schema = {
        "oneOf": [
            {
                "type": "object",
                "properties": {"name": {"const": t.name}, "arguments": _object_schema(t.parameters)},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
            for t in tools
        ]
    }
    converter.visit(converter.resolve_refs(call_schema, "tools"), "call")
    one = '"<tool_call>\\n" call "\\n</tool_call>"'
    tagged, bare = (one, "call") if max_calls == 1 else (f'{one} ("\\n" {one})*', 'call ("\\n" call)*')
    if not any_spelling:
        return tagged
    return f'({tagged}) | ({bare}) | ("```json\\n" {bare} "\\n```")'


def _object_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    schema = dict(parameters) or {"type": "object"}
    # An object with no declared properties would otherwise let the model write any JSON at all.
    if schema.get("type") == "object" and not schema.get("properties"):
        schema.setdefault("additionalProperties", False)
    return schema


# --- the parser -----------------------------------------------------------------------------------

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
# What may come before a call written without tags: quote marks (``>``, as the 0.5B model writes after a
# repeated call), the opening of a code fence, and earlier calls. Text before anything else is an answer.
_LEAD = re.compile(r"(?:[\s>\[\],]|```(?:json|tool_call)?|</?tool_call>)*")
_EMPTY_FENCE = re.compile(r"```(?:json|tool_call)?\s*```")
_NAMED = re.compile(r'\{\s*"name"\s*:')
_WORDS = re.compile(r"[^\W_]")
"""A letter or a digit, in any script."""


def parse_output(text: str, tools: Sequence[ToolSpec]) -> tuple[str, list[ToolCall]]:
    """Split what the model wrote into its answer text and its tool calls.

    Every spelling of a call the models write is a call: a ``<tool_call>`` block, or a JSON object with a
    ``name`` and ``arguments`` (or ``parameters``) written bare, after a ``>``, in a code fence, or inside
    a sentence when it names an offered tool. A call that does not parse, names no offered tool or does
    not fit its schema still reaches the loop as a call (``arguments=None`` when they are not an object),
    so the model is told what to fix: a slip is never passed off as the answer. JSON that is not shaped
    like a call (``{"temp": 28}``) stays part of the answer.
    """
    names = {t.name for t in tools}
    spans: list[tuple[int, int, ToolCall]] = [
        (m.start(), m.end(), _tagged_call(m.group(1))) for m in _TAGGED.finditer(text)
    ]
    decoder = json.JSONDecoder()
    at = text.find("{")
    while at >= 0:
        inside = next((end for start, end, _ in spans if start <= at < end), None)
        if inside is not None:
            at = text.find("{", inside)
            continue
        leading = _starts_a_call(text, at, spans)
        try:
            data, end = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            if leading and _NAMED.match(text, at):  # a call cut short (by max_tokens) or mistyped
                body = text[at:].strip()
                spans.append(
                    (at, len(text), ToolCall(id=_new_id(), name=_loose_name(body), arguments=None, raw_arguments=body))
                )
                break
            at = text.find("{", at + 1)
            continue
        found = list(_calls_in(data))
        if found and (leading or any(c["name"] in names for c in found)):
            spans.extend((at, end, _json_call(c)) for c in found)
            at = text.find("{", end)
        else:
            at = text.find("{", at + 1)
    if not spans:
        return text.strip(), []
    spans.sort(key=lambda span: span[0])
    answer, last = [], 0
    for start, end, _ in spans:
        answer.append(text[last:start])
        last = end
    answer.append(text[last:])
    rest = _EMPTY_FENCE.sub("", "".join(answer))
    # Beside a call, text with no letter or digit is call syntax (the 0.5B model wrote "(" before a call),
    # never words: kept as the turn's text, the CLI showed a lone "(" that was nobody's answer.
    debris = _LEAD.fullmatch(rest) or not _WORDS.search(rest)
    return ("" if debris else rest.strip()), [call for _, _, call in spans]


def _starts_a_call(text: str, at: int, spans: Sequence[tuple[int, int, ToolCall]]) -> bool:
    """Whether only call syntax (quote marks, fences, tags, earlier calls) comes before ``text[at]``."""
    last = max((end for _, end, _ in spans if end <= at), default=0)
    return _LEAD.fullmatch(text, last, at) is not None


def _calls_in(data: object) -> Iterator[dict[str, Any]]:
    """The call-shaped objects (a ``name`` and ``arguments`` or ``parameters``) in ``data``, outermost first.

    Wrappers count too: OpenAI's ``{"type": "function", "function": {...}}``, a list of calls.
    """
    if isinstance(data, dict):
        if isinstance(data.get("name"), str) and ("arguments" in data or "parameters" in data):
            yield data
            return
        for value in data.values():
            yield from _calls_in(value)
    elif isinstance(data, list):
        for item in data:
            yield from _calls_in(item)


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _tagged_call(body: str) -> ToolCall:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ToolCall(id=_new_id(), name=_loose_name(body), arguments=None, raw_arguments=body)
    return _json_call(data)


def _json_call(data: Mapping[str, Any]) -> ToolCall:
    """A call from its JSON; arguments that are not an object reach the loop as ``None`` with their text."""
    arguments = _arguments(data)
    raw = data.get("arguments", data.get("parameters"))
    text = json.dumps(arguments if arguments is not None else raw, ensure_ascii=False)
    return ToolCall(id=_new_id(), name=data["name"], arguments=arguments, raw_arguments=text)


def _loose_name(body: str) -> str:
    match = re.search(r'"name"\s*:\s*"([^"]+)"', body)
    return match.group(1) if match else ""


def _arguments(data: Mapping[str, Any]) -> dict[str, Any] | None:
    # Models trained on other formats write "parameters" or a JSON string instead of an object.
    arguments = data.get("arguments", data.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return arguments if isinstance(arguments, dict) else None


# --- the repeat guard inside the model --------------------------------------------------------------


def fresh_calls(calls: Sequence[ToolCall], messages: Sequence[Message]) -> list[ToolCall]:
    """``calls`` less those identical (same tool, same arguments) to a call answered without error in ``messages``.

    The 0.5B model calls the tool again after it has the result, in every framework tried behind
    ``toolslip serve``; a call it repeats has an answer in front of it already.
    """
    answered = {r.call_id for m in messages for r in m.tool_results if not r.is_error}
    done = {_call_key(c) for m in messages for c in m.tool_calls if c.id in answered and c.arguments is not None}
    return [c for c in calls if c.arguments is None or _call_key(c) not in done]


def once_each(calls: Sequence[ToolCall]) -> list[ToolCall]:
    """``calls`` less those identical to one before them: the 1.5B model, sampled, wrote ``fx(320, "USD")`` and
    ``fx(15000, "JPY")`` three times each into one answer's text."""
    keys = [_call_key(c) if c.arguments is not None else (c.id, "") for c in calls]
    return [call for n, call in enumerate(calls) if keys[n] not in keys[:n]]


def _call_key(call: ToolCall) -> tuple[str, str]:
    return call.name, json.dumps(call.arguments, sort_keys=True, ensure_ascii=False)


def last_question(messages: Sequence[Message]) -> str:
    """The text of the user's last message that has any: the question the model is answering."""
    index = question_index(messages)
    return messages[index].text if index >= 0 else ""


def question_index(messages: Sequence[Message]) -> int:
    """Where :func:`last_question` is in ``messages`` (-1 if nowhere)."""
    return max((i for i, m in enumerate(messages) if m.role == "user" and m.text.strip()), default=-1)


def answer_messages(messages: Sequence[Message]) -> list[Message]:
    """``messages`` with :data:`QUOTED_ANSWER_PROMPT` after the last tool results, for a request that must answer."""
    out = list(messages)
    if out and out[-1].role == "tool" and not out[-1].text.endswith(line := answer_line(out)):  # said once, no more
        out[-1] = replace(out[-1], parts=(*out[-1].parts, Text(text=line)))
    return out


def answer_line(messages: Sequence[Message], cut: int = 300) -> str:
    """The line :func:`answer_messages` adds: the user's last question quoted, cut after ``cut`` characters."""
    asked = last_question(messages).strip()
    question = asked if len(asked) <= cut else asked[:cut] + "..."
    return QUOTED_ANSWER_PROMPT.format(question=question) if question else ANSWER_PROMPT
