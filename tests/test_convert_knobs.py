"""Request knobs between the OpenAI formats, Anthropic and the Gemini, Converse and Ollama wires: translated
exactly where the target has them, left out (and reported) where the target does it anyway, refused with
one sentence where it has no exact spelling of the value."""

from __future__ import annotations

from typing import Any

import pytest

from toolslip.conversion import convert
from toolslip.errors import CannotExpress

HI = [{"role": "user", "content": "hi"}]
CHAT_KNOBS = {
    "seed": 7,
    "frequency_penalty": 0.5,
    "presence_penalty": -0.25,
    "logprobs": True,
    "top_logprobs": 3,
    "reasoning_effort": "low",
}


def _chat(**knobs: Any) -> dict[str, Any]:
    return {"model": "m", "messages": HI, **knobs}


def _anthropic(**knobs: Any) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 4096, "messages": HI, **knobs}


def _back(body: dict[str, Any], via: str, source: str = "openai-chat") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the body in ``via``, and converted back to ``source``), both conversions strict."""
    there = convert(body, from_=source, to=via).data
    return there, convert(there, from_=via, to=source).data


def test_chat_knobs_are_gemini_generation_config_and_come_back_exactly() -> None:
    body = _chat(**CHAT_KNOBS, n=2)
    gemini, back = _back(body, "gemini")
    assert gemini["generationConfig"] == {
        "seed": 7,
        "frequencyPenalty": 0.5,
        "presencePenalty": -0.25,
        "responseLogprobs": True,
        "logprobs": 3,
        "candidateCount": 2,
        "thinkingConfig": {"thinkingLevel": "LOW"},
    }
    assert {k: back[k] for k in (*CHAT_KNOBS, "n")} == {**CHAT_KNOBS, "n": 2}


def test_chat_knobs_are_ollama_options_and_think_and_come_back_exactly() -> None:
    ollama, back = _back(_chat(**CHAT_KNOBS), "ollama")
    assert ollama["options"] == {"seed": 7, "frequency_penalty": 0.5, "presence_penalty": -0.25}
    assert (ollama["think"], ollama["logprobs"], ollama["top_logprobs"]) == ("low", True, 3)
    assert {k: back[k] for k in CHAT_KNOBS} == CHAT_KNOBS


@pytest.mark.parametrize("target", ["gemini", "bedrock"])
def test_anthropic_top_k_and_thinking_budget_go_to_gemini_and_converse_and_back(target: str) -> None:
    body = _anthropic(top_k=40, thinking={"type": "enabled", "budget_tokens": 2048})
    there, back = _back(body, target, "anthropic")
    if target == "gemini":
        config = there["generationConfig"]
        assert config["topK"] == 40
        assert config["thinkingConfig"] == {"thinkingBudget": 2048, "includeThoughts": True}
    else:  # Claude on Bedrock reads Anthropic's own fields here
        assert there["additionalModelRequestFields"] == {"top_k": 40, "thinking": body["thinking"]}
    assert (back["top_k"], back["thinking"]) == (40, body["thinking"])


def test_thinking_turned_off_is_a_zero_budget_in_gemini_and_think_false_in_ollama() -> None:
    body = _anthropic(thinking={"type": "disabled"})
    gemini, back = _back(body, "gemini", "anthropic")
    assert gemini["generationConfig"]["thinkingConfig"] == {"thinkingBudget": 0}
    assert back["thinking"] == {"type": "disabled"}
    ollama, back = _back(body, "ollama", "anthropic")
    assert ollama["think"] is False and back["thinking"] == {"type": "disabled"}


def test_responses_effort_and_auto_summary_are_gemini_thinking_config() -> None:
    body = {"model": "m", "input": "hi", "reasoning": {"effort": "medium", "summary": "auto"}}
    gemini, back = _back(body, "gemini", "openai-responses")
    assert gemini["generationConfig"]["thinkingConfig"] == {"thinkingLevel": "MEDIUM", "includeThoughts": True}
    assert back["reasoning"] == body["reasoning"]


@pytest.mark.parametrize("source", ["openai-responses", "openai-chat"])
def test_a_required_allowed_tools_choice_is_gemini_any_with_its_names(source: str) -> None:
    tools = [{"type": "function", "name": n} for n in ("a", "b")]
    if source == "openai-responses":
        choice: dict[str, Any] = {"type": "allowed_tools", "mode": "required", "tools": tools}
        body: dict[str, Any] = {"model": "m", "input": "hi", "tool_choice": choice}
    else:
        listed = [{"type": "function", "function": {"name": n}} for n in ("a", "b")]
        choice = {"type": "allowed_tools", "allowed_tools": {"mode": "required", "tools": listed}}
        body = _chat(tool_choice=choice)
    gemini, back = _back(body, "gemini", source)
    assert gemini["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["a", "b"]}}
    assert back["tool_choice"] == choice


@pytest.mark.parametrize("target", ["gemini", "bedrock", "ollama"])
def test_what_the_target_does_anyway_is_left_out_and_reported_not_refused(target: str) -> None:
    body = _chat(stream=True, stream_options={"include_usage": True}, parallel_tool_calls=True, n=1)
    if target == "ollama":
        body["tool_choice"] = "auto"
    out = convert(body, from_="openai-chat", to=target)
    assert "parallel_tool_calls" not in out.data and "stream_options" not in out.data
    assert "tool_choice" not in out.data and "toolConfig" not in out.data
    lost = {loss.path: loss for loss in out.lost}
    assert lost["settings.parallel_tool_calls"].handled == "left out"
    assert lost["settings.extra.stream_options"].handled == "left out"
    if target == "ollama":
        assert out.data["stream"] is True and lost["settings.tool_choice"].handled == "left out"
    else:  # the endpoint streams: :streamGenerateContent, /converse-stream
        assert "stream" not in out.data and lost["settings.extra.stream"].handled == "left out of the body"


@pytest.mark.parametrize(
    ("body", "source", "target", "sentence"),
    [
        (_chat(reasoning_effort="minimal"), "openai-chat", "ollama", "the value 'minimal' of request field"),
        (_chat(reasoning_effort="xhigh"), "openai-chat", "gemini", "the value 'xhigh' of request field"),
        (_anthropic(thinking={"type": "enabled", "budget_tokens": 1024}), "anthropic", "ollama", "'thinking'"),
        (_chat(parallel_tool_calls=False), "openai-chat", "gemini", "parallel_tool_calls: false"),
        (_chat(stream_options={"include_obfuscation": False}), "openai-chat", "gemini", "'stream_options'"),
        (
            {"contents": [], "generationConfig": {"thinkingConfig": {"thinkingBudget": -1}}},
            "gemini",
            "anthropic",
            "request field 'generationConfig.thinkingConfig.thinkingBudget'",
        ),
    ],
)
def test_a_value_with_no_exact_spelling_is_refused_in_one_sentence(
    body: dict[str, Any], source: str, target: str, sentence: str
) -> None:
    with pytest.raises(CannotExpress, match="cannot be expressed in") as raised:
        convert(body, from_=source, to=target)
    assert sentence in str(raised.value) and "\n" not in str(raised.value)
    dropped = convert(body, from_=source, to=target, on_loss="drop")
    assert any(loss.path == raised.value.path for loss in dropped.lost)


@pytest.mark.parametrize("fmt", ["gemini", "bedrock", "ollama"])
def test_the_written_knobs_read_back_as_the_same_body(fmt: str) -> None:
    """What conversion writes in a native body, that format's reader keeps: the identity round trip holds."""
    source = "anthropic" if fmt == "bedrock" else "openai-chat"
    knobs = {"top_k": 5, "thinking": {"type": "disabled"}} if fmt == "bedrock" else CHAT_KNOBS
    body = _anthropic(**knobs) if fmt == "bedrock" else _chat(**knobs)
    native = convert(body, from_=source, to=fmt).data
    assert convert(native, from_=fmt, to=fmt).data == native


def test_a_body_without_stream_keeps_its_meaning_across_ollama_whose_default_is_to_stream() -> None:
    to_ollama = convert(_chat(), from_="openai-chat", to="ollama")
    assert to_ollama.data["stream"] is False and to_ollama.lost[0].handled == "set to false"
    ollama_body = {"model": "m", "messages": HI}
    assert convert(ollama_body, from_="ollama", to="openai-chat").data["stream"] is True
    assert convert(ollama_body, from_="ollama", to="anthropic").data["stream"] is True
    assert "stream" not in convert(ollama_body, from_="ollama", to="gemini").data  # the endpoint says it


def test_a_gemini_budget_below_anthropics_least_is_refused_not_sent() -> None:
    config = {"thinkingConfig": {"thinkingBudget": 512, "includeThoughts": True}}
    with pytest.raises(CannotExpress, match="thinkingConfig"):
        convert({"contents": [], "generationConfig": config}, from_="gemini", to="anthropic")


def test_gemini_knobs_in_snake_case_are_read_as_the_api_reads_them() -> None:
    config = {"top_k": 4, "thinking_config": {"thinking_budget": 2048, "include_thoughts": True}}
    out = convert({"contents": [], "generationConfig": config}, from_="gemini", to="anthropic")
    assert (out.data["top_k"], out.data["thinking"]) == (4, {"type": "enabled", "budget_tokens": 2048})


def test_a_service_tier_both_sell_is_converse_service_tier() -> None:
    bedrock, back = _back(_chat(service_tier="flex"), "bedrock")
    assert bedrock["serviceTier"] == {"type": "flex"} and back["service_tier"] == "flex"
    with pytest.raises(CannotExpress, match="the value 'auto' of request field 'service_tier'"):
        convert(_chat(service_tier="auto"), from_="openai-chat", to="bedrock")
