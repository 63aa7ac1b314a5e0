"""Code mode on the embedded model: it writes a fenced Python program, or answers in words.

A small *coder* model writes ``total = fx(320, "USD") + fx(15000, "JPY")`` far more reliably than it
drives a multi-turn JSON tool protocol. When the only tool offered is code mode's program tool (its
declaration carries the functions' Python stubs under :data:`CODE_FUNCTIONS`), the embedded model is
spoken to as a programmer: one line per function goes right below the user's question (``fx(amount:
float, ...) -> str  # what it does``: shown whole ``def`` stubs, the 0.5B model copied them into its
program; shown in the system prompt, it wrote ``total = 320 + 15000`` without calling them), its earlier
programs appear as its own fenced blocks and their output as the next user turn, and the grammar allows
exactly one of

* a program: the reply starts inside a fenced ``python`` block of straight-line code, each line an
  assignment or a ``print`` (so it can neither import nor define a function, the offered ones
  included; see :func:`code_grammar`), which is all it may write right after the user spoke (left a
  choice, the 0.5B model answered the seed's question in words, computing in its head), or
* an answer in words, which is all it may write once a program has run without an error (so a question
  needing one program costs two model calls); after a failed program it may write either.

The reply is turned back into a ``run_python`` call, so the loop, the journal and every wire see code
mode's ordinary tool call.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.messages import Message, Request, ToolCall, ToolSpec
from .local_chat import parse_output

__all__ = [
    "CODE_FUNCTIONS",
    "PROGRAM_START",
    "code_functions",
    "code_grammar",
    "code_messages",
    "parse_program",
    "parsed",
]

CODE_FUNCTIONS = "toolslip.code"
"""Key in the program tool's ``ToolSpec.extra``: the functions' ``stubs``, ``names`` and ``specs`` (their
declarations). No wire format sends it: each reads only its own key there."""

PROGRAM_START = "```python\n"
"""Written into the prompt where the model's reply begins when it must write a program: it continues the
block instead of deciding whether to open one."""

_SYSTEM = """You are a Python programmer. You answer questions by writing short Python programs that call the \
functions the user gives you, and then by reading what the program printed.

For example, given the function `square(x: float) -> float  # The square of x.` and the question "What is \
the square of 3 plus the square of 4?", you write:
```python
total = square(3) + square(4)
print(total)
```"""

_ASK_PROGRAM = """{question}

These Python functions are already defined (call them; never define them):
{signatures}

Write a Python program that calls these functions to get every value the question needs, computes the \
answer with Python, and prints it."""

_OUTPUT = """Output of the program:
{output}

{ask}"""
_ASK_ANSWER = "Now answer my question in one or two sentences, using these numbers."
_ASK_FIX = "The program failed. Write a corrected program."


def code_functions(tools: Sequence[ToolSpec]) -> Mapping[str, Any] | None:
    """The functions of code mode's program tool, when it is the one tool offered; else ``None``."""
    if len(tools) != 1:
        return None
    found = tools[0].extra.get(CODE_FUNCTIONS)
    return found if isinstance(found, Mapping) else None


def code_messages(messages: Sequence[Message], functions: Mapping[str, Any]) -> tuple[list[Message], bool | None]:
    """The transcript as the model writes programs, and how the last program went: ``None`` when no program
    has run since the user spoke, ``True`` when it ran without an error, ``False`` when it failed."""
    system = _SYSTEM
    signatures = "\n".join(_signature(stub) for stub in functions.get("stubs", ()))
    out: list[Message] = []
    ran_clean: bool | None = None
    for message in messages:
        if message.role == "system":
            system = f"{message.text}\n\n{system}"
            continue
        if message.role == "assistant" and message.tool_calls:
            blocks = [f"```python\n{(c.arguments or {}).get('code', '')}\n```" for c in message.tool_calls]
            out.append(Message.assistant("\n".join([message.text, *blocks]).strip()))
            continue
        if message.role == "tool":
            results = message.tool_results
            failed = any(r.is_error for r in results)
            output = "\n".join(r.text for r in results) or "(nothing)"
            out.append(Message.user(_OUTPUT.format(output=output, ask=_ASK_FIX if failed else _ASK_ANSWER)))
            ran_clean = not failed
            continue
        ran_clean = None
        out.append(message)
    last = max((i for i, m in enumerate(out) if m.role == "user" and not m.text.startswith("Output of")), default=None)
    if last is not None:  # the functions right beside the question: the 0.5B model reads what is near
        out[last] = Message.user(_ASK_PROGRAM.format(question=out[last].text, signatures=signatures))
    return [Message.system(system), *out], ran_clean


def _signature(stub: str) -> str:
    """``def fx(a: float) -> str:`` and its docstring's first line as ``fx(a: float) -> str  # what it does``."""
    head, _, body = stub.partition("\n")
    doc = body.strip().strip('"').strip().splitlines()
    said = f"  # {doc[0].strip()}" if doc and doc[0].strip() else ""
    return head.removeprefix("def ").removesuffix(":") + said


_BARRED_NAMES = ("def", "import", "from", "class", "lambda")
"""Names a program may not assign to: at temperature 0 the 0.5B model, made to write assignments, wrote
``deffx_amount_to_cny_amounts_and_per_person_amounts...`` until its output limit."""
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"


def _not_starting_with(name: str, words: Sequence[str], *, identifier: bool = False) -> list[str]:
    """GBNF rules ``name``: a line body (no newline, no backtick), or with ``identifier`` a Python name, that
    starts with none of ``words``."""
    rules: list[str] = []

    def node(rule: str, prefix: str) -> None:
        following = sorted({w[len(prefix)] for w in words if w.startswith(prefix) and len(w) > len(prefix)})
        escaped = "".join(f"\\{c}" if c in "\\]^-" else c for c in following)  # GBNF's own escapes only
        if identifier:  # the name's characters but the ones that go on spelling a barred word
            allowed = "".join(c for c in _LETTERS + ("0123456789" if prefix else "") if c not in following)
            alternatives = [f"[{allowed}] [a-zA-Z0-9_]*"]
        else:
            alternatives = [f"[^{escaped}\\n`] [^\\n`]*"]
        if prefix:
            alternatives.append('""')  # the line may end inside a forbidden word's prefix
        for index, char in enumerate(following):
            longer = prefix + char
            if any(w == longer for w in words):
                continue  # the whole forbidden word: no way on
            child = f"{rule}-{index}"
            node(child, longer)
            alternatives.append(f'"{char}" {child}')
        rules.append(f"{rule} ::= " + " | ".join(alternatives))

    node(name, "")
    return rules


def code_grammar(*, program: bool, answer: bool) -> str:
    """A GBNF grammar for a fenced program and/or an answer that is not one.

    A program alone is the block's body (the prompt already holds :data:`PROGRAM_START`). It is straight-line
    code: each line assigns an expression to names (``total = fx(320, "USD") + fx(15000, "JPY")``) or
    prints, and no value is a ``lambda``. Barring words was not enough: with ``def`` barred the 0.5B model
    wrote ``# Define the functions`` and ``fx = lambda amount, currency: ...``, with those barred
    ``fromfx(amount: float, ...) -> str:`` and a body; a line of this shape cannot define a function."""
    branches = (["program"] if program else []) + (["text"] if answer else [])
    rules = [f"root ::= {' | '.join(branches)}"]
    if program:
        opening = "" if not answer else '"```python\\n" '
        rules += [
            f'program ::= {opening}line line* "```"',
            'line ::= stmt "\\n"',
            'stmt ::= assigned " = " value | "print(" [^\\n`]*',
            'assigned ::= target ("," " "? target)*',
            *_not_starting_with("target", _BARRED_NAMES, identifier=True),
            *_not_starting_with("value", ("lambda",)),
        ]
    if answer:
        rules.append("text ::= [^`<{\\[ \\t\\n] [^\\x00`]*")  # no fence: it would be parsed as a program
    return "\n".join(rules)


_PROGRAM = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)(?:\n```|$)", re.DOTALL)


def parse_program(text: str, tool: str) -> tuple[str, list[ToolCall]]:
    """A fenced program becomes a call of ``tool``; anything else is the answer."""
    found = _PROGRAM.search(text)
    if found is None or not found.group(1).strip():
        return text.strip(), []
    call = ToolCall(id=f"call_{uuid.uuid4().hex[:12]}", name=tool, arguments={"code": found.group(1)})
    return "", [call]


def parsed(
    text: str, request: Request, tools: tuple[ToolSpec, ...], *, calling: bool, code: bool
) -> tuple[str, list[ToolCall]]:
    """The answer text and the calls in what the model wrote: a fenced program in code mode, else calls."""
    if code:
        return parse_program(text, request.tools[0].name)
    return parse_output(text, tools) if calling else (text.strip(), [])
