"""The embedded model in code mode: its prompt, its grammar (a program over the offered functions, or an
answer) and how its reply becomes code mode's ``run_python`` call."""

from __future__ import annotations

import re

import pytest

from toolslip import Agent, Toolbox, tool
from toolslip.core.messages import Message, ToolCall, ToolResult
from toolslip.providers.local_code import code_functions, code_grammar, code_messages, parse_program
from toolslip.testing import ScriptedModel, call, reply


@tool(effects="read_only", trusted_output=True)
def fx(amount: float, currency: str) -> float:
    """Convert an amount to CNY."""
    return amount * 7.18


def offered() -> tuple[object, ...]:
    model = ScriptedModel([call("run_python", code="fx(1, 'USD')"), reply("ok")])
    Agent(model=model, tools=Toolbox([fx]), mode="code").run("q")
    return model.requests[0].tools


def _matches(grammar: str, start: str, line: str) -> bool:
    """Whether ``line`` is a ``start`` of ``grammar`` (rules of literals, char classes and rule names)."""
    rules = dict(r.split(" ::= ", 1) for r in grammar.splitlines())

    def match(rule: str, text: str) -> bool:
        for alternative in rules[rule].split(" | "):
            if alternative == '""' and text == "":
                return True
            if found := re.fullmatch(r'"(.)" (\S+)', alternative):
                if text[:1] == found.group(1) and match(found.group(2), text[1:]):
                    return True
            elif found := re.fullmatch(r"\[\^(.*?)\\n`\] \[\^\\n`\]\*", alternative):
                excluded = found.group(1).replace("\\", "")
                if text and text[0] not in excluded and not set(text) & {"\n", "`"}:
                    return True
            elif found := re.fullmatch(r"\[(\w+)\] \[a-zA-Z0-9_\]\*", alternative):
                if text and text[0] in found.group(1) and re.fullmatch(r"\w*", text[1:]):
                    return True
        return False

    return match(start, line)


def test_the_functions_come_from_the_program_tools_declaration() -> None:
    functions = code_functions(offered())  # type: ignore[arg-type]
    assert functions is not None and functions["names"] == ["fx"]
    assert functions["stubs"][0].startswith("def fx(amount: float, currency: str) -> float:")


@pytest.mark.parametrize(
    ("value", "allowed"),
    [
        ("fx(320, 'USD') + fx(15000, 'JPY')", True),
        ("total / 4", True),
        ("lambdas[0]", False),  # the cost of barring by prefix: a name starting with "lambda"
        ("lambda amount, currency: amount", False),
    ],
)
def test_a_program_assigns_values_that_are_not_lambdas(value: str, allowed: bool) -> None:
    grammar = code_grammar(program=True, answer=True)
    assert _matches(grammar, "value", value) is allowed


@pytest.mark.parametrize(
    ("name", "allowed"),
    [("total", True), ("total_cny", True), ("x1", True), ("fx_rate", True), ("deffx_amount", False)]
    + [("importfx", False), ("from_", False), ("classes", False), ("lambda_", False), ("1x", False)],
)
def test_a_program_assigns_to_names_that_do_not_spell_a_definition(name: str, allowed: bool) -> None:
    assert _matches(code_grammar(program=True, answer=False), "target", name) is allowed


def test_a_program_line_is_an_assignment_or_a_print_so_it_cannot_define_a_function() -> None:
    rules = dict(r.split(" ::= ", 1) for r in code_grammar(program=True, answer=False).splitlines())
    assert rules["line"] == 'stmt "\\n"'
    assert rules["stmt"] == 'assigned " = " value | "print(" [^\\n`]*'


def test_an_answer_in_words_cannot_carry_a_fenced_program() -> None:
    # A fence inside the answer would be parsed as a program that skipped the program grammar (the 0.5B
    # model wrote "Here is the fix:" and a block defining fx), or run one where only words were allowed.
    rules = dict(r.split(" ::= ", 1) for r in code_grammar(program=True, answer=True).splitlines())
    first, rest = re.fullmatch(r"\[\^(.*?)\] \[\^(.*?)\]\*", rules["text"]).groups()  # type: ignore[union-attr]
    assert "`" in first and "`" in rest


def test_the_grammar_compiles_and_offers_what_the_turn_allows() -> None:
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    for program, answer in ((True, False), (True, True), (False, True)):
        source = code_grammar(program=program, answer=answer)
        # llama.cpp reports a bad escape only when it samples, so check them here: GBNF knows these alone
        assert set(re.findall(r"\\(.)", source)) <= set("ntx\\[]^-"), source
        LlamaGrammar.from_string(source, verbose=False)
        root = source.splitlines()[0]
        assert ("program" in root) is program and ("text" in root) is answer


def test_programs_appear_as_the_models_own_blocks_and_their_output_as_the_next_turn() -> None:
    stub = 'def fx(amount: float, currency: str) -> float:\n    """Convert to CNY.\n\n    Args: ...\n    """'
    functions = {"stubs": [stub], "names": ["fx"]}
    asked = [Message.system("Be brief."), Message.user("320 USD?")]
    first, ran = code_messages(asked, functions)
    assert ran is None and first[0].role == "system"
    assert first[0].text.startswith("Be brief.\n\nYou are a Python programmer.")
    # the functions right below the question, one line each: no def to copy into the program
    assert first[1].text.startswith("320 USD?\n\nThese Python functions are already defined")
    assert "\nfx(amount: float, currency: str) -> float  # Convert to CNY.\n" in first[1].text
    program = ToolCall(id="c1", name="run_python", arguments={"code": "print(fx(320, 'USD'))"})
    for failed, expected in ((False, True), (True, False)):
        output = ToolResult(call_id="c1", name="run_python", content="2297.6", is_error=failed)
        later, ran = code_messages([*asked, Message.assistant("", [program]), Message.tool([output])], functions)
        assert ran is expected
        assert later[-2].text == "```python\nprint(fx(320, 'USD'))\n```"
        assert later[-1].role == "user" and later[-1].text.startswith("Output of the program:\n2297.6")
        assert "These Python functions" in later[1].text  # the question keeps its functions


def test_a_fenced_program_becomes_a_run_python_call_and_anything_else_the_answer() -> None:
    text, calls = parse_program("```python\ntotal = fx(320, 'USD')\nprint(total)\n```", "run_python")
    assert text == "" and [(c.name, c.arguments) for c in calls] == [
        ("run_python", {"code": "total = fx(320, 'USD')\nprint(total)"})
    ]
    assert parse_program("It is 2297.6 CNY.", "run_python") == ("It is 2297.6 CNY.", [])
