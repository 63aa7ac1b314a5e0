import pytest

from toolslip.messages import (
    Image,
    Message,
    ProviderPart,
    Text,
    ToolCall,
    ToolResult,
    Usage,
    message_from_dict,
    message_to_dict,
)


def test_json_form_round_trips_every_part_kind() -> None:
    messages = [
        Message.system("sys"),
        Message.user("hi"),
        Message(
            role="assistant",
            parts=(
                ProviderPart(format="anthropic", data={"type": "thinking", "thinking": "hm", "signature": "sig"}),
                Text(text="let me check"),
                ToolCall(id="c1", name="fx", arguments={"amount": 1}, raw_arguments='{"amount": 1}'),
                ToolCall(id="c2", name="fx", arguments=None, raw_arguments="{bad"),
            ),
        ),
        Message(
            role="tool",
            parts=(
                ToolResult(call_id="c1", content="ok", name="fx"),
                ToolResult(
                    call_id="c2",
                    content=(Text(text="a"), Image(media_type="image/png", data="AA")),
                    is_error=True,
                    untrusted=True,
                ),
            ),
            extra={"x": 1},
        ),
    ]
    again = [message_from_dict(message_to_dict(m)) for m in messages]
    assert again == messages
    assert again[3].extra == {"x": 1}


def test_bad_json_form_is_named() -> None:
    with pytest.raises(ValueError, match="unknown role 'robot'"):
        message_from_dict({"role": "robot", "parts": []})
    with pytest.raises(ValueError, match="unknown part kind 'video'"):
        message_from_dict({"role": "user", "parts": [{"kind": "video"}]})


def test_usage_adds_up_including_server_tools() -> None:
    total = Usage(input_tokens=1, output_tokens=2, server_tool_use={"web_search_requests": 1}) + Usage(
        input_tokens=10, cache_read_tokens=5, server_tool_use={"web_search_requests": 2}
    )
    assert (total.input_tokens, total.output_tokens, total.cache_read_tokens) == (11, 2, 5)
    assert total.server_tool_use == {"web_search_requests": 3}


def test_message_views() -> None:
    call = ToolCall(id="1", name="f", arguments={})
    m = Message.assistant("a", [call])
    assert m.text == "a" and m.tool_calls == [call] and m.tool_results == []


def test_settings_refuse_an_unknown_tool_choice() -> None:
    from toolslip.messages import Settings, UseTool

    assert Settings(tool_choice=UseTool("fx")).tool_choice == UseTool("fx")
    with pytest.raises(ValueError, match="tool_choice must be 'auto', 'none', 'required' or UseTool"):
        Settings(tool_choice="always")  # type: ignore[arg-type]
