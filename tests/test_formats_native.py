"""Gemini, Bedrock Converse and Ollama wire formats: the rules each states, on bodies written from the
providers' documentation (the recorded traffic is checked in test_real_traffic_native)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolslip import Tool
from toolslip.checker import check
from toolslip.cli.lint import load_declarations
from toolslip.conversion import convert
from toolslip.errors import CannotExpress, FormatError
from toolslip.formats import bedrock, gemini, ollama
from toolslip.formats.gemini_schema import from_gemini, to_gemini
from toolslip.messages import Message, ToolCall, ToolResult

WEATHER = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
}


def _gemini_history() -> list[dict[str, object]]:
    return [
        {"role": "user", "parts": [{"text": "Weather in Paris and Rome?"}]},
        {
            "role": "model",
            "parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": "c2ln"},
                {"functionCall": {"name": "get_time", "args": {}}},
                {"functionCall": {"name": "get_weather", "args": {"city": "Rome"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "get_time", "response": {"output": "noon"}}},
                {"functionResponse": {"name": "get_weather", "response": {"output": "sunny"}}},
                {"functionResponse": {"name": "get_weather", "response": {"error": "no station"}}},
            ],
        },
    ]


def test_gemini_calls_without_ids_get_ids_and_results_pair_by_name_in_order() -> None:
    messages = gemini.messages_from_wire(_gemini_history())
    calls = messages[1].tool_calls
    assert len({c.id for c in calls}) == 3
    paris, time, rome = calls
    results = messages[2].tool_results
    assert messages[2].role == "tool"
    assert [(r.call_id, r.text, r.is_error) for r in results] == [
        (time.id, "noon", False),
        (paris.id, "sunny", False),
        (rome.id, "no station", True),
    ]
    assert gemini.messages_to_wire(messages) == _gemini_history()  # made-up ids left out, signature kept


def test_a_gemini_result_no_call_is_left_for_is_refused_by_name() -> None:
    history = _gemini_history()
    history[2]["parts"].append({"functionResponse": {"name": "get_weather", "response": {"output": "?"}}})  # type: ignore[attr-defined]
    with pytest.raises(FormatError, match="named 'get_weather'") as caught:
        gemini.messages_from_wire(history)
    assert caught.value.path == "contents[2].parts[3]"
    parts = history[2]["parts"]
    parts[0], parts[1] = parts[1], parts[0]  # type: ignore[index]  # in call order: only the extra result is wrong
    report = check({"contents": history}, "gemini")
    assert [p.code for p in report.problems] == ["orphan_result"]


def test_gemini_check_reports_a_call_left_without_result() -> None:
    history = _gemini_history()
    history[2]["parts"] = history[2]["parts"][1:]  # type: ignore[index]
    report = check({"contents": history}, "gemini")
    assert [(p.code, p.path) for p in report.problems] == [("missing_result", "contents[1].parts[1].functionCall")]


def test_function_response_wrap_rule() -> None:
    def answer(response: object) -> ToolResult:
        parts = [{"functionResponse": {"name": "f", "id": "1", "response": response}}]
        return gemini.messages_from_wire([{"role": "user", "parts": parts}])[0].tool_results[0]

    assert (answer({"output": "4"}).text, answer({"output": "4"}).is_error) == ("4", False)
    assert answer({"error": "boom"}).is_error
    assert answer({"temperature": 21, "unit": "C"}).text == '{"temperature":21,"unit":"C"}'
    # Results from elsewhere: plain text goes under "output", an error under "error".
    call = ToolCall(id="c1", name="f", arguments={})
    written = gemini.messages_to_wire(
        [
            Message.assistant(calls=[call]),
            Message.tool([ToolResult(call_id="c1", content="oops", is_error=True)]),
        ]
    )
    assert written[1]["parts"] == [{"functionResponse": {"name": "f", "id": "c1", "response": {"error": "oops"}}}]


def test_gemini_finish_reasons_and_usage() -> None:
    body = {
        "candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "MALFORMED_FUNCTION_CALL"}],
        "usageMetadata": {
            "promptTokenCount": 10,
            "candidatesTokenCount": 3,
            "thoughtsTokenCount": 5,
            "cachedContentTokenCount": 4,
            "totalTokenCount": 18,
        },
        "modelVersion": "gemini-2.5-flash",
        "responseId": "r1",
    }
    response = gemini.response_from_wire(body)
    assert (response.stop_reason, response.raw_stop_reason) == ("other", "MALFORMED_FUNCTION_CALL")
    usage = response.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens, usage.reasoning_tokens) == (6, 4, 8, 5)
    assert gemini.response_to_wire(response) == body
    called = {
        **body,
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
                "finishReason": "STOP",
            }
        ],
    }
    read = gemini.response_from_wire(called)
    assert read.stop_reason == "tool_use" and read.message.tool_calls[0].id == "call_r1_0"


def test_gemini_tool_config_is_tool_choice() -> None:
    def choice(config: dict[str, object]) -> object:
        return gemini.request_from_wire(
            {"contents": [], "toolConfig": {"functionCallingConfig": config}}
        ).settings.tool_choice

    assert (
        choice({"mode": "AUTO"}) == "auto"
        and choice({"mode": "NONE"}) == "none"
        and choice({"mode": "ANY"}) == "required"
    )
    assert getattr(choice({"mode": "ANY", "allowedFunctionNames": ["f"]}), "name", None) == "f"
    validated = gemini.request_from_wire(
        {"contents": [], "toolConfig": {"functionCallingConfig": {"mode": "VALIDATED"}}}
    )
    assert validated.settings.tool_choice is None and "toolConfig" in validated.settings.extra


def test_schema_translation_says_what_it_changed() -> None:
    schema = {
        "type": "object",
        "properties": {
            "kind": {"const": "a"},
            "tags": {"type": "array", "items": [{"type": "string"}]},
            "owner": {"$ref": "#/$defs/Person"},
            "note": {"type": ["string", "null"]},
        },
        "additionalProperties": False,
        "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    translated, changes = to_gemini(schema)
    said = " | ".join(f"{where}: {what}" for where, what in changes)
    for expected in ("const 'a'", "tuple items", "$ref #/$defs/Person written out", "'additionalProperties' left out"):
        assert expected in said, said
    assert translated["properties"]["owner"] == {"type": "OBJECT", "properties": {"name": {"type": "STRING"}}}
    assert translated["properties"]["note"] == {"type": "STRING", "nullable": True}
    assert from_gemini({"type": "STRING", "nullable": True}) == {"type": ["string", "null"]}
    assert from_gemini({"type": 6, "properties": {"n": {"type": 3}}}) == {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
    }


def test_gemini_declarations_fit_the_subset_or_go_as_json_schema() -> None:
    tools = convert(
        [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "parameters": {
                        "type": "object",
                        "properties": {"x": {"type": "integer"}},
                        "additionalProperties": False,
                    },
                },
            }
        ],
        from_="openai-chat",
        to="gemini",
        what="tools",
    )
    assert tools.data == [
        {
            "functionDeclarations": [
                {
                    "name": "f",
                    "parametersJsonSchema": {
                        "type": "object",
                        "properties": {"x": {"type": "integer"}},
                        "additionalProperties": False,
                    },
                }
            ]
        }
    ]
    assert "parametersJsonSchema" in str(tools.lost[0])
    plain = gemini.tools_from_wire([{"functionDeclarations": [WEATHER]}])
    assert plain[0].parameters == {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert gemini.tools_to_wire(plain) == [{"functionDeclarations": [WEATHER]}]


def test_converse_results_errors_json_and_tool_choice() -> None:
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "Weather?"}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "w", "input": {"c": "P"}}}]},
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "t1", "content": [{"json": {"t": 21}}], "status": "error"}}],
            },
        ],
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        "toolConfig": {
            "tools": [{"toolSpec": {"name": "w", "inputSchema": {"json": {"type": "object"}}}}],
            "toolChoice": {"any": {}},
        },
        "inferenceConfig": {"maxTokens": 100, "topP": 0.5},
    }
    request = bedrock.request_from_wire(body)
    result = request.messages[3].tool_results[0]
    assert (result.text, result.is_error) == ('{"t":21}', True)
    assert request.settings.tool_choice == "required" and request.settings.max_tokens == 100
    assert bedrock.request_to_wire(request) == body
    with pytest.raises(CannotExpress, match="tool_choice 'none'"):
        convert({"model": "m", "messages": [], "tool_choice": "none"}, from_="openai-chat", to="bedrock")
    chat = convert(body, from_="bedrock", to="openai-chat", on_loss="drop").data
    assert chat["top_p"] == 0.5
    assert "".join(part["text"] for part in chat["messages"][3]["content"]) == 'Error: {"t":21}'


def test_converse_check_finds_a_result_without_its_tool_use() -> None:
    body = {
        "messages": [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "t9", "content": [{"text": "x"}]}}]},
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "w", "inputSchema": {"json": {}}}}]},
    }
    assert [p.code for p in check(body).problems] == ["orphan_result"]
    del body["toolConfig"]
    assert "tools_dropped" in [p.code for p in check(body, "bedrock").problems]


def test_converse_reasoning_keeps_its_signature_for_converse_only() -> None:
    body = {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "think", "signature": "sig"}}},
                    {"text": "4"},
                ],
            }
        },
        "stopReason": "guardrail_intervened",
        "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
    }
    response = bedrock.response_from_wire(body)
    assert response.stop_reason == "content_filter" and bedrock.response_to_wire(response) == body
    with pytest.raises(CannotExpress, match="signature"):
        convert(body, from_="bedrock", to="gemini")


def test_ollama_results_pair_by_tool_name_and_ids_stay_out() -> None:
    messages = [
        {"role": "user", "content": "Weather and time?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                {"function": {"name": "get_time", "arguments": {}}},
            ],
        },
        {"role": "tool", "content": "noon", "tool_name": "get_time"},
        {"role": "tool", "content": "sunny", "tool_name": "get_weather"},
    ]
    neutral = ollama.messages_from_wire(messages)
    weather, time = neutral[1].tool_calls
    assert [r.call_id for r in neutral[2].tool_results] == [time.id, weather.id]
    assert ollama.messages_to_wire(neutral) == messages
    chat = convert(messages, from_="ollama", to="openai-chat").data
    assert [m.get("tool_call_id") for m in chat[2:]] == [time.id, weather.id]
    with pytest.raises(FormatError, match="named 'get_date'"):
        ollama.messages_from_wire([*messages, {"role": "tool", "content": "x", "tool_name": "get_date"}])


def test_ollama_response_and_what_it_cannot_say() -> None:
    body = {
        "model": "qwen3",
        "created_at": "2026-01-01T00:00:00Z",
        "done": True,
        "done_reason": "stop",
        "message": {
            "role": "assistant",
            "content": "",
            "thinking": "hmm",
            "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}],
        },
        "prompt_eval_count": 9,
        "eval_count": 4,
    }
    response = ollama.response_from_wire(body)
    assert response.stop_reason == "tool_use" and response.message.tool_calls[0].arguments == {"a": 1}
    assert ollama.response_to_wire(response) == body
    with pytest.raises(CannotExpress, match="tool_choice 'required'"):
        convert({"model": "m", "messages": [], "tool_choice": "required"}, from_="openai-chat", to="ollama")
    error = [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "c", "name": "f", "input": {}}}]},
        {
            "role": "user",
            "content": [{"toolResult": {"toolUseId": "c", "content": [{"text": "x"}], "status": "error"}}],
        },
    ]
    marked = convert(error, from_="bedrock", to="ollama")
    assert marked.data[1] == {"role": "tool", "content": "Error: x", "tool_name": "f", "tool_call_id": "c"}
    assert [loss.what for loss in marked.lost] == ["is_error flag"]


def test_gemini_and_converse_declarations_become_tools_and_lint_reads_them(tmp_path: Path) -> None:
    from_gemini_entry = Tool.from_declaration({"functionDeclarations": [WEATHER]}, lambda city: city)
    from_gemini_bare = Tool.from_declaration(WEATHER, lambda city: city)
    converse = {
        "toolSpec": {
            "name": "get_weather",
            "description": "Weather in a city.",
            "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}}}},
        }
    }
    from_converse = Tool.from_declaration(converse, lambda city: city)
    expected = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert from_gemini_entry.spec.parameters == from_gemini_bare.spec.parameters == expected
    assert from_converse.spec.parameters["properties"] == expected["properties"]
    other = {**WEATHER, "name": "get_time", "parametersJsonSchema": {"type": "object"}}
    del other["parameters"]
    path = tmp_path / "tools.json"
    path.write_text(json.dumps({"contents": [], "tools": [{"functionDeclarations": [WEATHER, other]}]}))
    assert [spec.name for spec in load_declarations(str(path))] == ["get_weather", "get_time"]
    path.write_text(json.dumps({"messages": [], "toolConfig": {"tools": [converse]}}))
    assert [spec.name for spec in load_declarations(str(path))] == ["get_weather"]
