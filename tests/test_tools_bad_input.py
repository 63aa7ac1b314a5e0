"""Library entry points given the wrong thing: a ToolslipError that says what to write, never an AttributeError.

Found by a QA pass; each case failed before its fix (AttributeError, TypeError, or a tool that silently
exposed ``self`` / had the name ``<lambda>``).
"""

from __future__ import annotations

import pytest

import toolslip
from toolslip import Toolbox, tool
from toolslip.errors import ConfigError, ToolDefinitionError


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Ledger:
    def balance(self, account: str) -> str:
        """The balance of an account."""
        return account


@pytest.mark.parametrize("model", [object(), None, 5])
def test_run_with_something_that_is_not_a_model(model):
    with pytest.raises(ConfigError, match=r"model must be a model string .* got \w+"):
        toolslip.run(model, "hi", [add])


def test_run_with_one_tool_instead_of_a_list():
    with pytest.raises(ToolDefinitionError, match=r"got one tool; write \[add\]"):
        toolslip.run("scripted:expenses", "hi", tool(add))


@pytest.mark.parametrize(
    ("thing", "message"),
    [
        (lambda x: x, r"a lambda has no name the model can call; write tool\(name='...'\)\(lambda ...\)"),
        (Ledger, r"tool\(\) takes a function or a bound method, got type"),
        (5, r"tool\(\) takes a function or a bound method, got int 5"),
        ("lookup", r"got the string 'lookup'; to name a tool write @tool\(name=...\)"),
        (Ledger.balance, r"tool 'balance' is a method: the model cannot supply 'self'"),
    ],
)
def test_tool_refuses_what_the_model_could_not_call(thing, message):
    with pytest.raises(ToolDefinitionError, match=message):
        tool(thing)
    with pytest.raises(ToolDefinitionError, match=message):
        Toolbox([thing])  # a Toolbox wraps plain callables with tool() and says the same


def test_tool_accepts_a_bound_method_and_a_named_lambda():
    assert tool(Ledger().balance).parameters["required"] == ["account"]
    assert tool(name="identity")(lambda x: x).name == "identity"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": 0}, "timeout must be a number of seconds > 0, got 0"),
        ({"timeout": -1}, "timeout must be a number of seconds > 0, got -1"),
        ({"max_output_chars": 0}, "max_output_chars must be at least 1, got 0"),
    ],
)
def test_tool_options_out_of_range(options, message):
    with pytest.raises(ToolDefinitionError, match=message):
        tool(**options)(add)
