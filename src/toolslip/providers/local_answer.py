"""The embedded model's typed answers: llama.cpp's JSON-Schema grammar holds the answer to the schema.

When a request asks for structured output (``Request.output``), the answer is decoded under the grammar
llama.cpp's own converter (``SchemaConverter``, what ``json_schema_to_gbnf`` and
``LlamaGrammar.from_json_schema`` use) builds from the schema, so a local answer always parses and fits
(only a cut at ``max_tokens`` can break it). Where tools are offered, a turn may still be calls instead:
``root ::= calls | answer``. The schema is also shown in the system prompt, since the grammar says which
keys to write but not what they mean.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.messages import Message, OutputSchema, Text, ToolSpec
from .local_chat import calls_rule, with_system_note

__all__ = ["answer_grammar", "with_answer_schema"]


def answer_grammar(output: OutputSchema, tools: Sequence[ToolSpec], *, max_calls: int | None) -> str:
    """A GBNF grammar for one JSON value that follows ``output.schema``, or (with ``tools``) tagged calls."""
    from llama_cpp.llama_grammar import SchemaConverter

    # One converter for both, so the rules they share (string, number, space...) are written once.
    converter: Any = SchemaConverter(  # type: ignore[no-untyped-call]
        prop_order={"name": 0, "arguments": 1}, allow_fetch=False, dotall=False, raw_pattern=False
    )
    converter.visit(converter.resolve_refs(dict(output.schema), "answer"), "answer")
    calls = calls_rule(converter, tools, max_calls) if tools else None
    rules: str = converter.format_grammar()
    return f"{rules}\nroot ::= {calls} | answer" if calls else f"{rules}\nroot ::= answer"


def with_answer_schema(messages: Sequence[Message], output: OutputSchema, *, at_end: bool = False) -> list[Message]:
    """``messages`` with the answer's schema added to the system prompt, or ``at_end`` after the last message.

    At the end when tools are offered too: in the system prompt the schema turned the 0.5B model from
    calling a tool to answering at once (see :data:`.local_figures.STEER`), and there the prompt's start
    stays the one llama.cpp has already evaluated for the turn's first token.
    """
    note = (
        "Give your final answer as one JSON value that follows this JSON Schema:\n"
        f"{json.dumps(dict(output.schema), ensure_ascii=False)}"
    )
    if at_end and messages and messages[-1].role in ("user", "tool"):
        return [*messages[:-1], replace(messages[-1], parts=(*messages[-1].parts, Text(text=f"\n\n{note}")))]
    return with_system_note(messages, note)
