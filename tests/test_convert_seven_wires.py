"""One test per class of defect recorded Gemini, Converse and Ollama traffic showed in ``toolslip.convert``
across the seven formats (issue 36): silent losses, crashes, refusals of what the target can say, bodies
written invalid, and bodies not read as the service means them.

The bodies are small, written from the providers' API references; ``test_real_traffic_native.py`` runs the
corpus-wide checks over recorded traffic nobody here wrote.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolslip.conversion import convert
from toolslip.errors import CannotExpress

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg=="


def lost(result: Any) -> str:
    return " | ".join(map(str, result.lost))


def anthropic_history(results: list[dict[str, Any]]) -> dict[str, Any]:
    """An Anthropic request: a question, a weather call, and a user message holding ``results``."""
    return {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "tools": [{"name": "weather", "input_schema": WEATHER}],
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Paris"}}],
            },
            {"role": "user", "content": results},
        ],
    }


# --- silent losses ------------------------------------------------------------------------------------


def test_a_strict_tool_keeps_its_flag_where_the_target_has_one_and_is_refused_where_not() -> None:
    converse = {
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        "toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}, "strict": True}}]},
    }
    chat = convert(converse, from_="bedrock", to="openai-chat").data
    assert chat["tools"][0]["function"]["strict"] is True
    back = convert(chat, from_="openai-chat", to="bedrock", on_loss="drop").data
    assert back["toolConfig"] == converse["toolConfig"]
    for target in ("gemini", "ollama"):
        with pytest.raises(CannotExpress, match="strict mode"):
            convert(chat, from_="openai-chat", to=target)
        assert "tools[0].strict: strict mode" in lost(convert(converse, from_="bedrock", to=target, on_loss="drop"))


def test_an_image_after_a_tool_result_reaches_ollama() -> None:
    body = anthropic_history(
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Sunny."},
            {"type": "text", "text": "And here is the sky:"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        ]
    )
    out = convert(body, from_="anthropic", to="ollama", on_loss="drop").data
    assert out["messages"][-1] == {"role": "user", "content": "And here is the sky:", "images": [PNG]}


def test_an_image_before_its_text_going_to_ollama_is_reported() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                    {"type": "text", "text": "What is this?"},
                ],
            }
        ],
    }
    result = convert(body, from_="openai-chat", to="ollama", on_loss="drop")
    assert result.data["messages"] == [{"role": "user", "content": "What is this?", "images": [PNG]}]
    assert "messages[0].parts[0]: an image before text" in lost(result)
    text_first = {
        "model": "m",
        "messages": [{"role": "user", "content": list(reversed(body["messages"][0]["content"]))}],
    }
    assert "image before text" not in lost(convert(text_first, from_="openai-chat", to="ollama", on_loss="drop"))


def test_a_safety_stop_written_for_ollama_is_reported() -> None:
    gemini = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "SAFETY"}],
        "usageMetadata": {"promptTokenCount": 3, "totalTokenCount": 3},
    }
    result = convert(gemini, from_="gemini", to="ollama")
    assert result.data["done_reason"] == "stop"
    assert "stop_reason: the stop reason 'SAFETY'" in lost(result)


# --- written invalid ----------------------------------------------------------------------------------


def test_a_chat_tool_message_gets_no_image() -> None:
    body = anthropic_history(
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [
                    {"type": "text", "text": "The sky:"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                ],
            }
        ]
    )
    with pytest.raises(CannotExpress, match="an image in a tool result"):
        convert(body, from_="anthropic", to="openai-chat")
    tool = convert(body, from_="anthropic", to="openai-chat", on_loss="drop").data["messages"][-1]
    assert tool["role"] == "tool" and [p["type"] for p in tool["content"]] == ["text"]


def test_url_safe_base64_from_google_genai_is_written_standard_elsewhere_and_as_read_back_to_gemini() -> None:
    url_safe = PNG[:-2].replace("+", "-").replace("/", "_") + "-_"  # as Python's google-genai encodes bytes
    standard = PNG[:-2] + "+/"
    gemini = {
        "contents": [
            {
                "role": "user",
                "parts": [{"text": "What is this?"}, {"inlineData": {"mimeType": "image/png", "data": url_safe}}],
            }
        ]
    }
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    anthropic = convert(gemini, from_="gemini", to="anthropic", on_loss="drop").data
    assert anthropic["messages"][0]["content"][1]["source"]["data"] == standard
    assert convert(gemini, from_="gemini", to="bedrock").data["messages"][0]["content"][1]["image"]["source"] == {
        "bytes": standard
    }
    assert convert(gemini, from_="gemini", to="ollama", on_loss="drop").data["messages"][0]["images"] == [standard]
    chat = convert(gemini, from_="gemini", to="openai-chat").data
    assert chat["messages"][0]["content"][1]["image_url"]["url"] == f"data:image/png;base64,{standard}"


def test_a_result_of_two_text_blocks_is_reported_where_it_becomes_one_string() -> None:
    converse = {
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Paris?"}]},
            {
                "role": "assistant",
                "content": [{"toolUse": {"toolUseId": "t1", "name": "weather", "input": {"city": "Paris"}}}],
            },
            {
                "role": "user",
                "content": [{"toolResult": {"toolUseId": "t1", "content": [{"text": "Sunny,"}, {"text": " 24 C"}]}}],
            },
        ],
        "toolConfig": {"tools": [{"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}}}]},
    }
    for target in ("gemini", "ollama"):
        result = convert(converse, from_="bedrock", to=target, on_loss="drop")
        assert "messages[2].parts[0].content[1]: a result's text part joined with 1 more" in lost(result), target
    assert "joined" not in lost(convert(converse, from_="bedrock", to="anthropic", on_loss="drop"))


@pytest.mark.parametrize("mime", ["video/mp4", "text/plain"])
def test_a_gemini_file_uri_keeps_its_type_or_is_refused(mime: str) -> None:
    gemini = {
        "contents": [
            {
                "role": "user",
                "parts": [{"fileData": {"mimeType": mime, "fileUri": "https://example.com/f"}}, {"text": "Sum up."}],
            }
        ]
    }
    with pytest.raises(CannotExpress, match=f"a {mime} file by URL"):
        convert(gemini, from_="gemini", to="anthropic")
    responses = convert(gemini, from_="gemini", to="openai-responses")
    assert responses.data["input"][0]["content"][0] == {"type": "input_file", "file_url": "https://example.com/f"}
    assert f"the {mime} type of a file by URL" in lost(responses)
    pdf = {
        "contents": [
            {"role": "user", "parts": [{"fileData": {"mimeType": "application/pdf", "fileUri": "https://e.com/a.pdf"}}]}
        ]
    }
    assert (
        convert(pdf, from_="gemini", to="anthropic", on_loss="drop").data["messages"][0]["content"][0]["type"]
        == "document"
    )


# --- refused though the target can say it --------------------------------------------------------------


def test_snake_case_file_data_is_read_and_written_back_as_spelled() -> None:
    gemini = {
        "contents": [
            {
                "role": "user",
                "parts": [{"file_data": {"mime_type": "application/pdf", "file_uri": "https://e.com/a.pdf"}}],
            },
            {"role": "user", "parts": [{"inline_data": {"mime_type": "image/png", "data": PNG}}]},
        ]
    }
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    anthropic = convert(gemini, from_="gemini", to="anthropic", on_loss="drop").data
    assert anthropic["messages"][0]["content"][0] == {
        "type": "document",
        "source": {"type": "url", "url": "https://e.com/a.pdf"},
    }
    assert anthropic["messages"][1]["content"][0]["source"]["data"] == PNG


def gemini_result(response: dict[str, Any], **more: Any) -> dict[str, Any]:
    """A Gemini request: a question, a weather call, and its functionResponse with ``response`` and ``more``."""
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": response, **more}}]},
        ],
        "tools": [
            {
                "functionDeclarations": [
                    {"name": "weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}
                ]
            }
        ],
    }


def test_images_and_pdfs_in_a_gemini_function_response_travel_in_the_result() -> None:
    parts = [
        {"inlineData": {"mimeType": "image/png", "data": PNG}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "https://e.com/forecast.pdf"}},
    ]
    gemini = gemini_result({"output": "The sky and the forecast:"}, parts=parts)
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    anthropic = convert(gemini, from_="gemini", to="anthropic", on_loss="drop").data
    assert anthropic["messages"][-1]["content"][0]["content"] == [
        {"type": "text", "text": "The sky and the forecast:"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "document", "source": {"type": "url", "url": "https://e.com/forecast.pdf"}},
    ]
    back = convert(anthropic, from_="anthropic", to="gemini", on_loss="drop").data
    assert back["contents"][-1]["parts"][0]["functionResponse"]["parts"] == parts


# --- reading ---------------------------------------------------------------------------------------------


def test_googles_output_key_around_an_object_is_unwrapped() -> None:
    gemini = gemini_result({"output": {"temperature": 24, "sky": "clear"}})
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    chat = convert(gemini, from_="gemini", to="openai-chat").data
    assert json.loads(chat["messages"][-1]["content"]) == {"temperature": 24, "sky": "clear"}


# --- refused though the target can say it, or though nothing is lost ------------------------------------


def test_gemini_text_modality_is_chats_text_modality() -> None:
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"responseModalities": ["TEXT"]},
    }
    assert convert(gemini, from_="gemini", to="openai-chat").data["modalities"] == ["text"]
    for target in ("anthropic", "bedrock", "ollama", "openai-responses"):
        result = convert(gemini, from_="gemini", to=target)  # no refusal: text is what every format answers
        assert "responseModalities" in lost(result) and "default" in lost(result), target
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "modalities": ["text"]}
    assert convert(chat, from_="openai-chat", to="gemini").data["generationConfig"] == {"responseModalities": ["TEXT"]}
    with pytest.raises(CannotExpress, match="modalities"):
        convert({**chat, "modalities": ["text", "audio"]}, from_="openai-chat", to="anthropic")


JSON_MODE = {
    "openai-chat": {
        "model": "m",
        "messages": [{"role": "user", "content": "Hi"}],
        "response_format": {"type": "json_object"},
    },
    "openai-responses": {"model": "m", "input": "Hi", "text": {"format": {"type": "json_object"}}},
    "gemini": {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"responseMimeType": "application/json"},
    },
    "ollama": {"model": "m", "messages": [{"role": "user", "content": "Hi"}], "format": "json", "stream": False},
}


@pytest.mark.parametrize("source", list(JSON_MODE))
def test_json_mode_travels_between_the_formats_that_have_it(source: str) -> None:
    where = {
        "openai-chat": ("response_format",),
        "openai-responses": ("text",),
        "gemini": ("generationConfig",),
        "ollama": ("format",),
    }
    for target, body in JSON_MODE.items():
        if target != source:
            out = convert(JSON_MODE[source], from_=source, to=target, on_loss="drop").data
            (key,) = where[target]
            assert out[key] == body[key], (source, target)
    for target in ("anthropic", "bedrock"):  # no JSON mode there: refused
        with pytest.raises(CannotExpress):
            convert(JSON_MODE[source], from_=source, to=target)


def test_the_default_text_format_is_not_refused() -> None:
    responses = {"model": "gpt-5", "input": "Hi", "text": {"format": {"type": "text"}}}
    for target in ("anthropic", "gemini", "bedrock", "ollama"):
        result = convert(responses, from_="openai-responses", to=target)
        assert "text" not in {k for k in result.data if k != "messages"}, target
    assert convert(responses, from_="openai-responses", to="openai-chat").data["response_format"] == {"type": "text"}
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}], "response_format": {"type": "text"}}
    assert "default" in lost(convert(chat, from_="openai-chat", to="anthropic"))


def test_a_finish_message_on_an_ordinary_stop_is_not_refused_and_on_a_malformed_call_is() -> None:
    def response(reason: str, message: str) -> dict[str, Any]:
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": [{"text": "Done."}]},
                    "finishReason": reason,
                    "finishMessage": message,
                }
            ]
        }

    ordinary = response("STOP", "Model generated function call(s).")
    assert convert(ordinary, from_="gemini", to="openai-chat").data["choices"][0]["message"]["content"] == "Done."
    assert convert(ordinary, from_="gemini", to="gemini").data == ordinary
    with pytest.raises(CannotExpress, match="finishMessage"):
        convert(
            response("MALFORMED_FUNCTION_CALL", "Malformed function call: print(weather(city=Paris)"),
            from_="gemini",
            to="anthropic",
        )


def test_include_thoughts_false_is_the_default_and_not_refused() -> None:
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": False}},
    }
    for target in ("openai-chat", "openai-responses", "anthropic", "bedrock", "ollama"):
        result = convert(gemini, from_="gemini", to=target)
        assert "includeThoughts" in lost(result), target
    with pytest.raises(CannotExpress, match="includeThoughts"):  # asking for thoughts is not the default
        convert(
            {**gemini, "generationConfig": {"thinkingConfig": {"includeThoughts": True}}},
            from_="gemini",
            to="openai-chat",
        )


def test_anthropic_effort_is_the_reasoning_effort_of_the_other_formats() -> None:
    anthropic = {
        "model": "claude-opus-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "Hi"}],
        "output_config": {"effort": "low"},
    }
    assert convert(anthropic, from_="anthropic", to="openai-chat").data["reasoning_effort"] == "low"
    assert convert(anthropic, from_="anthropic", to="openai-responses").data["reasoning"] == {"effort": "low"}
    gemini = convert(anthropic, from_="anthropic", to="gemini", on_loss="drop").data
    assert gemini["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "LOW"}
    chat = {"model": "o3", "messages": [{"role": "user", "content": "Hi"}], "reasoning_effort": "high"}
    assert convert(chat, from_="openai-chat", to="anthropic").data["output_config"] == {"effort": "high"}


def test_a_top_level_cache_control_is_a_cache_hint_not_a_refusal() -> None:
    anthropic = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "cache_control": {"type": "ephemeral"},
        "messages": [{"role": "user", "content": "Hi"}],
    }
    for target in ("openai-chat", "openai-responses", "gemini", "bedrock", "ollama"):
        result = convert(anthropic, from_="anthropic", to=target)
        assert "cache_control" not in result.data and "prompt-cache hint" in lost(result), target


def test_snake_case_structured_output_from_a_python_sdk_is_read_and_written_back() -> None:
    schema = {"type": "OBJECT", "properties": {"day": {"type": "STRING"}}}
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "Which day?"}]}],
        "generationConfig": {"response_mime_type": "application/json", "response_schema": schema},
    }
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    chat = convert(gemini, from_="gemini", to="openai-chat").data
    assert chat["response_format"]["json_schema"]["schema"] == {
        "type": "object",
        "properties": {"day": {"type": "string"}},
    }


def test_mistrals_default_prefix_and_any_choice_are_understood() -> None:
    chat = {
        "model": "mistral-large-latest",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Let me look.", "prefix": False},
            {"role": "user", "content": "Go on."},
        ],
        "tools": [{"type": "function", "function": {"name": "weather", "parameters": WEATHER}}],
        "tool_choice": "any",
    }
    assert convert(chat, from_="openai-chat", to="openai-chat").data == chat
    assert convert(chat, from_="openai-chat", to="anthropic").data["tool_choice"] == {"type": "any"}
    assert convert(chat, from_="openai-chat", to="bedrock", on_loss="drop").data["toolConfig"]["toolChoice"] == {
        "any": {}
    }
    assert convert(chat, from_="openai-chat", to="openai-responses").data["tool_choice"] == "required"


# --- crashes ------------------------------------------------------------------------------------------------


def test_a_gemini_request_with_one_tools_object_is_read() -> None:
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "Weather in Paris?"}]}],
        "tools": {
            "functionDeclarations": [
                {"name": "weather", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}}
            ]
        },
    }
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    chat = convert(gemini, from_="gemini", to="openai-chat").data
    assert [t["function"]["name"] for t in chat["tools"]] == ["weather"]


# --- written invalid, and identity ---------------------------------------------------------------------------


def test_an_empty_message_is_left_out_where_the_target_refuses_it() -> None:
    chat = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": ""},
            {"role": "user", "content": "Hello?"},
        ],
    }
    gemini = convert(chat, from_="openai-chat", to="gemini").data
    assert all(content["parts"] for content in gemini["contents"])
    for target in ("anthropic", "bedrock"):
        result = convert(chat, from_="openai-chat", to=target)
        assert [m["role"] for m in result.data["messages"]] == ["user", "user"], target
        assert "messages[1]: an empty assistant message" in lost(result)


def test_an_empty_converse_system_writes_no_system_message() -> None:
    converse = {"system": [], "messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
    assert convert(converse, from_="bedrock", to="bedrock").data == converse
    for target in ("openai-chat", "openai-responses", "anthropic", "gemini", "ollama"):
        out = convert(converse, from_="bedrock", to=target).data
        assert "system" not in json.dumps(out), target


@pytest.mark.parametrize(
    ("fmt", "body"),
    [
        ("openai-chat", {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi", "name": None}]}),
        ("openai-functions", {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi", "name": None}]}),
        (
            "openai-chat",
            {
                "id": "chatcmpl-1",
                "model": "gpt-4o",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "",
                        "message": {
                            "role": "assistant",
                            "content": None,
                            "tool_calls": [
                                {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}
                            ],
                        },
                    }
                ],
            },
        ),
        (
            "openai-responses",
            {
                "model": "gpt-5",
                "input": [
                    {"type": "function_call", "call_id": "c1", "name": "snap", "arguments": "{}"},
                    {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "id": "fco_1",
                        "status": "completed",
                        "output": [
                            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "low"}
                        ],
                    },
                    {
                        "type": "function_call_output",
                        "call_id": "c1",
                        "output": [{"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}],
                    },
                ],
            },
        ),
    ],
)
def test_identity_keeps_null_names_own_finish_words_and_result_image_details(fmt: str, body: dict[str, Any]) -> None:
    assert convert(body, from_=fmt, to=fmt).data == body


def test_an_openrouter_server_tool_is_not_written_into_legacy_functions() -> None:
    chat = {
        "model": "openai/gpt-4o",
        "messages": [{"role": "user", "content": "News today?"}],
        "tools": [
            {"type": "function", "function": {"name": "weather", "parameters": WEATHER}},
            {"type": "openrouter:web_search", "parameters": {"max_results": 3}},
        ],
    }
    with pytest.raises(CannotExpress, match="tool declaration 'openrouter:web_search'"):
        convert(chat, from_="openai-chat", to="openai-functions")
    functions = convert(chat, from_="openai-chat", to="openai-functions", on_loss="drop").data
    assert [f["name"] for f in functions["functions"]] == ["weather"]
    assert convert(functions, from_="openai-functions", to="openai-chat").data["tools"] == chat["tools"][:1]


@pytest.mark.parametrize("target", ["gemini", "openai-functions"])
def test_a_result_whose_call_is_kept_server_side_is_a_reported_loss(target: str) -> None:
    responses = {
        "model": "gpt-5",
        "previous_response_id": "resp_1",  # the call is in the stored response, not in this body
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "Sunny."}],
        "tools": [{"type": "function", "name": "weather", "parameters": WEATHER, "strict": False}],
    }
    with pytest.raises(CannotExpress, match="a result whose call is not in the history"):
        convert(responses, from_="openai-responses", to=target)
    dropped = convert(responses, from_="openai-responses", to=target, on_loss="drop")
    assert "messages[0].parts[0]: a result whose call is not in the history" in lost(dropped)
    marked = convert(responses, from_="openai-responses", to=target, on_loss="mark").data
    assert "Sunny." in json.dumps(marked)


def test_a_converse_stream_keeps_a_server_tools_result() -> None:
    from toolslip.formats import bedrock_stream

    events = [
        {"messageStart": {"role": "assistant"}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 0,
                "start": {"toolUse": {"toolUseId": "s1", "name": "nova_grounding", "type": "server_tool_use"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"query": "Paris weather"}'}}}},
        {"contentBlockStop": {"contentBlockIndex": 0}},
        {
            "contentBlockStart": {
                "contentBlockIndex": 1,
                "start": {"toolResult": {"toolUseId": "s1", "type": "nova_grounding_result", "status": "success"}},
            }
        },
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolResult": [{"text": "Paris: sunny, "}]}}},
        {
            "contentBlockDelta": {
                "contentBlockIndex": 1,
                "delta": {"toolResult": [{"text": "24 C."}, {"json": {"url": "https://example.com"}}]},
            }
        },
        {"contentBlockStop": {"contentBlockIndex": 1}},
        {"contentBlockDelta": {"contentBlockIndex": 2, "delta": {"text": "It is sunny."}}},
        {"contentBlockStop": {"contentBlockIndex": 2}},
        {"messageStop": {"stopReason": "end_turn"}},
        {"metadata": {"usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}}},
    ]
    acc = bedrock_stream.Accumulator()
    seen = [event for raw in events for event in acc.feed_object(raw)]
    assert [type(e).__name__ for e in seen] == ["TextChunk"]  # the service ran the call: nothing to run here
    content = acc.response()["output"]["message"]["content"]
    assert content[1]["toolResult"]["content"] == [
        {"text": "Paris: sunny, 24 C."},
        {"json": {"url": "https://example.com"}},
    ]
    again = bedrock_stream.Accumulator()
    for name, payload in bedrock_stream.response_to_events(acc.finish()):
        again.feed_event(name, payload)
    assert again.response()["output"] == acc.response()["output"]


def test_a_converse_cache_point_is_anthropics_cache_control_and_back() -> None:
    converse = {
        "system": [{"text": "You answer from the manual."}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {
                "role": "user",
                "content": [{"text": "The manual: ..."}, {"cachePoint": {"type": "default"}}, {"text": "Q?"}],
            }
        ],
        "inferenceConfig": {"maxTokens": 100},
    }
    anthropic = convert(converse, from_="bedrock", to="anthropic").data
    assert anthropic["system"] == [
        {"type": "text", "text": "You answer from the manual.", "cache_control": {"type": "ephemeral"}}
    ]
    assert anthropic["messages"][0]["content"] == [
        {"type": "text", "text": "The manual: ...", "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "Q?"},
    ]
    assert convert(anthropic, from_="anthropic", to="bedrock").data == converse
    for target in ("openai-chat", "openai-responses", "gemini", "ollama"):  # they cache on their own
        result = convert(converse, from_="bedrock", to=target)
        assert "cachePoint" not in json.dumps(result.data) and "a cache point" in lost(result), target


def test_a_tools_cache_control_is_a_converse_cache_point_after_it_and_back() -> None:
    """A tool's ``cache_control`` went nowhere, reported to no one: Converse says it as a ``cachePoint``
    entry after the tool in ``toolConfig.tools``; the targets with no way to say it report it."""
    lookup = {"name": "lookup", "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}}}
    anthropic = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "tools": [
            {"name": "weather", "input_schema": WEATHER, "cache_control": {"type": "ephemeral"}},
            {**lookup, "cache_control": {"type": "ephemeral", "ttl": "1h"}},
        ],
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
    }
    converse = convert(anthropic, from_="anthropic", to="bedrock")
    assert converse.data["toolConfig"]["tools"] == [
        {"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}}},
        {"cachePoint": {"type": "default"}},
        {"toolSpec": {"name": "lookup", "inputSchema": {"json": lookup["input_schema"]}}},
        {"cachePoint": {"type": "default", "ttl": "1h"}},
    ]
    assert "cache" not in lost(converse)
    back = convert(converse.data, from_="bedrock", to="anthropic")
    assert back.data["tools"] == anthropic["tools"] and "cache" not in lost(back)
    for target in ("openai-chat", "openai-responses", "openai-functions", "gemini", "ollama"):
        result = convert(anthropic, from_="anthropic", to=target)
        assert "cache_control" not in json.dumps(result.data), target
        assert [loss.path for loss in result.lost if "cache mark" in loss.what] == [
            "tools[0].cache_control",
            "tools[1].cache_control",
        ], target


def test_a_converse_cache_point_after_no_tool_is_reported_going_to_anthropic() -> None:
    converse = {
        "messages": [{"role": "user", "content": [{"text": "Hi"}]}],
        "toolConfig": {
            "tools": [
                {"cachePoint": {"type": "default"}},
                {"toolSpec": {"name": "weather", "inputSchema": {"json": WEATHER}}},
            ]
        },
        "inferenceConfig": {"maxTokens": 100},
    }
    result = convert(converse, from_="bedrock", to="anthropic")
    assert "cache_control" not in json.dumps(result.data) and "a cache point" in lost(result)


def test_the_vercel_ai_sdks_named_result_is_read_as_the_tools_output() -> None:
    from toolslip.formats import gemini
    from toolslip.providers.scripted import weather

    output = {"city": "北京", "temp": 28, "unit": "celsius", "desc": "cloudy"}
    body = {  # what @ai-sdk/google sends back after a get_weather call
        "contents": [
            {"role": "user", "parts": [{"text": "Weather in Beijing?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "北京"}}}]},
            {
                "role": "user",
                "parts": [
                    {
                        "functionResponse": {
                            "name": "get_weather",
                            "response": {"name": "get_weather", "content": output},
                        }
                    }
                ],
            },
        ]
    }
    assert convert(body, from_="gemini", to="gemini").data == body
    chat = convert(body, from_="gemini", to="openai-chat").data
    assert json.loads(chat["messages"][-1]["content"]) == output
    assert weather(gemini.request_from_wire(body)) == "It is 28 °C and cloudy in 北京: no coat needed."


def test_a_csv_file_reaches_anthropic_as_a_plain_text_document() -> None:
    import base64

    csv = "city,temp\nParis,24\n"
    gemini = {
        "contents": [
            {
                "role": "user",
                "parts": [{"inlineData": {"mimeType": "text/csv", "data": base64.b64encode(csv.encode()).decode()}}],
            }
        ]
    }
    result = convert(gemini, from_="gemini", to="anthropic")
    assert result.data["messages"][0]["content"][0]["source"] == {
        "type": "text",
        "media_type": "text/plain",
        "data": csv,
    }
    assert "the text/csv type of a text file" in lost(result)


def test_include_thoughts_false_beside_a_zero_budget_is_thinking_disabled() -> None:
    gemini = {
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "generationConfig": {"thinking_config": {"include_thoughts": False, "thinking_budget": 0}},
    }
    assert convert(gemini, from_="gemini", to="anthropic").data["thinking"] == {"type": "disabled"}


def test_a_model_named_in_a_gemini_body_is_the_requests_model() -> None:
    gemini = {  # as the Go SDK sends it (recorded in tests/data/real_traffic/google_aws_ollama/langchaingo)
        "model": "models/gemini-2.0-flash",
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
    }
    assert convert(gemini, from_="gemini", to="gemini").data == gemini
    assert convert(gemini, from_="gemini", to="openai-chat").data["model"] == "gemini-2.0-flash"
    ollama = {"model": "llama3", "messages": [{"role": "user", "content": "Hi"}], "keep_alive": "10m", "stream": False}
    result = convert(ollama, from_="ollama", to="openai-chat")  # how long Ollama keeps a model loaded
    assert "keep_alive" not in result.data and "keep_alive" in lost(result)
