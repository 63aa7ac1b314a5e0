"""Dedup: the same transfer twice in one turn and again after a retry moves the money once."""

from __future__ import annotations

from toolslip import Agent, Toolbox, tool
from toolslip.dedup import Dedup, idempotency_key
from toolslip.testing import ScriptedModel, call


def bank() -> tuple[list[tuple[str, int]], Toolbox]:
    moved: list[tuple[str, int]] = []

    @tool(effects=["side_effect", "destructive"])
    def transfer(iban: str, amount: int) -> str:
        """Send money."""
        moved.append((iban, amount))
        return f"sent {amount} to {iban}"

    @tool(effects="read_only")
    def balance() -> int:
        """Balance."""
        return 100 - sum(a for _, a in moved)

    return moved, Toolbox([transfer, balance])


def test_same_transfer_twice_in_a_turn_and_after_a_retry_moves_money_once() -> None:
    moved, tools = bank()
    turns = [
        [call("transfer", iban="DE1", amount=30), call("transfer", amount=30, iban="DE1"), call("balance")],
        call("balance"),
        call("transfer", iban="DE1", amount=30),  # the model retries
        "done",
    ]
    result = Agent(model=ScriptedModel(turns), tools=tools, hooks=[Dedup()]).run("pay DE1 30")
    assert moved == [("DE1", 30)]
    first, second, _ = result.messages[2].tool_results
    assert first.text == "sent 30 to DE1" and not first.is_error
    assert second.text.startswith("[duplicate") and second.text.endswith("sent 30 to DE1")
    assert result.messages[6].tool_results[0].text.startswith("[duplicate")
    assert [r.text for r in result.messages[4].tool_results] == ["70"]  # reads are never deduplicated


def test_without_dedup_the_naive_loop_moves_it_three_times() -> None:
    moved, tools = bank()
    turns = [[call("transfer", iban="DE1", amount=30)] * 2, call("transfer", iban="DE1", amount=30), "done"]
    Agent(model=ScriptedModel(turns), tools=tools).run("pay")
    assert len(moved) == 3


def test_a_failed_call_is_not_remembered_so_a_retry_runs() -> None:
    attempts: list[int] = []

    @tool(effects="side_effect")
    def flaky(n: int) -> str:
        """Fails once."""
        attempts.append(n)
        if len(attempts) == 1:
            raise ConnectionError("bank unreachable")
        return "ok"

    turns = [call("flaky", n=1), call("flaky", n=1), call("flaky", n=1), "done"]
    result = Agent(model=ScriptedModel(turns), tools=Toolbox([flaky]), hooks=[Dedup()]).run("q")
    assert attempts == [1, 1]
    assert result.messages[6].tool_results[0].text.startswith("[duplicate")


def test_a_tools_own_idempotency_key_decides_what_is_the_same_action() -> None:
    sent: list[str] = []

    @tool(effects="side_effect", idempotency_key=lambda a: f"{a['iban']}:{a['amount']}:{a['reference']}")
    def transfer(iban: str, amount: int, reference: str, memo: str = "") -> str:
        """Send."""
        sent.append(memo)
        return "sent"

    turns = [
        [
            call("transfer", iban="DE1", amount=5, reference="inv-7", memo="rent"),
            call("transfer", iban="DE1", amount=5, reference="inv-7", memo="rent, again"),
        ],  # same key
        call("transfer", iban="DE1", amount=5, reference="inv-8"),  # a new reference is a new transfer
        "done",
    ]
    Agent(model=ScriptedModel(turns), tools=Toolbox([transfer]), hooks=[Dedup()]).run("q")
    assert sent == ["rent", ""]
    assert idempotency_key(transfer, call("transfer", iban="X", amount=1, reference="r")) == "transfer:X:1:r"
    assert idempotency_key(None, call("t", b=1, a="é")) == 't:{"a":"é","b":1}'


def test_a_tool_can_opt_out_so_two_coffees_are_two_orders() -> None:
    cart: list[str] = []

    @tool(effects="side_effect", dedup=False)
    def add_to_cart(item: str) -> str:
        """Put one item in the cart."""
        cart.append(item)
        return f"{len(cart)} items in the cart"

    @tool(effects="side_effect")
    def checkout() -> str:
        """Pay for the cart."""
        cart.append("paid")
        return "paid"

    turn = [call("add_to_cart", item="coffee"), call("add_to_cart", item="coffee"), call("checkout"), call("checkout")]
    result = Agent(model=ScriptedModel([turn, "ok"]), tools=Toolbox([add_to_cart, checkout]), hooks=[Dedup()]).run("q")
    assert cart == ["coffee", "coffee", "paid"]  # checkout still pays once
    assert not add_to_cart.deduplicated and checkout.deduplicated
    answer = result.messages[2].tool_results[3].text
    assert answer.startswith("[duplicate:") and "call the tool again with arguments that say so" in answer
    assert "a quantity, or a new reference or idempotency key" in answer


def test_no_dedup_on_the_command_line_leaves_dedup_out() -> None:
    import argparse

    from toolslip.cli.durable import add_run_options, hooks_from_args

    parser = argparse.ArgumentParser()
    add_run_options(parser)
    assert any(isinstance(h, Dedup) for h in hooks_from_args(parser.parse_args(["--no-journal"])))
    assert not any(isinstance(h, Dedup) for h in hooks_from_args(parser.parse_args(["--no-journal", "--no-dedup"])))
