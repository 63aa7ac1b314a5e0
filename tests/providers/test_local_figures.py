"""Figures the embedded model wrote itself: which numbers of an answer the conversation supports (no weights)."""

from __future__ import annotations

from toolslip.messages import Message, ToolCall, ToolResult, ToolSpec
from toolslip.providers.local_figures import (
    NUDGE,
    STEER,
    FigureGate,
    computing,
    echoes,
    failed,
    fed_back,
    guesses,
    ignored,
    invented,
    marked,
    nudged,
    pending,
    producers,
    reconsidered,
    refuses,
    reported,
    reused,
    steered,
    takes_a_figure,
    ungrounded,
    unsaid,
    unsteered,
    untaken,
    unused,
)

TRIP = "I spent 320 USD and 15000 JPY on a business trip. How much is that in CNY in total? And split among 4 people?"


def _after_fx() -> list[Message]:
    fx = ToolCall(id="c1", name="fx", arguments={"amount": 320, "currency": "USD"})
    return [
        Message.user(TRIP),
        Message.assistant(calls=[fx]),
        Message.tool([ToolResult(call_id="c1", content="320 USD = 2297.6 CNY")]),
    ]


def test_numbers_no_tool_gave_are_ungrounded_and_given_ones_are_not() -> None:
    messages = [Message.user(TRIP)]
    # the 0.5B model's answer with no tool called (issue 37): every figure but the question's own is made up
    assert ungrounded("Total 45,500 CNY, 11,375 each (320 USD and 15000 JPY)", messages) == ["45,500", "11,375"]
    # after the tool: its figure, rounded or written with separators, is supported; small counts are left alone
    assert ungrounded("320 USD is 2,297.60 CNY, about 2298 CNY; split 4 ways", _after_fx()) == []
    assert ungrounded('{"total_cny": 2297.6, "per_person_cny": 574.4}', _after_fx()) == ["574.4"]


def _no_weather(city: str, question: str) -> list[Message]:
    """``question``, a weather call for ``city`` and the tool's error: it has no data for that city."""
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": city})
    return [
        Message.user(question),
        Message.assistant(calls=[weather]),
        Message.tool([ToolResult(call_id="c1", content=f'{{"error": "no weather data for {city}"}}')]),
    ]


def test_an_answer_that_says_it_could_not_has_nothing_to_check() -> None:
    messages = _no_weather("Paris", "What's the weather in Paris?")
    assert ungrounded("I could not get the weather for Paris: there is no data for it.", messages) == []
    assert ungrounded("Paris is sunny, 20 °C.", messages) == ["20"]


def test_the_questions_figures_that_no_call_took_are_unused_once_a_tool_was_called() -> None:
    assert unused([Message.user(TRIP)]) == []  # no call yet: the ungrounded figures speak for themselves
    assert unused(_after_fx()) == ["15000", "4"]  # the second amount and the split never went into a call


def test_a_typed_answer_made_of_the_questions_own_figures_is_asked_again_before_any_call() -> None:
    # the 0.5B model's typed answer to the seed's trip with Expense, after 0 calls (issue 36)
    copied = '{"total_cny": 15000.0, "per_person_cny": 320.0}'
    assert unused([Message.user(TRIP)], typed=True) == ["320", "15000", "4"]
    again = nudged([Message.user(TRIP)], copied, typed=True)
    assert again is not None and "320, 15000, 4 went into no tool call yet" in again[-1].text
    # a prose answer may quote the question's figures before any call ("320 is less than 15000")
    assert nudged([Message.user(TRIP)], "320 USD and 15000 JPY.") is None


def _after_both_fx() -> list[Message]:
    jpy = ToolCall(id="c2", name="fx", arguments={"amount": 15000, "currency": "JPY"})
    return [
        *_after_fx(),
        Message.assistant(calls=[jpy]),
        Message.tool([ToolResult(call_id="c2", content="15000 JPY = 705.0 CNY")]),
    ]


def test_a_tool_result_that_reached_neither_the_answer_nor_a_later_call_was_ignored() -> None:
    messages = _after_both_fx()
    # the 0.5B model's typed answer after both conversions (issue 36): every figure given, a result dropped
    assert ignored('{"total_cny": 320.0, "per_person_cny": 705.0}', messages) == ["2297.6"]
    assert ungrounded('{"total_cny": 320.0, "per_person_cny": 705.0}', messages) == []
    # a result's figure taken by a later call reached it; rounded in the answer counts too
    add = ToolCall(id="c3", name="calc", arguments={"expr": "2297.6 + 705.0"})
    summed = [*messages, Message.assistant(calls=[add]), Message.tool([ToolResult(call_id="c3", content="3002.6")])]
    assert ignored("In total 3,003 CNY, 750.65 each.", summed) == []
    # an answer with no figure of its own, and a result that failed, are left alone
    assert ignored("Yes, both conversions worked.", messages) == []
    failed = [*_after_fx()[:2], Message.tool([ToolResult(call_id="c1", content="refused: 320 XYZ", is_error=True)])]
    assert ignored("It is 320.", failed) == []
    assert producers(["2297.6"], messages) == {"fx"}


def test_the_nudge_asks_to_combine_a_left_out_result_with_the_others_or_to_answer_with_the_one() -> None:
    again = nudged(_after_both_fx(), '{"total_cny": 320.0, "per_person_cny": 705.0}', typed=True)
    assert again is not None and "Use a tool to combine 2297.6 with 705.0." in again[-1].text
    one = [Message.user("How much is 320 USD in yuan?"), *_after_fx()[1:]]
    again = nudged(one, "It is 320 USD.")
    assert again is not None and again[-1].text.endswith("leaves out the tool results' 2297.6. Answer with it.")


def test_a_call_takes_a_figure_of_the_question_or_it_was_made_for_its_own_sake() -> None:
    form = [Message.user("Fill in the form from this note: I bought 3 books at 12 USD each.")]
    assert not takes_a_figure([ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "USD"})], form)
    assert takes_a_figure([ToolCall(id="c", name="fx", arguments={"amount": 12, "currency": "USD"})], form)
    assert takes_a_figure([ToolCall(id="c", name="calc", arguments={"expr": "(2297.6+705)/4"})], [Message.user(TRIP)])


def test_the_nudge_names_what_is_wrong_and_leaves_the_conversation_alone() -> None:
    messages = _after_fx()
    again = nudged(messages, "Total 2297.6 CNY")
    assert again is not None and again[-1].tool_results == messages[-1].tool_results
    assert "15000, 4 went into no tool call yet" in again[-1].text
    assert messages[-1].text == ""
    assert nudged([Message.user("What is the capital of France?")], "Paris.") is None


def test_a_marked_answer_says_which_figures_are_the_models_own() -> None:
    assert marked("Paris is 20 °C.", ["20"]).endswith(
        "[not from a tool: 20 — the model wrote these figures itself; no tool result gave them]"
    )


def test_the_gate_passes_the_text_before_the_first_figure_no_one_gave_and_holds_the_rest() -> None:
    gate = FigureGate(on=True, messages=[Message.user("How much did I spend in all?")])
    shown = [gate.let(piece) for piece in ("The total ", "is 3,0", "02.6 CNY", " in all.")]
    assert shown == ["The total ", "is ", "", ""]
    # while the question's figures wait for a tool, the answer is held: it may be asked again as a call
    waiting = FigureGate(on=True, messages=[Message.user("What is 17 + 25?")])
    assert [waiting.let(piece) for piece in ("The total ", "is 42.")] == ["", ""]
    # long enough to be no worked answer (a story "at least 600 words" long), it streams; one that writes a call
    # out stays held
    story = FigureGate(on=True, messages=[Message.user("Write a story of at least 600 words.")])
    lines = ["Once upon a time a dragon slept. " * 15, "It woke.", "It had 3 heads and 1200 teeth."]
    assert [story.let(piece) for piece in lines] == ["", lines[0] + "It woke.", "It had 3 heads and "]
    calc = ToolSpec(name="calc", description="", parameters={"type": "object"})
    program = FigureGate(on=True, messages=[Message.user("What is 17 + 25?")], tools=[calc])
    assert program.let("x = calc('17 + 25')\n" + "# adding\n" * 80) == ""
    worked = FigureGate(on=True, messages=[Message.user("What is 17 + 25?")])
    assert [worked.let(p) for p in ("Assume it is 43. ", "So " * 200, "the end.")] == ["", "", ""] and worked.closed
    assert [FigureGate(on=False).let(p) for p in ("is 3,0", "02.6")] == ["is 3,0", "02.6"]


def test_a_figure_someone_gave_streams_on_once_it_is_whole() -> None:
    fx = ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "USD"})
    given = [
        Message.user("What did my trip cost in yuan?"),
        Message.assistant(calls=[fx]),
        Message.tool([ToolResult(call_id="c", name="fx", content="2297.6")]),
    ]
    gate = FigureGate(on=True, messages=given)
    pieces = ("You spent 3", "20 USD, that is 2,2", "97.6 CNY. ", "Twice that is 4595.2 CNY", ".")
    shown = [gate.let(piece) for piece in pieces]
    assert shown == ["You spent ", "320 USD, that is ", "2,297.6 CNY. ", "Twice that is ", ""]
    assert "".join(shown) == "You spent 320 USD, that is 2,297.6 CNY. Twice that is "  # a prefix of the answer
    # an answer to work on the question's own figures ("I spent 320 USD") is held whole: it may be asked again
    worked = [Message.user("I spent 320 USD. How much is that in yuan?"), *given[1:]]
    assert computing(worked) and not computing(given)
    assert [FigureGate(on=True, messages=worked).let(piece) for piece in pieces[:2]] == ["", ""]


def test_a_figure_between_chinese_characters_is_read() -> None:
    # Python's \w matches CJK characters: a \w-bounded pattern saw no number in 是22度 (a run of issue 37's questions)
    assert ungrounded("哈尔滨现在是22度。", [Message.user("哈尔滨现在几度？")]) == ["22"]


def _after(result: str, question: str = "把 200 美元换成人民币是多少？") -> list[Message]:
    fx = ToolCall(id="c1", name="fx", arguments={"amount": 200, "currency": "USD"})
    return [
        Message.user(question),
        Message.assistant(calls=[fx]),
        Message.tool([ToolResult(call_id="c1", content=result)]),
    ]


def test_a_refusal_right_after_a_result_that_answered_is_asked_again_in_the_questions_language() -> None:
    # the 0.5B model's answer after the right fx result (issue 37, a question the team did not tune on)
    answered = _after("200 USD = 1436.0 CNY")
    assert refuses("抱歉，我无法提供这个工具的响应。", answered)
    again = nudged(answered, "抱歉，我无法提供这个工具的响应。")
    assert again is not None and again[-1].text.strip() == "请只根据上面的工具结果，用中文回答我的问题。"
    english = _after("200 USD = 1436.0 CNY", "How much is 200 USD in CNY?")
    again = nudged(english, "Sorry, I can't help with that.")
    assert again is not None and again[-1].text.strip() == "Answer my question only from the tool results above."


def test_a_refusal_of_a_result_that_failed_or_of_no_result_stands() -> None:
    assert not refuses("抱歉，天气工具没有东京的数据。", _after('{"error": "no weather data for 东京"}'))
    assert not refuses("Sorry, I cannot answer that.", [Message.user("What is the population of Shanghai?")])
    assert not refuses("1436.0 CNY", _after("200 USD = 1436.0 CNY"))  # an answer, not a refusal
    assert nudged(_after('{"error": "no data"}', "东京今天天气如何？"), "抱歉，没有东京的数据。") is None
    # the trip's 15000 and 4 went into no call: asked to answer anyway, the model gave the part it had
    assert not refuses("抱歉，我无法提供这个工具的响应。", _after_fx())
    assert nudged(_after_fx(), "抱歉，我无法提供这个工具的响应。") is None  # nor asked again for the figures left


def test_an_answer_after_results_that_all_failed_is_held_whole_and_a_figure_in_it_is_asked_again() -> None:
    # "成都今天多少度？要带伞吗？": the tool had no data, and the 1.5B model answered "... is 22 degrees Celsius"
    no_data = _no_weather("成都", "成都今天多少度？要带伞吗？")
    assert failed(no_data) == {"get_weather"}
    gate = FigureGate(on=True, messages=no_data)
    assert [gate.let(p) for p in ("The temperature in 成都 is ", "22", " °C.")] == ["", "", ""]
    again = nudged(no_data, "The temperature in 成都 is 22 °C.")
    assert again is not None and again[-1].text.strip().endswith("Tell me you could not find it.")
    assert "Call the tool" not in again[-1].text  # the tool that failed is not asked for again
    assert nudged(no_data, "抱歉，没有成都的天气数据。") is None  # saying so stands
    # one result that answered is enough: the answer streams, and its figures are checked as ever
    assert failed(_after("200 USD = 1436.0 CNY")) == set()
    assert failed([Message.user("Hi")]) == set()  # no call, nothing failed
    streams = _after("200 USD = 1436.0 CNY", "我的钱换成人民币是多少？")  # held whole if the question gave 200
    assert FigureGate(on=True, messages=streams).let("200 USD is") == "200 USD is"


def test_the_gate_holds_an_answer_after_results_while_it_may_be_a_refusal() -> None:
    answered = _after("200 USD = 1436.0 CNY", "How much is my money in CNY?")
    gate = FigureGate(on=True, messages=answered)
    assert [gate.let(p) for p in ("抱", "歉，我无法", "提供。")] == ["", "", ""] and gate.closed  # asked again first
    gate = FigureGate(on=True, messages=answered)
    assert [gate.let(p) for p in ("I", " can", " see: 1436.0 CNY", ".")] == ["", "", "I can see: 1436.0 CNY", "."]
    before = FigureGate(on=True, messages=[Message.user("Hi")])  # no result yet: nothing to refuse, nothing held
    assert before.let("Sorry") == "Sorry"


def test_a_figure_in_chinese_numerals_is_read_before_a_unit_and_ordinary_words_are_not() -> None:
    asked = [Message.user("哈尔滨现在几度？")]
    assert ungrounded("哈尔滨现在是二十二度。", asked) == ["二十二"]
    assert ungrounded("一共一百零五元，三万人。", asked) == ["一百零五", "三万"]
    assert ungrounded("十分感谢，一共有一些数据。", asked) == []  # 十分 ("very"), 一共 ("in all"): words
    given = [Message.user("北京几度？"), Message.tool([ToolResult(call_id="c", content='{"temp": 28}')])]
    assert ungrounded("北京现在二十八度。", given) == []  # the tool's 28, written in words


def test_an_answer_that_only_repeats_the_question_is_held_and_asked_again() -> None:
    # the 0.5B model, asked a question the team did not tune on, after the tool gave 82 °F (issue 37)
    question = "北京现在华氏多少度？"
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "北京", "unit": "fahrenheit"})
    result = Message.tool([ToolResult(call_id="c1", content='{"city": "北京", "temp": 82, "unit": "fahrenheit"}')])
    answered = [Message.user(question), Message.assistant(calls=[weather]), result]
    assert echoes("北京现在华氏多少度？", answered) and echoes("北京现在华氏多少度", answered)
    assert not echoes("北京现在华氏82度。", answered)
    again = nudged(answered, question)
    assert again is not None
    assert again[-1].text.strip() == "你只重复了我的问题，没有回答。 请只根据上面的工具结果，用中文回答我的问题。"
    gate = FigureGate(on=True, messages=answered)
    assert [gate.let(p) for p in ("北京", "现在华氏", "多少度？")] == ["", "", ""]  # nothing shown yet
    gate = FigureGate(on=True, messages=answered)
    assert [gate.let(p) for p in ("北京", "现在是华氏", "82度。")] == ["", "北京现在是华氏", "82度。"]
    no_call = nudged([Message.user("哈尔滨冷不冷？")], "哈尔滨冷不冷？")  # no tool called: call one, or say so
    assert no_call is not None and no_call[-1].text.strip().endswith(NUDGE)


def test_a_call_on_a_figure_nothing_gave_is_invented_and_one_on_the_questions_figures_is_not() -> None:
    fx = ToolSpec(
        name="fx",
        description="Convert to CNY.",
        parameters={"type": "object", "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}}},
    )
    search = ToolSpec(
        name="search",
        description="Search.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}, "limit": {"default": 20}}},
    )
    capital = [Message.user("What's the capital of France?")]
    # the 0.5B model, offered fx, wrote these for questions no tool answers
    assert invented([ToolCall(id="c1", name="fx", arguments={"amount": 120, "currency": "USD"})], capital, [fx]) == [
        "120"
    ]
    euros = [Message.user("100 欧元换成人民币是多少？")]
    assert invented([ToolCall(id="c1", name="fx", arguments={"amount": 100, "currency": "EUR"})], euros, [fx]) == []
    # figures in an expression, small counts, a tool's own default, a figure a tool result gave
    sum_ = ToolCall(id="c2", name="calc", arguments={"expr": "(320 * 0.64) + 15000"})
    assert invented([sum_], [Message.user(TRIP)], [fx]) == ["0.64"]
    assert invented([ToolCall(id="c3", name="search", arguments={"q": "x", "limit": 20})], capital, [search]) == []
    assert invented([ToolCall(id="c4", name="fx", arguments={"amount": 3, "currency": "USD"})], capital, [fx]) == []
    later = [*_after_fx(), Message.user("And that divided by 4?")]
    assert invented([ToolCall(id="c5", name="calc", arguments={"expr": "2297.6 / 4"})], later, [fx]) == []


def test_the_steering_line_leaves_a_prompt_that_offers_no_tool_and_everything_else_stays() -> None:
    mine = Message.system("Be brief.\n\nAnswer in French.")
    window = "2 earlier tool exchanges were left out."
    steered_ = [Message.system(f"{mine.text}\n\n{STEER}\n\n{window}"), Message.user("hi")]
    assert [m.text for m in unsteered(steered_)] == [f"{mine.text}\n\n{window}", "hi"]
    assert unsteered([Message.system(STEER), Message.user("hi")]) == [Message.user("hi")]
    assert unsteered([mine, Message.user("hi")]) == [mine, Message.user("hi")]


def _trip(*steps: tuple[str, dict[str, object], str]) -> list[Message]:
    """The trip question and ``steps`` (tool, arguments, result), each call answered."""
    out = [Message.user(TRIP)]
    for n, (name, arguments, result) in enumerate(steps):
        out += [
            Message.assistant(calls=[ToolCall(id=f"s{n}", name=name, arguments=arguments)]),
            Message.tool([ToolResult(call_id=f"s{n}", content=result)]),
        ]
    return out


FX_320 = ("fx", {"amount": 320, "currency": "USD"}, "320 USD = 2297.6 CNY")
FX_15000 = ("fx", {"amount": 15000, "currency": "JPY"}, "15000 JPY = 705.0 CNY")


def test_a_result_passed_whole_back_to_the_tool_that_gave_it_is_fed_back() -> None:
    both = _trip(FX_320, FX_15000)
    # the 1.5B model's third call on the seed's trip: the yuan converted again as dollars
    assert fed_back([ToolCall(id="c", name="fx", arguments={"amount": 2297.6, "currency": "USD"})], both) == ["2297.6"]
    assert fed_back([ToolCall(id="c", name="calc", arguments={"expr": "2297.6"})], both) == []  # another tool
    summed = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"))
    # a result inside a longer argument is the next step, not the same one again
    assert fed_back([ToolCall(id="c", name="calc", arguments={"expr": "3002.6 / 4"})], summed) == []
    assert fed_back([ToolCall(id="c", name="calc", arguments={"expr": " 3002.6 "})], summed) == ["3002.6"]
    # through another tool: 3002.6 came out of calc and, through 2297.6 and 705.0, out of fx
    assert fed_back([ToolCall(id="c", name="fx", arguments={"amount": 3002.6, "currency": "USD"})], summed) == [
        "3002.6"
    ]
    # the question's own figure, passed in again, is no result of the tool
    assert fed_back([ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "EUR"})], both) == []


def test_a_figure_a_call_already_took_is_reused_unless_the_question_gave_it_twice() -> None:
    summed = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"))
    # the 1.5B model's stray calls on the seed's trip: dollars plus yen, and a split split again
    assert reused([ToolCall(id="c", name="calc", arguments={"expr": "320 + 15000"})], summed) == ["320", "15000"]
    split = _trip(
        *[FX_320, FX_15000], ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"), ("calc", {"expr": "3002.6 / 4"}, "750.65")
    )
    assert reused([ToolCall(id="c", name="calc", arguments={"expr": "3002.6 / 4 / 4"})], split) == ["3002.6"]
    # the next step takes each figure for the first time
    assert reused([ToolCall(id="c", name="calc", arguments={"expr": "3002.6 / 4"})], summed) == []
    assert reused([ToolCall(id="c", name="calc", arguments={"expr": "2297.6 + 705.0"})], _trip(FX_320, FX_15000)) == []
    # a figure the question gives twice may go into two calls
    twice = [Message.user("How much are 100 USD and 100 EUR in CNY?")]
    twice += _trip(("fx", {"amount": 100, "currency": "USD"}, "100 USD = 718.0 CNY"))[1:]
    assert reused([ToolCall(id="c", name="fx", arguments={"amount": 100, "currency": "EUR"})], twice) == []
    # a call that failed took nothing; a call repeated whole is the repeat guard's
    failed = _trip(("fx", {"amount": 320, "currency": "USD"}, "error: the rate service is down"))
    assert reused([ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "USD"})], failed) == []
    assert reused([ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "USD"})], _trip(FX_320)) == []


def test_calls_on_guesses_are_made_up_fed_back_or_reused_figures() -> None:
    fx = ToolSpec(name="fx", description="Convert to CNY.", parameters={"type": "object", "properties": {}})
    both = _trip(FX_320, FX_15000)
    calls = [
        ToolCall(id="a", name="calc", arguments={"expr": "320 * 6.7"}),
        ToolCall(id="b", name="fx", arguments={"amount": 705.0, "currency": "JPY"}),
    ]
    assert guesses(calls, both, [fx]) == ["6.7", "705.0", "320"]
    assert guesses([ToolCall(id="c", name="calc", arguments={"expr": "2297.6 + 705.0"})], both, [fx]) == []


def test_a_call_on_a_result_fed_back_is_told_where_the_result_came_from_and_what_is_left_to_combine() -> None:
    both = _trip(FX_320, FX_15000)
    call = ToolCall(id="c", name="fx", arguments={"amount": 2297.6, "currency": "USD"})
    said = reconsidered(both, "", [call], [], typed=False)
    assert said is not None
    assert "2297.6 already came out of fx: a call of fx on it would apply it twice." in said[-1].text
    assert said[-1].text.endswith("Use a tool to combine 2297.6 with 705.0.")
    # 3002.6 is made of 2297.6 and 705.0: nothing is left to combine it with
    summed = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"))
    call = ToolCall(id="c", name="fx", arguments={"amount": 3002.6, "currency": "USD"})
    said = reconsidered(summed, "", [call], [], typed=False)
    assert said is not None and said[-1].text.endswith("apply it twice. My question's 4 went into no tool call yet.")
    done = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0 / 4"}, "2473.85"))
    said = reconsidered(
        done, "", [ToolCall(id="c", name="fx", arguments={"amount": 2473.85, "currency": "USD"})], [], False
    )
    assert said is not None and said[-1].text.endswith("a call of fx on it would apply it twice. Answer with it.")
    assert (
        reconsidered(summed, "", [ToolCall(id="c", name="calc", arguments={"expr": "3002.6 / 4"})], [], False) is None
    )


def test_a_call_on_a_made_up_figure_while_results_wait_to_be_combined_is_told_to_combine_them() -> None:
    both = _trip(FX_320, FX_15000)
    assert untaken(both) == ["2297.6", "705.0"]
    # the 1.5B model's third call on the trip, a rate it made up out of a result
    said = reconsidered(both, "", [ToolCall(id="c", name="calc", arguments={"expr": "320 * 2.2976"})], [], False)
    assert said is not None and said[-1].text.endswith("Use a tool to combine 2297.6 with 705.0.")
    summed = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"))
    assert untaken(summed) == ["3002.6"]
    said = reconsidered(summed, "", [ToolCall(id="c", name="calc", arguments={"expr": "3002.6 * 0.9"})], [], False)
    assert said is not None and said[-1].text.endswith("Call the tool that gives it now.")


def test_an_answer_worked_out_in_its_head_while_results_wait_is_told_to_combine_them() -> None:
    # sampled at 0.7 after both conversions, the 1.5B model answered "2297.6 CNY ÷ 4 people = 574.4 CNY per person"
    both = _trip(FX_320, FX_15000)
    again = nudged(both, "2297.6 CNY ÷ 4 people = 574.4 CNY per person")
    assert again is not None
    assert again[-1].text.strip().endswith("Use a tool to combine 2297.6 with 705.0.")
    assert "574.4 would be a guess" in again[-1].text


def test_a_call_repeated_whole_while_results_wait_for_another_tool_is_reused() -> None:
    # sampled at 0.7 after both conversions, the 1.5B model called fx(320, "USD") again, and the answer decoded
    # instead added the results up in its head ("2297.6 + 705.0 = 674.4")
    tools = [ToolSpec(name=n, description="", parameters={"type": "object"}) for n in ("calc", "fx")]
    again = [ToolCall(id="c", name="fx", arguments={"amount": 320, "currency": "USD"})]
    both = _trip(FX_320, FX_15000)
    assert reused(again, both, tools) == ["320"]
    told = reconsidered(both, "", again, tools, typed=False)
    assert told is not None
    assert (
        told[-1]
        .text.strip()
        .endswith(
            "320 went into a tool call already: use the result that call gave. "
            "My question's 4 went into no tool call yet. Use a tool to combine 2297.6 with 705.0."
        )
    )
    # with no other tool to turn to, or with nothing left for a tool, the repeat is the repeat guard's
    assert reused(again, both, tools[1:]) == []
    split = _trip(
        FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"), ("calc", {"expr": "3002.6 / 4"}, "750.65")
    )
    assert reused(again, split, tools) == []


def test_the_answer_after_the_last_step_of_the_questions_work_is_held_and_one_with_no_figure_is_asked_again() -> None:
    # sampled at 0.7 after the trip's four right calls, the 1.5B model answered "You're welcome!"
    done = _trip(
        *[FX_320, FX_15000], ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"), ("calc", {"expr": "3002.6 / 4"}, "750.65")
    )
    assert computing(done) and [FigureGate(on=True, messages=done).let(p) for p in ("You're", " welcome!")] == ["", ""]
    again = nudged(done, "You're welcome!")
    assert again is not None and again[-1].text.strip().endswith("Answer my question only from the tool results above.")
    assert nudged(done, "3002.6 CNY in total, 750.65 CNY each.") is None  # the results: it stands
    # its own rates in the explanation are guesses, asked again as ever
    again = nudged(done, "320 USD × 6.00 CNY/USD = 1920.0 CNY. In all 3002.6, 750.65 each.")
    assert again is not None and "An answer with 6.00, 1920.0 would be a guess" in again[-1].text
    # after the first call, "You're welcome!" (sampled) is asked for the call due; "I could not" stands (asked
    # again, the model answered with the part it had)
    again = nudged(_trip(FX_320), "You're welcome! Let me know if you need more.")
    assert again is not None and again[-1].text.strip() == (
        "My question's 15000, 4 went into no tool call yet. " + NUDGE
    )
    assert nudged(_trip(FX_320), "I could not convert the yen.") is None
    assert nudged([Message.user(TRIP)], "Sure, let me help.") is None  # nothing answered yet: no work to report


def test_an_answer_of_its_own_once_the_work_is_done_is_asked_for_from_the_results_not_for_a_call() -> None:
    # greedy, an untuned Chinese wording after the four right calls: "320 USD + 15000 JPY = 17297.6 CNY ...";
    # told to call the tool that gives it "or say that you could not get it", it answered "I could not get it."
    zh = "我这次出差一共花了 320 美元和 15000 日元。折合人民币是多少？如果 4 个人平分，每人要出多少？"
    steps = [
        FX_320,
        FX_15000,
        ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"),
        ("calc", {"expr": "3002.6 / 4"}, "750.65"),
    ]
    done = [Message.user(zh), *_trip(*steps)[1:]]
    again = nudged(done, "320 USD + 15000 JPY = 17297.6 CNY\n17297.6 CNY / 4 = 4324.4 CNY")
    assert again is not None and again[-1].text.strip().endswith("请只根据上面的工具结果，用中文回答我的问题。")
    assert NUDGE not in again[-1].text
    # while figures still wait for a tool, the call is asked for as before
    again = nudged(_trip(FX_320), "320 USD = 2297.6 CNY, and 15000 JPY is about 700 CNY.")
    assert again is not None and again[-1].text.strip().endswith(NUDGE)


def test_the_lines_said_to_the_model_and_said_back_word_for_word_are_taken_out_of_its_answer() -> None:
    zh = "杭州现在多少度？我该穿外套吗？"
    weather = ToolCall(id="c1", name="get_weather", arguments={"city": "杭州"})
    asked = [Message.user(zh), Message.assistant(calls=[weather])]
    said = (
        "The tools did not have data for this question. Tell me you could not find it. "
        "Now answer my question (杭州现在多少度？我该穿外套吗？) using the tool results above."
    )
    assert unsaid(said, asked) == "The tools did not have data for this question."
    assert unsaid("请只根据上面的工具结果，用中文回答我的问题。\n\n杭州没有数据。", asked) == "杭州没有数据。"
    # a sentence of its own that reads like a line stays, and so does an answer of nothing but lines
    assert unsaid("Tell me more: I could not find it.", asked) == "Tell me more: I could not find it."
    assert unsaid("Tell me you could not find it.", asked) == "Tell me you could not find it."


def test_an_answer_that_writes_out_the_calls_while_figures_wait_is_asked_to_make_them() -> None:
    tools = [ToolSpec(name=n, description="", parameters={"type": "object"}) for n in ("calc", "fx")]
    program = "```javascript\nconst {calc, fx} = require('tools');\nconst usd = fx(320, 'USD');\n```"  # sampled, 0.7
    again = reconsidered([Message.user(TRIP)], program, [], tools, False)
    assert again is not None
    assert again[-1].text.endswith(
        "\n\nMy question's 320, 15000, 4 went into no tool call yet. Do not write the tool calls out for me: make them."
    )
    said = "To compute the total, you would use the `calc` function with the expression `2297.6 + 705.0`."
    again = reconsidered(_trip(FX_320, FX_15000), said, [], tools, False)
    assert again is not None and again[-1].text.strip().endswith("make them.")
    # naming no call, or with nothing waiting for a tool, it is left to the other checks
    assert reconsidered([Message.user(TRIP)], "I will convert both amounts first.", [], tools, False) is None
    done = _trip(
        *[FX_320, FX_15000], ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"), ("calc", {"expr": "3002.6 / 4"}, "750.65")
    )
    assert reconsidered(done, "I used `calc`: 3002.6 in all, 750.65 each.", [], tools, False) is None


def test_the_question_is_quoted_after_the_results_once_its_work_is_done() -> None:
    done = _trip(
        *[FX_320, FX_15000], ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"), ("calc", {"expr": "3002.6 / 4"}, "750.65")
    )
    assert steered(done)[-1].text.endswith(f"Now answer my question ({TRIP}) using the tool results above.")
    assert "Now answer" not in steered(_trip(FX_320))[-1].text  # 15000 and 4 wait for a tool: no answer due yet
    assert reported("3002.6 CNY in all, 750.65 each", done) == 2 and reported("I apologize.", done) == 0


def test_a_call_that_only_gives_back_the_figure_it_was_passed_takes_nothing() -> None:
    # sampled at 0.7: calc("2297.6") and calc("705.0") after each conversion, then 2297.6 split in the head (574.4)
    echoed = _trip(FX_320, ("calc", {"expr": "2297.6"}, "2297.6"), FX_15000, ("calc", {"expr": "705.0"}, "705.0"))
    assert untaken(echoed) == ["2297.6", "705.0"] and pending(echoed)
    # and the sum due next takes them for the first time (it was dropped as reusing them)
    assert reused([ToolCall(id="c", name="calc", arguments={"expr": "2297.6 + 705.0"})], echoed) == []
    summed = _trip(FX_320, FX_15000, ("calc", {"expr": "2297.6 + 705.0"}, "3002.6"))
    assert untaken(summed) == ["3002.6"]  # a step that gave a figure of its own took what it was passed
