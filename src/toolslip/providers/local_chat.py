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
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import jsonschema

from ..core.errors import ConfigError
from ..core.messages import Image, Message, ProviderPart, Text, ToolCall, ToolResult, ToolSpec

__all__ = ["ChatTemplate", "calls_rule", "parse_output", "tool_grammar"]


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

        try:
            return self._template.render(
                messages=[m for message in messages for m in _template_messages(message)],
                tools=wire_tools or None,
                add_generation_prompt=True,
                bos_token=self.bos_token,
                eos_token=self.eos_token,
            )
        except TemplateError as exc:
            raise ConfigError(f"the model's chat template failed to render this conversation: {exc}") from exc


def _template_messages(message: Message) -> list[dict[str, Any]]:
    """A neutral message in the OpenAI-like shape chat templates expect (one dict per tool result)."""
    if message.role == "tool":
        out: list[dict[str, Any]] = [
            {"role": "tool", "tool_call_id": r.call_id, "name": r.name, "content": _result_text(r)}
            for r in message.tool_results
        ]
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


def _result_text(result: ToolResult) -> str:
    text = result.text
    if not isinstance(result.content, str) and any(isinstance(p, Image) for p in result.content):
        text += "\n[the tool also returned an image; this model cannot see images]"
    return f"ERROR: {text}" if result.is_error else text


# --- the grammar ----------------------------------------------------------------------------------


# Where a call is allowed, an answer may not start with "<" or "{": half a tag or untagged JSON would
# otherwise pass for an answer (a fenced JSON slip still parses as a call, see parse_output). Where only
# an answer is allowed (tool_choice "none"), the 0.5B model echoes the call or the tool result as text,
# so brackets, quotes and fences may not start it either. Both were chosen by measuring the weather task;
# forbidding every punctuation start in both cases made the model write nonsense (0/12 answers).
_TEXT_RULE = "text ::= [^<{ \\t\\n] [^\\x00]*"
_ANSWER_RULE = "text ::= [^<{`\\[ \\t\\n\"'>(] [^\\x00]*"


def tool_grammar(tools: Sequence[ToolSpec], *, allow_text: bool, max_calls: int | None) -> str:
    """A GBNF grammar: one or more ``<tool_call>`` blocks (Qwen/Hermes style) or, if allowed, plain text.

    Each call is ``{"name": <one of the tools>, "arguments": <that tool's schema>}``, so a sampled call
    always parses and names a real tool. With no tools the grammar allows only an answer.
    """
    if not tools:
        return f"root ::= text\n{_ANSWER_RULE}"
    from llama_cpp.llama_grammar import SchemaConverter

    # llama-cpp-python's converter is unannotated; these three calls are its whole use here.
    converter = SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    calls = calls_rule(converter, tools, max_calls)
    schema_rules: str = converter.format_grammar()  # type: ignore[no-untyped-call]
    if not allow_text:
        return f"{schema_rules}\nroot ::= {calls}"
    return f"{schema_rules}\nroot ::= {calls} | text\n{_TEXT_RULE}"


def calls_rule(converter: Any, tools: Sequence[ToolSpec], max_calls: int | None) -> str:
    """Teach llama.cpp's ``SchemaConverter`` the rule ``call`` (one call of one of ``tools``) and return
    the grammar expression for a turn of tagged calls (one, or several when ``max_calls`` allows)."""
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
    return one if max_calls == 1 else f'{one} ("\\n" {one})*'


def _object_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    schema = dict(parameters) or {"type": "object"}
    # An object with no declared properties would otherwise let the model write any JSON at all.
    if schema.get("type") == "object" and not schema.get("properties"):
        schema.setdefault("additionalProperties", False)
    return schema


# --- the parser -----------------------------------------------------------------------------------

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```(?:json|tool_call)?\s*(\{.*?\})\s*```", re.DOTALL)


def parse_output(text: str, tools: Sequence[ToolSpec]) -> tuple[str, list[ToolCall]]:
    """Split what the model wrote into its answer text and its tool calls.

    Tagged ``<tool_call>`` blocks are calls whatever they contain (a malformed one reaches the loop with
    ``arguments=None`` so the model is told what to fix). Untagged JSON, bare or in a code fence, counts
    as a call only when it names an offered tool and its arguments fit that tool's schema; any other
    JSON is an answer that happens to contain braces.
    """
    calls: list[ToolCall] = []
    if "<tool_call>" in text:
        for body in _TAGGED.findall(text):
            calls.append(_tagged_call(body))
        return _TAGGED.sub("", text).strip(), calls
    by_name = {t.name: t for t in tools}
    candidates = _FENCED.findall(text) or ([text.strip()] if text.strip().startswith("{") else [])
    for body in candidates:
        call = _untagged_call(body, by_name)
        if call is None:
            return text.strip(), []
        calls.append(call)
    if calls:
        return _FENCED.sub("", text).strip() if _FENCED.search(text) else "", calls
    return text.strip(), []


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _tagged_call(body: str) -> ToolCall:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ToolCall(id=_new_id(), name=_loose_name(body), arguments=None, raw_arguments=body)
    arguments = _arguments(data)
    raw = json.dumps(arguments, ensure_ascii=False) if arguments is not None else json.dumps(data.get("arguments"))
    return ToolCall(id=_new_id(), name=data["name"], arguments=arguments, raw_arguments=raw)


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


def _untagged_call(body: str, tools: Mapping[str, ToolSpec]) -> ToolCall | None:
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("name") not in tools:
        return None
    arguments = _arguments(data)
    if arguments is None:
        return None
    try:
        jsonschema.validate(arguments, dict(tools[data["name"]].parameters))
    except jsonschema.ValidationError:
        return None
    return ToolCall(
        id=_new_id(), name=data["name"], arguments=arguments, raw_arguments=json.dumps(arguments, ensure_ascii=False)
    )
