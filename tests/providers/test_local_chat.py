"""Prompt rendering, the tool-call grammar and the lenient parser of the embedded model (no weights)."""

from __future__ import annotations

import json

import pytest

from toolslip.errors import ConfigError
from toolslip.messages import Image, Message, ProviderPart, Text, ToolCall, ToolResult, ToolSpec
from toolslip.providers.local_chat import ChatTemplate, parse_output, tool_grammar

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
        "<tool>28",
        "<user>thanks",
        "<tool>ERROR: boom",
        "<assistant>",
    ]


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


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "get_weather", "arguments": {"town": "北京"}}',  # does not fit the schema
        '{"name": "send_mail", "arguments": {}}',  # not an offered tool
        '{"temp": 28}',  # JSON, but not a call
        "It is 28 degrees in Beijing.",
    ],
)
def test_untagged_json_that_is_not_a_valid_call_stays_an_answer(text: str) -> None:
    answer, calls = parse_output(text, [WEATHER])
    assert calls == [] and answer == text


def test_the_grammar_names_each_tool_and_offers_text_only_when_allowed() -> None:
    both = tool_grammar([WEATHER], allow_text=True, max_calls=None)
    calls_only = tool_grammar([WEATHER], allow_text=False, max_calls=1)
    answer_only = tool_grammar([], allow_text=True, max_calls=None)
    assert '"\\"get_weather\\""' in both and "| text" in both
    assert "text" not in calls_only and '("\\n"' not in calls_only
    assert answer_only.startswith("root ::= text\n")
