"""The neutral transcript: JSON form, views, usage sums, and how records are built."""

import dataclasses
import inspect
import pickle
from dataclasses import replace

import pytest

from toolslip.messages import (
    File,
    Image,
    Message,
    ModelResponse,
    ProviderPart,
    Reasoning,
    Request,
    ServerTool,
    Settings,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
    UseTool,
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


# --- construction: messages.py gives each record a cheaper __init__ than the dataclass one ----------------

RECORDS = [Text, Image, File, Reasoning, ToolCall, ToolResult, ProviderPart, Message, Usage, ModelResponse]
RECORDS += [ToolSpec, ServerTool, UseTool, Settings, Request]


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__name__)
def test_each_record_takes_exactly_its_fields_as_the_dataclass_declares_them(cls: type) -> None:
    params = inspect.signature(cls).parameters
    declared = dataclasses.fields(cls)
    assert list(params) == [f.name for f in declared]
    for f in declared:
        param = params[f.name]
        assert param.kind is (inspect.Parameter.KEYWORD_ONLY if f.kw_only else inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if f.default is not dataclasses.MISSING:
            assert param.default is f.default
        elif f.default_factory is not dataclasses.MISSING:
            assert repr(param.default) == "<factory>"
        else:
            assert param.default is inspect.Parameter.empty
    with pytest.raises(TypeError, match="unexpected keyword argument 'nonsense'"):
        cls(nonsense=1)


def test_records_stay_frozen_and_keep_equality_replace_and_pickle() -> None:
    call = ToolCall(id="c1", name="fx", arguments={"amount": 3})
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'name'"):
        ToolCall(id="c1", arguments={})  # type: ignore[call-arg]
    with pytest.raises(dataclasses.FrozenInstanceError):
        call.name = "other"  # type: ignore[misc]
    assert call == ToolCall(id="c1", name="fx", arguments={"amount": 3}) != replace(call, name="other")
    assert replace(call, name="other").name == "other"
    assert pickle.loads(pickle.dumps(call)) == call
    assert hash(UseTool("fx")) == hash(UseTool(name="fx"))
    one, two = Message.user("a"), Message.user("a")
    assert one.extra == {} and one.extra is not two.extra  # a factory default is a new object every time
    assert Usage(input_tokens=2).server_tool_use == {}
    assert Request(model="m", messages=()).settings == Settings()
