"""Tool search: the analyzer, the BM25 index, Toolbox.search, the tool_search loop mode and BFCL recall."""

import re
import sys
from pathlib import Path

import pytest

from toolslip import Agent, Tool, Toolbox, ToolSearch, ToolSpec, tool
from toolslip.errors import ConfigError, ToolDefinitionError
from toolslip.quality.search import DEFAULT_FLOOR
from toolslip.search import ToolIndex, terms
from toolslip.testing import ScriptedModel, call

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def test_terms_split_identifiers_stem_and_drop_stop_words() -> None:
    assert terms("getOrderById") == ["ord", "id"]  # "get" and "by" are stop words
    assert terms("list_user_orders") == terms("ListUserOrders") == ["list", "user", "ord"]
    assert terms("currency_exchange.convert") == ["currency", "exchang", "convert"]
    assert terms("calculating the calculation calculates") == ["calculat"] * 3
    assert terms("parseHTTPResponse") == ["pars", "http", "respons"]


def test_terms_make_cjk_bigrams() -> None:
    assert terms("查询订单") == ["查询", "询订", "订单"]
    assert terms("找 order") == ["找", "ord"]


def _spec(name: str, description: str, **params: str) -> ToolSpec:
    properties = {k: {"type": "string", "description": v} for k, v in params.items()}
    return ToolSpec(name=name, description=description, parameters={"type": "object", "properties": properties})


SPECS = [
    _spec("get_weather", "Current weather of a city: temperature and sky.", city="City name, e.g. Beijing"),
    _spec("convert_currency", "Convert an amount between currencies at today's rate.", currency="ISO code"),
    _spec("send_email", "Send an email to one recipient.", to="Address", body="Plain text body"),
    _spec("list_orders", "列出某用户在给定日期区间内的订单摘要。", user_id="用户 ID"),
]


def test_index_ranks_the_matching_tool_first() -> None:
    index = ToolIndex(SPECS)
    assert index.search("what's the weather in Beijing", 2)[0].name == "get_weather"
    assert index.search("convert 100 euro to another currency", 1)[0].name == "convert_currency"
    assert index.search("send the report to Alice by email", 4)[0].name == "send_email"
    assert index.search("查一下这个用户的订单", 1)[0].name == "list_orders"
    scores = [hit.score for hit in index.search("weather currency email", 3)]
    assert scores == sorted(scores, reverse=True)


def test_index_returns_nothing_for_no_shared_term() -> None:
    assert ToolIndex(SPECS).search("zebra giraffe", 5) == []
    assert ToolIndex(SPECS).search("", 5) == []
    assert ToolIndex([]).search("weather", 5) == []


def test_a_name_with_several_docs_ranks_once_at_its_best() -> None:
    docs = [_spec("area", "Area of a triangle."), _spec("area", "Area of a circle."), _spec("volume", "Circle volume.")]
    hits = ToolIndex(docs).search("area of a circle", 5)
    assert [h.name for h in hits] == ["area", "volume"]


def test_field_weights_matter() -> None:
    docs = [_spec("refund", "Give money back."), _spec("pay", "Pay an invoice.", note="Reason for the refund")]
    assert ToolIndex(docs).search("refund", 1)[0].name == "refund"
    flipped = ToolIndex(docs, weights={"name": 0.0, "description": 1.0, "param_name": 0.0, "param_description": 1.0})
    assert flipped.search("refund", 1)[0].name == "pay"


@tool(effects="read_only")
def get_weather(city: str) -> str:
    """Get the current weather of one city. An unknown city returns 'no data'.

    Args:
        city: City name, e.g. Beijing.
    """
    return {"Beijing": "28 C, cloudy"}.get(city, "no data")


@tool(effects="read_only")
def calc(expr: str) -> str:
    """Evaluate an arithmetic expression exactly.

    Args:
        expr: Digits and + - * / ( ), e.g. (12+8)*3.
    """
    return str(eval(expr, {"__builtins__": {}}))  # test-only; inputs are scripted


def _distractors(n: int) -> list[Tool]:
    topics = ["invoice", "ticket", "calendar", "playlist", "inventory", "shipment", "contract", "survey"]
    return [
        Tool.from_schema(f"manage_{topics[i % len(topics)]}_{i}", f"Manage {topics[i % len(topics)]} records.", {})
        for i in range(n)
    ]


def test_toolbox_search_returns_tools_and_sees_added_tools() -> None:
    box = Toolbox([calc, *_distractors(20)])
    assert box.search("weather in a city") == []
    box.add(get_weather)
    assert box.search("weather in a city", 3) == [get_weather]


async def test_tool_search_mode_end_to_end() -> None:
    box = Toolbox([*_distractors(40), get_weather, calc])
    model = ScriptedModel(
        [call("tool_search", query="current weather of a city"), call("get_weather", city="Beijing"), "28 C, cloudy."]
    )
    agent = Agent(model=model, tools=box, hooks=[ToolSearch(pinned=["calc"], k=3)])
    result = await agent.arun("What's the weather in Beijing?")

    assert result.ok and result.output == "28 C, cloudy."
    offered = [[t.name for t in r.tools] for r in model.requests]
    assert offered[0] == ["tool_search", "calc"]  # not the 42 tools: only search and the pinned one
    assert offered[1][0] == "tool_search" and "get_weather" in offered[1] and len(offered[1]) <= 1 + 1 + 3
    found = result.messages[2].tool_results[0]
    assert not found.is_error and "get_weather" in found.text
    weather = result.messages[4].tool_results[0]
    assert weather.name == "get_weather" and weather.text == "28 C, cloudy"


async def test_tool_search_mode_explains_bad_and_empty_queries() -> None:
    model = ScriptedModel([call("tool_search"), call("tool_search", query="zebra giraffe"), "none"])
    agent = Agent(model=model, tools=Toolbox([get_weather]), hooks=[ToolSearch()])
    result = await agent.arun("?")
    missing, empty = result.messages[2].tool_results[0], result.messages[4].tool_results[0]
    assert missing.is_error and "needs a 'query' string" in missing.text
    assert not empty.is_error and "No tool fits 'zebra giraffe'" in empty.text and "ask the user" in empty.text
    assert [t.name for t in model.requests[2].tools] == ["tool_search"]


async def test_a_correctly_guessed_tool_runs_and_is_offered_next() -> None:
    model = ScriptedModel([call("get_weather", city="Beijing"), "done"])
    agent = Agent(model=model, tools=Toolbox([get_weather, calc]), hooks=[ToolSearch()])
    result = await agent.arun("weather?")
    assert result.messages[2].tool_results[0].text == "28 C, cloudy"
    assert [t.name for t in model.requests[1].tools] == ["tool_search", "get_weather"]


def test_a_tool_named_like_the_search_tool_fails_when_the_agent_is_built() -> None:
    with pytest.raises(ToolDefinitionError, match="search tool's name; pass ToolSearch"):
        Agent(model=ScriptedModel(["x"]), tools=Toolbox([calc]), hooks=[ToolSearch(name="calc")])


async def test_a_tool_added_later_with_the_search_tool_name_fails_at_the_first_request() -> None:
    box = Toolbox([calc])
    agent = Agent(model=ScriptedModel(["x"]), tools=box, hooks=[ToolSearch(name="get_weather")])
    box.add(get_weather)
    with pytest.raises(ToolDefinitionError, match="search tool's name"):
        await agent.arun("?")


async def test_an_unknown_pinned_tool_fails_at_the_first_request() -> None:
    agent = Agent(model=ScriptedModel(["x"]), tools=Toolbox([calc]), hooks=[ToolSearch(pinned=["nope"])])
    with pytest.raises(ToolDefinitionError, match="'nope'"):
        await agent.arun("?")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k=...) must be a whole number"),
        ({"k": -1}, "k=...) must be a whole number"),
        ({"k": 2.5}, "k=...) must be a whole number"),
        ({"floor": -1}, "floor=...) must be a score"),
        ({"name": "tool search"}, "1 to 64 letters"),
        ({"name": "查找工具"}, "1 to 64 letters"),
        ({"name": "x" * 65}, "1 to 64 letters"),
    ],
)
def test_tool_search_settings_are_checked_when_built(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        ToolSearch(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1, True, 1.5])
def test_index_search_rejects_a_k_that_is_not_a_positive_count(k: object) -> None:
    with pytest.raises(ConfigError, match="k must be a whole number"):
        ToolIndex(SPECS).search("weather", k)  # type: ignore[arg-type]


def test_index_search_k_is_the_most_it_returns() -> None:
    index = ToolIndex(SPECS)
    assert [len(index.search("weather currency email orders 订单", k)) for k in (1, 2, 3, 4, 10)] == [1, 2, 3, 4, 4]


def test_search_tool_passes_the_linter() -> None:
    from toolslip.lint import lint

    assert lint([ToolSearch().spec], cost=False).findings == ()


def test_bfcl_recall_at_5() -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bfcl
        import tool_search
    finally:
        sys.path.remove(str(BENCHMARKS))
    pool, queries = bfcl.load()
    assert len(pool) == 753 and len(queries) == 600
    shipped = tool_search.quality(ToolIndex(pool), queries)
    baseline = tool_search.quality(
        ToolIndex(pool, analyzer=tool_search.plain_words, weights=tool_search.PLAIN_WEIGHTS, expand=False), queries
    )
    assert shipped["R@5"] >= 0.97 > baseline["R@5"]


# Six overlapping order tools as a new user wrote them: every one names "order".
ORDER_TOOLS = [
    ToolSpec(name=name, description=description, parameters={"type": "object", "properties": properties})
    for name, description, properties in [
        ("search_orders", "Search orders by keyword.", {"keyword": {"type": "string"}}),
        ("query_orders", "Query orders by status and date.", {"status": {"type": "string", "description": "paid, "
         "shipped or cancelled"}, "date": {"type": "string"}}),
        ("find_order", "Find an order.", {"order_id": {"type": "string"}}),
        ("get_order_list", "Get the list of a user's orders.", {"user_id": {"type": "string"}, "status": {
         "type": "string", "description": "paid, shipped or cancelled"}}),
        ("list_user_orders", "List the orders of a user.", {"phone": {"type": "string"}}),
        ("cancel_order", "Cancel an order.", {"order_id": {"type": "string"}}),
    ]
]  # fmt: skip


def test_the_verb_counts_when_every_tool_shares_the_object() -> None:
    """ "show me order A-1" scored every tool 0.09, under the floor ("no tool fits"): a word all six share
    weighed almost nothing, and "show" met no word. The reads fit, the cancel does not; "cancel order A-2"
    offers the cancel first, far ahead."""
    index = ToolIndex(ORDER_TOOLS)
    shown = index.search("show me order A-1", 6, floor=DEFAULT_FLOOR)
    assert {h.name for h in shown} == {
        "search_orders",
        "query_orders",
        "find_order",
        "get_order_list",
        "list_user_orders",
    }
    cancel = index.search("cancel order A-2", 6, floor=DEFAULT_FLOOR)
    assert cancel[0].name == "cancel_order" and cancel[0].score > 2 * cancel[1].score
    assert index.search("bus times in Madrid", 6, floor=DEFAULT_FLOOR) == []
