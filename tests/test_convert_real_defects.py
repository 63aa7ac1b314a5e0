"""One test per class of defect real API traffic showed in ``toolslip.convert`` (issue 15).

The bodies are small, written from the providers' API references; ``test_real_traffic.py`` runs the
same checks over recorded traffic nobody here wrote.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolslip import Tool
from toolslip.checker import check
from toolslip.conversion import convert
from toolslip.errors import CannotExpress, FormatError, ToolDefinitionError
from toolslip.formats import read_declaration

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def losses(result: Any) -> list[str]:
    return [str(loss) for loss in result.lost]


# --- crashes ------------------------------------------------------------------------------------


def test_a_null_description_is_read_and_written_back() -> None:
    body = {
        "model": "gpt-5",
        "input": "Weather in Paris?",
        "tools": [{"type": "function", "name": "get_weather", "description": None, "parameters": WEATHER}],
    }
    assert same(convert(body, from_="openai-responses", to="openai-responses").data, body)
    chat = convert(body, from_="openai-responses", to="openai-chat").data
    # strict is the Responses API's default, and Chat's is not: it is spelled out.
    assert chat["tools"] == [
        {"type": "function", "function": {"name": "get_weather", "parameters": WEATHER, "strict": True}}
    ]


def test_a_system_message_mid_conversation_stays_where_it_was() -> None:
    anthropic = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "system", "content": "From now on answer in French."},
            {"role": "user", "content": "How are you?"},
        ],
    }
    assert same(convert(anthropic, from_="anthropic", to="anthropic").data, anthropic)
    chat = convert(anthropic, from_="anthropic", to="openai-chat").data
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "system", "user"]
    back = convert(chat, from_="openai-chat", to="anthropic").data
    assert "system" not in back  # not moved to the top: it was not the first message
    assert [m["role"] for m in back["messages"]] == ["user", "assistant", "system", "user"]


def test_a_call_without_arguments_is_a_call_with_no_arguments() -> None:
    response = {
        "id": "x",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "now"}}],
                },
            }
        ],
    }
    assert same(convert(response, from_="openai-chat", to="openai-chat").data, response)
    anthropic = convert(response, from_="openai-chat", to="anthropic").data
    assert anthropic["content"] == [{"type": "tool_use", "id": "c1", "name": "now", "input": {}}]
    del response["choices"][0]["message"]["tool_calls"][0]["id"]
    with pytest.raises(FormatError, match=r"tool_calls\[0\]\.id: missing"):
        convert(response, from_="openai-chat", to="anthropic")


# --- silent losses ------------------------------------------------------------------------------

THINKING = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "thinking", "thinking": "Paris is in France.", "signature": "EqQBCgIYAhIM"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "text", "text": "It rains in Paris."},
    ],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5},
}


def test_reasoning_is_translated_and_its_signature_reported_where_it_cannot_go() -> None:
    with pytest.raises(CannotExpress, match=r"message\.parts\[0\]\.signature: the reasoning's signature"):
        convert(THINKING, from_="anthropic", to="openai-chat")
    out = convert(THINKING, from_="anthropic", to="openai-chat", on_loss="drop")
    assert out.data["choices"][0]["message"]["reasoning_content"] == "Paris is in France."
    assert losses(out) == [
        "message.parts[0].signature: the reasoning's signature (only its text is carried) (dropped)",
        "message.parts[1]: encrypted reasoning from anthropic (dropped)",
    ]
    responses = convert(THINKING, from_="anthropic", to="openai-responses", on_loss="drop").data
    # Thinking is the reasoning itself, not a summary of it (issue 30).
    assert responses["output"][0]["content"] == [{"type": "reasoning_text", "text": "Paris is in France."}]
    # Back in its own format the signature and the redacted data come back byte for byte.
    assert same(convert(THINKING, from_="anthropic", to="anthropic").data, THINKING)


def test_reasoning_from_elsewhere_is_refused_by_anthropic_which_checks_signatures() -> None:
    chat = {
        "model": "deepseek-reasoner",
        "messages": [
            {"role": "user", "content": "2+2?"},
            {"role": "assistant", "content": "4", "reasoning_content": "Two plus two is four."},
            {"role": "user", "content": "And 3+3?"},
        ],
    }
    with pytest.raises(CannotExpress, match=r"messages\[1\]\.parts\[0\]: reasoning from openai-chat"):
        convert(chat, from_="openai-chat", to="anthropic")
    responses = convert(chat, from_="openai-chat", to="openai-responses").data
    assert responses["input"][1] == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Two plus two is four."}],
    }
    encrypted = {
        "model": "o4-mini",
        "input": [
            {"role": "user", "content": "2+2?"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAAB"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "4"}]},
        ],
    }
    out = convert(encrypted, from_="openai-responses", to="openai-chat", on_loss="drop")
    assert losses(out)[0] == "messages[1].parts[0]: encrypted reasoning from openai-responses (dropped)"


def test_annotations_audio_and_provider_extras_are_reported() -> None:
    response = {
        "id": "x",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": "Groq's answer, searched.",
                    "annotations": [{"type": "url_citation", "url_citation": {"url": "https://example.com"}}],
                    "executed_tools": [{"type": "search", "arguments": "{}"}],
                },
            }
        ],
    }
    out = convert(response, from_="openai-chat", to="anthropic", on_loss="drop")
    assert losses(out) == [
        "message.annotations: openai-chat field 'annotations' (dropped)",
        "message.executed_tools: openai-chat field 'executed_tools' (dropped)",
    ]
    response["choices"][0]["message"] |= {"annotations": [], "audio": None, "refusal": None}
    del response["choices"][0]["message"]["executed_tools"]
    assert convert(response, from_="openai-chat", to="anthropic").lost == ()  # empty fields say nothing


def test_a_call_namespace_is_reported_and_defer_loading_translated() -> None:
    call = {"type": "function_call", "call_id": "c1", "name": "get", "arguments": "{}", "namespace": "crm"}
    with pytest.raises(CannotExpress, match=r"messages\[0\]\.parts\[0\]\.namespace"):
        convert([call], from_="openai-responses", to="anthropic", what="messages")
    tools = [{"name": "get_weather", "input_schema": WEATHER, "defer_loading": True}]
    responses = convert(tools, from_="anthropic", to="openai-responses").data
    assert responses[0]["defer_loading"] is True
    with pytest.raises(CannotExpress, match=r"tools\[0\]\.defer_loading: tool field 'defer_loading'"):
        convert(tools, from_="anthropic", to="openai-chat")


def test_identity_keeps_the_order_of_the_tools() -> None:
    body = {
        "model": "gpt-5",
        "input": "Find a tool for the weather.",
        "tools": [
            {"type": "tool_search", "execution": "client", "parameters": {"type": "object"}},
            {"type": "function", "name": "get_weather", "parameters": WEATHER, "strict": True},
            {"type": "web_search"},
        ],
    }
    assert convert(body, from_="openai-responses", to="openai-responses").data["tools"] == body["tools"]
    assert convert(body["tools"], from_="openai-responses", to="openai-responses").data == body["tools"]


def test_the_max_tokens_anthropic_requires_is_reported() -> None:
    chat = {"model": "m", "messages": [{"role": "user", "content": "Hi"}]}
    out = convert(chat, from_="openai-chat", to="anthropic")
    assert out.data["max_tokens"] == 1024
    assert losses(out) == ["settings.max_tokens: no max_tokens, which Anthropic requires (set to 1024)"]


# --- false reports ------------------------------------------------------------------------------


def test_the_knobs_every_format_has_are_translated() -> None:
    chat = {
        "model": "m",
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop": ["END"],
        "max_completion_tokens": 300,
        "tool_choice": "none",
        "user": "u-42",
    }
    anthropic = convert(chat, from_="openai-chat", to="anthropic")
    assert anthropic.lost == ()
    assert {k: v for k, v in anthropic.data.items() if k not in ("model", "messages")} == {
        "stream": True,
        "temperature": 0.2,
        "top_p": 0.9,
        "stop_sequences": ["END"],
        "max_tokens": 300,
        "tool_choice": {"type": "none"},
        "metadata": {"user_id": "u-42"},
    }
    back = convert(anthropic.data, from_="anthropic", to="openai-chat").data
    assert back["user"] == "u-42" and back["max_tokens"] == 300 and back["stream"] is True
    responses = convert(chat, from_="openai-chat", to="openai-responses", on_loss="drop")
    assert responses.data["max_output_tokens"] == 300 and responses.data["top_p"] == 0.9
    assert losses(responses) == ["settings.stop: stop sequences (dropped)"]  # the Responses API has none


def test_mistral_tools_without_type_and_tools_with_cache_control_are_function_tools() -> None:
    body = {
        "model": "mistral-large-latest",
        "messages": [{"role": "user", "content": "Weather?"}],
        "tools": [
            {"function": {"name": "get_weather", "description": "Weather.", "parameters": WEATHER}},
            {
                "type": "function",
                "function": {"name": "get_time", "parameters": {"type": "object"}},
                "cache_control": {"type": "ephemeral"},
            },
        ],
    }
    assert same(convert(body, from_="openai-chat", to="openai-chat").data, body)
    anthropic = convert(body, from_="openai-chat", to="anthropic")
    assert [t["name"] for t in anthropic.data["tools"]] == ["get_weather", "get_time"]
    assert [loss.path for loss in anthropic.lost] == ["settings.max_tokens"]
    assert check(body, "openai-chat").problems == ()


def test_documents_and_files_travel_where_the_target_has_files() -> None:
    pdf = {"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQK"}
    anthropic = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "tools": [{"name": "fetch", "input_schema": {"type": "object"}}],
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "document", "source": pdf, "title": "a.pdf"},
                    {"type": "text", "text": "Sum it up."},
                ],
            },
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "fetch", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "document", "source": pdf}, {"type": "tool_reference", "tool_name": "x"}],
                    }
                ],
            },
        ],
    }
    assert same(convert(anthropic, from_="anthropic", to="anthropic").data, anthropic)
    chat = convert(anthropic, from_="anthropic", to="openai-chat", on_loss="drop")
    assert chat.data["messages"][0]["content"][0] == {
        "type": "file",
        "file": {"file_data": "data:application/pdf;base64,JVBERi0xLjQK", "filename": "a.pdf"},
    }
    assert losses(chat) == [
        "messages[2].parts[0].content[0]: a file in a tool result (Chat tool messages hold text) (dropped)",
        "messages[2].parts[0].content[1]: anthropic block 'tool_reference' (dropped)",
    ]
    responses = convert(anthropic, from_="anthropic", to="openai-responses", on_loss="drop")
    output = responses.data["input"][2]["output"]
    assert output == [{"type": "input_file", "file_data": "data:application/pdf;base64,JVBERi0xLjQK"}]
    assert losses(responses) == ["messages[2].parts[0].content[1]: anthropic block 'tool_reference' (dropped)"]
    file_id = {"type": "document", "source": {"type": "file", "file_id": "file_011C"}}
    anthropic["messages"][0]["content"][0] = file_id
    with pytest.raises(CannotExpress, match=r"messages\[0\]\.parts\[0\]: a file id of anthropic"):
        convert(anthropic, from_="anthropic", to="openai-responses")


# --- other defects ------------------------------------------------------------------------------


def test_a_history_without_a_model_converts() -> None:
    chat = {"messages": [{"role": "user", "content": "Hi"}]}
    for target in ("anthropic", "openai-responses", "openai-chat"):
        assert "model" not in convert(chat, from_="openai-chat", to=target).data


def test_check_raises_no_false_alarm_on_provider_tools_and_client_tool_search() -> None:
    chat = {
        "model": "openai/gpt-5",
        "messages": [{"role": "user", "content": "News?"}],
        "tools": [{"type": "openrouter:web_search", "parameters": {"max_results": 3}}],
    }
    assert check(chat, "openai-chat").problems == ()
    responses = {
        "model": "gpt-5",
        "tools": [
            {"type": "tool_search", "execution": "client", "parameters": {"type": "object"}},
            {"type": "function", "name": "get_weather", "parameters": WEATHER, "defer_loading": True},
        ],
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "tool_search_call", "call_id": "ts1", "execution": "client", "arguments": {"goal": "weather"}},
            {"type": "function_call_output", "call_id": "ts1", "output": "get_weather"},
        ],
    }
    assert check(responses, "openai-responses").problems == ()


def test_a_tool_is_made_from_any_providers_declaration() -> None:
    def get_weather(city: str) -> str:
        return city

    spellings = [
        {"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": WEATHER}},
        {"type": "function", "name": "get_weather", "description": "Weather.", "parameters": WEATHER, "strict": False},
        {"name": "get_weather", "description": "Weather.", "input_schema": WEATHER},
        {"name": "get_weather", "description": "Weather.", "parameters": WEATHER},
    ]
    for declaration in spellings:
        tool = Tool.from_declaration(declaration, get_weather, effects="read_only", max_output_chars=50, timeout=2)
        assert (tool.name, tool.description, tool.parameters) == ("get_weather", "Weather.", WEATHER)
        assert tool.read_only and tool.max_output_chars == 50 and tool.timeout == 2
        assert tool.validate({"city": "Paris"}) == {"city": "Paris"}
    strict = Tool.from_declaration({"type": "function", "name": "f", "parameters": {"type": "object"}})
    assert strict.strict is True  # strict is the Responses API's default
    keyed = Tool.from_declaration(spellings[2], get_weather, idempotency_key=lambda a: a["city"], strict=False)
    assert keyed.idempotency_key is not None and keyed.strict is False
    assert read_declaration(spellings[2])[0] == "anthropic"
    with pytest.raises(ToolDefinitionError, match="'web_search_20250305' tool, which its provider runs"):
        Tool.from_declaration({"type": "web_search_20250305", "name": "web_search"})
    with pytest.raises(ToolDefinitionError, match="unknown effect 'sometimes'"):
        Tool.from_declaration(spellings[0], get_weather, effects="sometimes")
    carted = Tool.from_declaration(spellings[0], get_weather, effects="side_effect", dedup=False, isolate="none")
    assert (carted.deduplicated, carted.isolate) == (False, "none")
    assert Tool.from_declaration(spellings[0], get_weather, effects="side_effect").deduplicated
    listing = Tool.from_declaration(spellings[0], get_weather, untrusted_fields=["topic"])
    assert listing.untrusted_fields == frozenset({"topic"})
