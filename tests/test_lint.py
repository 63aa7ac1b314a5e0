"""Every lint rule with a failing and a passing example, the seed's order tools, and toolslip's examples."""

import json
from pathlib import Path
from typing import Any

import pytest

from toolslip import Tool, ToolSpec, tool
from toolslip.cli.files import load_tools_file
from toolslip.cli.lint import load_declarations
from toolslip.errors import ConfigError
from toolslip.lint import RULES, lint

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"


def spec(name: str, description: str, **properties: dict[str, Any]) -> ToolSpec:
    return ToolSpec(name=name, description=description, parameters={"type": "object", "properties": properties})


def rules(*tools: Tool | ToolSpec, **kwargs: Any) -> set[str]:
    return {f.rule for f in lint(tools, cost=False, **kwargs).findings}


GOOD = "Convert an amount of a foreign currency to Chinese yuan at today's rate. Supports USD, EUR and JPY only."


def test_description_missing() -> None:
    assert "description-missing" in rules(spec("convert", ""))
    assert "description-missing" not in rules(spec("convert", GOOD))


def test_description_restates_name() -> None:
    assert "description-restates-name" in rules(spec("search_orders", "Search orders."))
    described = spec("search_orders", "Search orders by keyword; none found is [].")
    assert "description-restates-name" not in rules(described)


def test_description_short_counts_cjk_as_half_words() -> None:
    assert "description-short" in rules(spec("convert", "Converts money."))
    assert "description-short" in rules(spec("find_order", "找订单"))
    assert "description-short" not in rules(spec("convert", GOOD))
    cjk = spec("get_order_by_id", "按订单号精确查一张订单的完整详情。不存在时返回空。")
    assert "description-short" not in rules(cjk)


def test_overlap_needs_a_signpost_on_one_side() -> None:
    a = spec("search_orders", "Search the orders of a user by keyword. No match returns an empty list.")
    b = spec("query_orders", "Query the orders of a user by keyword. No match returns an empty list.")
    findings = [f for f in lint([a, b], cost=False).findings if f.rule == "overlap"]
    assert [(f.tool, f.other, f.severity) for f in findings] == [("search_orders", "query_orders", "error")]
    # the signpost is a sentence made from the neighbour's description (it read "for Query the orders of a
    # user by keyword., use query_orders instead")
    assert 'write "To query the orders of a user by keyword, use query_orders instead.", and the reverse in' in (
        findings[0].suggestion
    )
    signposted = spec("query_orders", b.description + " If you have an order id, use search_orders instead.")
    assert "overlap" not in rules(a, signposted)


@pytest.mark.parametrize(
    ("description", "sentence"),
    [
        ("Query orders by status and date.", "To query orders by status and date, use x instead."),
        ("Returns the orders of a user.", "To return the orders of a user, use x instead."),
        ("Fetches one order", "To fetch one order, use x instead."),
        ("The orders of a user, newest first. Empty is [].", "For the orders of a user, newest first, use x instead."),
        ("API keys of the account.", "For API keys of the account, use x instead."),
        ("查询订单", "For 查询订单, use x instead."),
    ],
)
def test_the_signpost_is_a_sentence(description: str, sentence: str) -> None:
    from toolslip.quality.lint_rules import signpost

    assert signpost(description, "x") == sentence


def test_no_usage_boundary_when_only_one_of_two_alike_tools_signposts() -> None:
    a = spec("get_order", "Get one order by its id, with its items and status. An unknown id returns 'not found'.")
    b = spec("fetch_order", "Fetch one order by its id with its payments. For items and status use get_order instead.")
    found = lint([a, b], cost=False).findings
    assert {f.tool for f in found if f.rule == "no-usage-boundary"} == {"get_order"}
    assert "overlap" not in {f.rule for f in found}  # one side names the other
    bounded = spec("get_order", a.description + " Use only when you need the items; for payments, fetch_order.")
    assert "no-usage-boundary" not in rules(bounded, b)
    assert "no-usage-boundary" not in rules(a)  # alone, there is nothing to confuse it with


def test_list_and_get_of_one_object_are_not_neighbours() -> None:
    a = spec("get_order_by_id", "Get the full details of one order. An unknown id returns nothing.")
    b = spec("list_orders", "List the orders of a user in a date range. No orders returns an empty list.")
    assert not rules(a, b) & {"overlap", "no-usage-boundary"}


def test_param_undescribed() -> None:
    assert "param-undescribed" in rules(spec("convert", GOOD, amount={"type": "number"}))
    assert "param-undescribed" not in rules(spec("convert", GOOD, amount={"type": "number", "description": "e.g. 3"}))


@pytest.mark.parametrize(
    "description",
    ["One of celsius, fahrenheit.", "Either 'asc' or 'desc'.", "Currency: USD/EUR/JPY", "订单状态，可选 paid、shipped"],
)
def test_param_closed_set(description: str) -> None:
    assert "param-closed-set" in rules(spec("convert", GOOD, unit={"type": "string", "description": description}))
    enum = {"type": "string", "enum": ["a", "b"], "description": description}
    assert "param-closed-set" not in rules(spec("convert", GOOD, unit=enum))


def test_param_closed_set_ignores_ordinary_prose() -> None:
    prose = {"type": "string", "description": "The city and state, e.g. Boston, MA."}
    assert "param-closed-set" not in rules(spec("convert", GOOD, city=prose))


@pytest.mark.parametrize(
    ("name", "implicit", "explicit"),
    [
        ("phone", "用户手机号", "手机号，带国家码，例如 +8613800138000"),
        ("start_date", "The first day.", "The first day, YYYY-MM-DD."),
        ("price", "The price to pay.", "The price in USD."),
        ("weight", "Weight of the parcel.", "Weight of the parcel in kg."),
    ],
)
def test_param_format_implicit(name: str, implicit: str, explicit: str) -> None:
    def with_param(text: str) -> ToolSpec:
        return spec("convert", GOOD, **{name: {"type": "string", "description": text}})

    assert "param-format-implicit" in rules(with_param(implicit))
    assert "param-format-implicit" not in rules(with_param(explicit))


def test_param_format_reads_the_head_of_the_description() -> None:
    user_id = {"type": "string", "description": "用户 ID，例如 u_1024（不是手机号）"}
    assert "param-format-implicit" not in rules(spec("convert", GOOD, user_id=user_id))


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("group_size", "Size of the group that the restaurant should accommodate."),  # not a date
        ("destination", "The destination city for the distance calculation."),  # measurements go by name
        ("distance", "The distance between the two charges in meters."),
        ("years", "The time period in years."),
    ],
)
def test_param_format_ignores_look_alikes(name: str, description: str) -> None:
    param = {"type": "string", "description": description}
    assert "param-format-implicit" not in rules(spec("convert", GOOD, **{name: param}))


def test_empty_result_unstated() -> None:
    assert "empty-result-unstated" in rules(spec("search_orders", "Search the orders of a user by keyword and status."))
    assert "empty-result-unstated" in rules(spec("order_lookup", "Look up one order by its id, with its items."))
    stated = "Search the orders of a user by keyword. No match returns an empty list; that is not an error."
    assert "empty-result-unstated" not in rules(spec("search_orders", stated))
    assert "empty-result-unstated" not in rules(spec("convert", GOOD))  # not a look-up


def test_side_effect_unstated_uses_declared_effects() -> None:
    @tool
    def archive(ticket_id: str) -> str:
        """Handle a ticket that the customer no longer needs, by its id."""
        return ticket_id

    @tool(effects="read_only")
    def summary(ticket_id: str) -> str:
        """Handle a ticket that the customer no longer needs, by its id."""
        return ticket_id

    @tool(effects="destructive")
    def purge(ticket_id: str) -> str:
        """Delete a ticket and its history permanently; this cannot be undone."""
        return ticket_id

    assert "side-effect-unstated" in rules(archive)  # no effects declared: assumed to change the world
    assert "side-effect-unstated" not in rules(summary)
    assert "side-effect-unstated" not in rules(purge)


def test_side_effect_unstated_guesses_from_the_verb_without_effects() -> None:
    assert "side-effect-unstated" in rules(spec("send_report", "The weekly report of a team, as a PDF attachment."))
    assert "side-effect-unstated" not in rules(spec("send_report", "Sends the weekly report of a team by email."))


def test_cost_rules() -> None:
    long = spec("convert", GOOD + " " + "Lorem ipsum dolor sit amet. " * 300)
    assert {f.rule for f in lint([long]).findings} >= {"cost-tool"}
    many = [spec(f"convert_{i}", GOOD + " Lorem ipsum dolor sit amet." * 30) for i in range(40)]
    assert [f.tool for f in lint(many).findings if f.rule == "cost-set"] == ["(all tools)"]
    report = lint([spec("convert", GOOD)])
    assert not {f.rule for f in report.findings} & {"cost-tool", "cost-set"}
    assert report.cost is not None and 20 < report.cost.totals["openai-chat"] < 100


def test_cost_counts_every_format_and_the_share_of_the_window() -> None:
    report = lint(load_declarations(str(DATA / "orders_clean.json")))
    assert report.cost is not None
    tokens = {c.name: c.tokens for c in report.cost.tools}
    assert set(tokens["list_orders"]) == {"openai-chat", "anthropic"}
    assert tokens["list_orders"]["openai-chat"] > tokens["get_order_by_id"]["openai-chat"]
    share = report.cost.totals["anthropic"] / 200_000
    assert report.cost.share["anthropic"] == pytest.approx(share)
    assert report.cost.largest(1)[0].name == "list_orders"


def test_output_not_strict() -> None:
    from toolslip.quality.lint import lint_output

    open_map = {
        "type": "object",
        "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number"}}},
    }
    assert [f.rule for f in lint_output(open_map).findings if f.rule == "output-not-strict"] == ["output-not-strict"]
    closed = {"type": "object", "properties": {"label": {"enum": ["spam", "ham"], "description": "The class."}}}
    assert lint_output(closed).findings == ()


def test_every_rule_has_a_test_above() -> None:
    tested = Path(__file__).read_text(encoding="utf-8")
    assert [rule for rule in RULES if f'"{rule}"' not in tested] == []


def test_seed_bloated_order_tools_are_flagged() -> None:
    report = lint(load_declarations(str(DATA / "orders_bloated.json")))
    flagged = {f.tool for f in report.findings if f.rule == "overlap"} | {
        f.other for f in report.findings if f.rule == "overlap"
    }
    assert {"search_orders", "query_orders", "find_order", "order_lookup"} <= flagged  # one job, four names
    assert "get_order_list" not in flagged  # it lists; the searches search: a boundary, not a guess
    assert report.errors >= 5
    assert "list_user_orders" not in flagged  # by phone: the object is the user's, the name says so


def test_seed_clean_two_tool_version_passes() -> None:
    report = lint(load_declarations(str(DATA / "orders_clean.json")))
    assert report.tools == ("get_order_by_id", "list_orders")
    assert report.findings == ()


@pytest.mark.parametrize("example", ["weather.py", "expenses.py"])
def test_toolslip_examples_lint_clean(example: str) -> None:
    report = lint(load_tools_file(str(ROOT / "examples" / example)))
    assert [f.to_dict() for f in report.findings] == []


def test_disable_everywhere_and_per_tool() -> None:
    tools = load_declarations(str(DATA / "orders_bloated.json"))
    assert "overlap" not in {f.rule for f in lint(tools, disable=["overlap"], cost=False).findings}
    per_tool = lint(tools, disable=["find_order:description-short"], cost=False).findings
    assert ("find_order", "description-short") not in {(f.tool, f.rule) for f in per_tool}
    assert ("order_lookup", "description-short") in {(f.tool, f.rule) for f in per_tool}
    with pytest.raises(ConfigError, match="unknown lint rule 'no-such-rule'"):
        lint(tools, disable=["no-such-rule"])


def test_json_report_round_trips() -> None:
    report = lint(load_declarations(str(DATA / "orders_bloated.json")))
    data = json.loads(json.dumps(report.to_dict(), ensure_ascii=False))
    assert data["errors"] == report.errors and len(data["findings"]) == len(report.findings)
    first = data["findings"][0]
    assert set(first) >= {"rule", "severity", "tool", "message", "text", "suggestion"}


def test_disable_for_a_tool_that_is_not_there_is_an_error() -> None:
    @tool
    def fx(amount: float) -> str:
        """Convert an amount of USD to CNY at today's rate; returns the CNY amount as text."""
        return str(amount)

    lint([fx], disable=["fx:description-short"])  # a tool that exists: fine
    with pytest.raises(ConfigError, match="disable 'fz:description-short': no tool of that name; tools are: fx"):
        lint([fx], disable=["fz:description-short"])


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("查询天气", "characters outside a-z"),
        ("get weather", "characters outside a-z"),
        ("weather.current", "characters outside a-z"),
        ("x" * 65, "is 65 characters"),
    ],
)
def test_name_invalid_per_provider(name: str, why: str) -> None:
    (finding,) = [f for f in lint([spec(name, GOOD)], cost=False).findings if f.rule == "name-invalid"]
    assert why in finding.message and "openai-chat" in finding.message
    assert ("anthropic" in finding.message) == (len(name) <= 64 or len(name) > 128 or not name.isascii())


def test_a_name_anthropic_takes_but_openai_does_not() -> None:
    (finding,) = [f for f in lint([spec("x" * 100, GOOD)], cost=False).findings if f.rule == "name-invalid"]
    assert "openai-chat" in finding.message and "anthropic" not in finding.message


def test_name_duplicate() -> None:
    a, b = spec("get_air_quality", "Air quality index now."), spec("get_air_quality", "Air quality next 24 hours.")
    duplicates = [f for f in lint([a, b], cost=False).findings if f.rule == "name-duplicate"]
    assert len(duplicates) == 1 and "2 declarations are named 'get_air_quality'" in duplicates[0].message
    assert "name-duplicate" not in rules(a, spec("get_air_quality_forecast", "Air quality next 24 hours."))


def test_description_vague() -> None:
    vague = (
        "This powerful and flexible tool helps you handle many different kinds of tasks and operations in an "
        "efficient and simple way, supporting all of your various needs."
    )
    assert "description-vague" in rules(spec("do_work", vague))
    concrete = "List all the servers in the environment of the given server type; with no type, all servers are listed."
    assert "description-vague" not in rules(spec("list_servers", concrete))


def test_overlap_in_other_words() -> None:
    city = {"type": "string", "description": "City name in English, e.g. 'Paris'."}
    per_day = "for the next 7 days: temperature and rain per day."
    a = spec("get_forecast", f"Weather forecast for a city {per_day}", city=city)
    b = spec("weather_outlook", f"Weather outlook of a city {per_day}", city=city)
    assert "overlap" in rules(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (("SearchHouse", "Search houses to rent in a city."), ("BookHouse", "Book a house found with SearchHouse.")),
        (("git_create_branch", "Create a branch from a start point."), ("git_branch", "List the local branches.")),
        (("set_table_width", "Set the width of a table."), ("set_table_column_width", "Set the width of a column.")),
    ],
)
def test_no_overlap_for_other_jobs_or_other_objects(a: tuple[str, str], b: tuple[str, str]) -> None:
    assert "overlap" not in rules(spec(*a), spec(*b))


def test_param_closed_set_in_prose_but_not_in_examples() -> None:
    def closed(text: str) -> bool:
        return "param-closed-set" in rules(spec("convert", GOOD, p={"type": "string", "description": text}))

    assert closed("Priority level: low, medium or high")
    assert closed("Which branches: ('local'), ('remote') or ('all')")
    assert closed("Options include 'breakfast', 'lunch', 'dinner', or 'snack'.")
    assert not closed("IANA timezone name (e.g., 'America/New_York', 'Europe/London').")
    assert not closed("The date of the journey, in the format 'MM/DD/YYYY'.")
    assert not closed("The language. Options include 'Hindi', 'English', 'Punjabi', etc.")


def test_param_format_false_alarms_from_the_issue() -> None:
    volume = {"type": "integer", "description": "Volume to set when the song starts, between 0 (mute) and 100."}
    max_length = {"type": "integer", "description": "Maximum number of characters to return."}
    assert "param-format-implicit" not in rules(spec("convert", GOOD, volume=volume, max_length=max_length))


def test_empty_result_only_for_searches_and_lists() -> None:
    assert "empty-result-unstated" not in rules(spec("get_current_time", "Get current time in a specific timezone"))
    assert "empty-result-unstated" in rules(spec("Trains_1_FindTrains", "Finds available trains for a route and date."))
