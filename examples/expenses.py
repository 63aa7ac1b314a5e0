"""The seed's minimal agent: currency conversion plus a calculator, several steps.

    toolslip run examples/expenses.py "I spent 320 USD and 15000 JPY on a trip. How much is that in CNY \
in total, and how much per person if 4 people split it?"

Expected: 320 USD = 2297.6 CNY, 15000 JPY = 705.0 CNY, total 3002.6 CNY, 750.65 CNY each.

The same question answered as a value (validated, printed as JSON):

    toolslip run examples/expenses.py "..." --output-schema examples/expenses.py:Expense
"""

import ast
import operator
from typing import Literal

from pydantic import BaseModel, Field

from toolslip import tool

EXCHANGE = {"USD": 7.18, "EUR": 7.79, "JPY": 0.047}

_OPERATORS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
}


class Expense(BaseModel):
    """What the trip cost, in Chinese yuan."""

    total_cny: float = Field(description="All the expenses together, in CNY.")
    per_person_cny: float = Field(description="One person's share of the total, in CNY.")


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right))  # type: ignore[no-any-return]
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.operand))  # type: ignore[no-any-return]
    raise ValueError("only numbers and + - * / ( ) are allowed")


@tool(effects="read_only", trusted_output=True)
def calc(expr: str) -> str:
    """Evaluate an arithmetic expression exactly. Use it for every sum, product or split; never compute in your head.

    Args:
        expr: Only digits, the decimal point, + - * / ( ) and spaces, e.g. (12+8)*3.
    """
    if not set(expr) <= set("0123456789+-*/(). "):
        return "refused: the expression contains characters other than digits and + - * / ( ) ."
    try:
        value = _evaluate(ast.parse(expr, mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError) as exc:
        return f"calculation failed: {exc}"
    return str(round(value, 10))


@tool(effects="read_only", trusted_output=True)
def fx(amount: float, currency: Literal["USD", "EUR", "JPY"]) -> str:
    """Convert an amount of a foreign currency to Chinese yuan (CNY) at today's rate. Supports USD, EUR and JPY only.

    Args:
        amount: The amount in the foreign currency, e.g. 320.
        currency: ISO code of the foreign currency.
    """
    rate = EXCHANGE[currency.upper()]
    return f"{amount:g} {currency.upper()} = {round(amount * rate, 2)} CNY"
