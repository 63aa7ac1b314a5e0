"""Prompt rendering, the tool-call grammar and the lenient parser of the embedded model (no weights)."""

from __future__ import annotations

import json

import pytest

from toolslip.errors import ConfigError
from toolslip.messages import Image, Message, ProviderPart, Text, ToolCall, ToolResult, ToolSpec
from toolslip.providers.local_chat import (
    ChatTemplate,
    answer_messages,
    fresh_calls,
    parse_output,
    tool_grammar,
)

WEATHER = ToolSpec(
    name="get_weather",
    description="Weather in a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city"],
        "additionalProperties": False,
    },
)

# A small template in the Hugging Face style (trim_blocks eats a newline after a tag: they are explicit).
TEMPLATE = (
    "{% if tools %}TOOLS:{% for t in tools %}{{ t | tojson }}{% endfor %}{{ '\\n' }}{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
    "{% for c in m.tool_calls or [] %}[call {{ c.function.name }} {{ c.function.arguments | tojson }}]{% endfor %}"
    "{{ '\\n' }}{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)


def test_the_template_gets_tools_calls_and_results_in_the_openai_shape() -> None:
    call = ToolCall(id="c1", name="get_weather", arguments={"city": "北京"})
    messages = [
        Message.system("be brief"),
        Message.user("天气?"),
        Message.assistant(calls=[call]),
        Message(role="tool", parts=(ToolResult(call_id="c1", content="28", name="get_weather"), Text(text="thanks"))),
        Message.tool([ToolResult(call_id="c2", content="boom", is_error=True)]),
    ]
    prompt = ChatTemplate(TEMPLATE).render(messages, [WEATHER])
    assert prompt.splitlines() == [
        "TOOLS:"
        + json.dumps(
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Weather in a city.",
                    "parameters": dict(WEATHER.parameters),
                },
            },
            ensure_ascii=False,
        ),
        "<system>be brief",
        "<user>天气?",
        '<assistant>[call get_weather {"city": "北京"}]',
        '<tool>get_weather(city="北京") returned 28',  # a bare figure, with the call that returned it
        "<user>thanks",
        "<tool>ERROR: boom",
        "<assistant>",
    ]


def test_a_result_that_is_a_bare_figure_is_shown_with_its_call_and_one_that_says_what_it_is_is_not() -> None:
    split = ToolCall(id="c1", name="calc", arguments={"expr": "3002.6 / 4"})
    fx = ToolCall(id="c2", name="fx", arguments={"amount": 320, "currency": "USD"})
    messages = [
        Message.user("trip?"),
        Message.assistant(calls=[split, fx]),
        Message.tool(
            [ToolResult(call_id="c1", content="750.65"), ToolResult(call_id="c2", content="320 USD = 2297.6 CNY")]
        ),
    ]
    lines = ChatTemplate(TEMPLATE).render(messages, []).splitlines()
    assert lines[-3:] == ['<tool>calc(expr="3002.6 / 4") returned 750.65', "<tool>320 USD = 2297.6 CNY", "<assistant>"]


def test_parts_the_model_cannot_read_are_said_not_dropped() -> None:
    message = Message(
        role="user",
        parts=(
            Text(text="look: "),
            Image(media_type="image/png", data="AAAA"),
            ProviderPart(format="anthropic", data={}),
        ),
    )
    prompt = ChatTemplate(TEMPLATE).render([message], [])
    assert "look: [an image was attached here; this model cannot see images]" in prompt
    assert "TOOLS" not in prompt


def test_a_broken_template_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="chat template does not parse"):
        ChatTemplate("{% for %}")
    with pytest.raises(ConfigError, match="failed to render"):
        ChatTemplate("{{ raise_exception('no tools here') }}").render([Message.user("hi")], [])


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>',
        '{"name": "get_weather", "arguments": {"city": "北京"}}',
        'Sure.\n```json\n{"name": "get_weather", "arguments": {"city": "北京"}}\n```',
        '<tool_call>{"name": "get_weather", "arguments": "{\\"city\\": \\"北京\\"}"}',  # string args, no end tag
        '{"name": "get_weather", "parameters": {"city": "北京"}}',
    ],
)
def test_calls_are_found_in_every_shape_a_model_writes(text: str) -> None:
    _, calls = parse_output(text, [WEATHER])
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "北京"})]


def test_several_tagged_calls_keep_their_order_and_the_text_around_them() -> None:
    text = (
        'Checking both.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "上海"}}\n</tool_call>'
    )
    answer, calls = parse_output(text, [WEATHER])
    assert answer == "Checking both."
    assert [c.arguments for c in calls] == [{"city": "北京"}, {"city": "上海"}]
    assert len({c.id for c in calls}) == 2


def test_a_malformed_tagged_call_reaches_the_loop_with_its_raw_text() -> None:
    _, calls = parse_output('<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>', [WEATHER])
    assert calls[0].name == "get_weather" and calls[0].arguments is None
    assert calls[0].raw_arguments == '{"name": "get_weather", "arguments": {"city":'


# How the 0.5B model wrote its slips as text (issue 26): after a repeated call, in front of a code fence,
# cut short by max_tokens, as a JSON list, inside a sentence.
@pytest.mark.parametrize(
    "text",
    [
        '>{"name": "get_weather", "arguments": {"city": "北京"}}',
        '> {"name": "get_weather", "arguments": {"city": "北京"}}\n',
        '>>{"name": "get_weather", "arguments": {"city": "北京"}}',
        '```\n{"name": "get_weather", "arguments": {"city": "北京"}}\n```',
        '[{"name": "get_weather", "arguments": {"city": "北京"}}]',
        'I will call {"name": "get_weather", "arguments": {"city": "北京"}} now.',
        '{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "北京"}}}',
        '</tool_call>\n{"name": "get_weather", "arguments": {"city": "北京"}}',
    ],
)
def test_every_spelling_of_a_slip_is_a_call(text: str) -> None:
    answer, calls = parse_output(text, [WEATHER])
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "北京"})]
    assert "name" not in answer and "{" not in answer


@pytest.mark.parametrize("debris", ["(", "(\n", " ( ", "):", "?", "；"])
def test_punctuation_beside_a_call_is_call_syntax_not_text(debris: str) -> None:
    # the 0.5B model wrote "(" before a call; kept as the turn's text, the CLI printed a lone "(" line
    answer, calls = parse_output(
        debris + '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>', [WEATHER]
    )
    assert answer == "" and [c.name for c in calls] == ["get_weather"]


@pytest.mark.parametrize("words", ["I will look it up.", "查一下。", "(1)"])
def test_words_beside_a_call_stay_its_text(words: str) -> None:
    answer, _ = parse_output(
        words + '<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}</tool_call>', [WEATHER]
    )
    assert answer == words


@pytest.mark.parametrize(
    ("text", "name", "arguments"),
    [
        ('>{"name": "get_weather", "arguments": {"city": "Bei', "get_weather", None),  # cut at max_tokens
        ('{"name": "get_weather", "arguments": "Beijing"}', "get_weather", None),  # not an object
        ('{"name": "get_weather", "arguments": {"town": "北京"}}', "get_weather", {"town": "北京"}),  # wrong keys
        ('{"name": "send_mail", "arguments": {}}', "send_mail", {}),  # not an offered tool
    ],
)
def test_a_malformed_slip_is_a_malformed_call_never_the_answer(text: str, name: str, arguments: object) -> None:
    # the loop answers each with an error result the model can act on (bad JSON, schema, unknown tool)
    answer, calls = parse_output(text, [WEATHER])
    assert answer == "" and [(c.name, c.arguments) for c in calls] == [(name, arguments)]


@pytest.mark.parametrize(
    "text",
    [
        '{"temp": 28}',  # JSON, but not shaped like a call
        'The tool said {"city": "北京", "temp": 28}.',
        'Mail tools look like {"name": "send_mail", "arguments": {}}.',  # names no offered tool, mid-sentence
        "It is 28 degrees in Beijing.",
    ],
)
def test_text_that_is_not_a_call_stays_the_answer(text: str) -> None:
    answer, calls = parse_output(text, [WEATHER])
    assert calls == [] and answer == text


def test_the_grammar_names_each_tool_and_offers_text_only_when_allowed() -> None:
    both = tool_grammar([WEATHER], allow_text=True, max_calls=None)
    calls_only = tool_grammar([WEATHER], allow_text=False, max_calls=1)
    answer_only = tool_grammar([], allow_text=True, max_calls=None)
    assert '"\\"get_weather\\""' in both and "| text" in both
    assert "text" not in calls_only and '("\\n"' not in calls_only
    assert answer_only.startswith("root ::= text\n")


def test_a_call_may_be_written_tagged_bare_or_fenced_as_the_model_writes_it_unprompted() -> None:
    # Unconstrained, the 0.5B model opened a call with `{"` or a ```json fence (0.8 to 0.98 of the first
    # token's weight) and almost never with <tool_call>; the tag-only grammar turned those into answers.
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    several = tool_grammar([WEATHER], allow_text=True, max_calls=None, any_spelling=True)
    root = next(line for line in several.splitlines() if line.startswith("root ::="))
    assert root.count("<tool_call>") == 2 and '"```json\\n" call ("\\n" call)*' in root and root.endswith("| text")
    one = tool_grammar([WEATHER], allow_text=False, max_calls=1, any_spelling=True)
    root = next(line for line in one.splitlines() if line.startswith("root ::="))
    assert '("\\n" call)' not in root and "text" not in root and '"```json\\n" call "\\n```"' in root
    LlamaGrammar.from_string(several, verbose=False)
    LlamaGrammar.from_string(one, verbose=False)
    # a typed answer's grammar keeps to the tag (see calls_rule)
    assert "```json" not in tool_grammar([WEATHER], allow_text=True, max_calls=None)


def test_an_answer_may_not_begin_like_a_call_where_calls_are_offered() -> None:
    grammar = tool_grammar([WEATHER], allow_text=True, max_calls=1)
    rule = next(line for line in grammar.splitlines() if line.startswith("text ::="))
    first = rule.split("]", 1)[0]
    for mark in ("<", "{", ">", "\\[", "`"):
        assert mark in first, f"an answer may still begin with {mark}"


def test_a_call_answered_already_is_not_fresh() -> None:
    asked = ToolCall(id="c1", name="get_weather", arguments={"city": "北京", "unit": "celsius"})
    failed = ToolCall(id="c2", name="get_weather", arguments={"city": "上海"})
    history = [
        Message.user("天气?"),
        Message.assistant(calls=[asked, failed]),
        Message.tool([ToolResult(call_id="c1", content="28"), ToolResult(call_id="c2", content="boom", is_error=True)]),
    ]
    again = ToolCall(id="c3", name="get_weather", arguments={"unit": "celsius", "city": "北京"})  # keys reordered
    retry = ToolCall(id="c4", name="get_weather", arguments={"city": "上海"})
    other = ToolCall(id="c5", name="get_weather", arguments={"city": "广州"})
    assert fresh_calls([again, retry, other], history) == [retry, other]
    prompt = answer_messages(history)
    # the question is quoted: with a caller's system prompt the model otherwise repeated it as its answer
    assert prompt[-1].text.endswith("Now answer my question (天气?) using the tool results above.")
    assert prompt[-1].tool_results == history[-1].tool_results
    assert history[-1].text == ""  # the conversation itself is unchanged
