"""Every request field of the official SDKs, with a value a real client could send, for `toolslip serve` tests.

The field names are read from the installed ``openai`` and ``anthropic`` packages' request TypedDicts, so a
field a newer SDK adds is sent too (as ``null`` when its type is optional; a required one fails the table
test, asking for a value here). The values follow the SDKs' types: enums take one of their literals,
objects the keys their TypedDicts declare.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import message_create_params
from openai.types.chat import completion_create_params
from openai.types.responses import response_create_params

FX = {
    "name": "fx",
    "description": "Convert an amount to CNY.",
    "parameters": {
        "type": "object",
        "properties": {"amount": {"type": "number"}, "currency": {"type": "string"}},
        "required": ["amount", "currency"],
    },
}

CHAT: dict[str, Any] = {
    "audio": {"voice": "alloy", "format": "wav"},
    "frequency_penalty": 0.1,
    "function_call": "none",
    "functions": [FX],
    "logit_bias": {"100": -1},
    "logprobs": True,
    "max_completion_tokens": 6,
    "max_tokens": 6,
    "metadata": {"suite": "fields"},
    "modalities": ["text"],
    "moderation": {"model": "omni-moderation-latest"},
    "n": 1,
    "parallel_tool_calls": False,
    "prediction": {"type": "content", "content": "Paris"},
    "presence_penalty": 0.1,
    "prompt_cache_key": "fields-test",
    "prompt_cache_options": {"mode": "implicit"},
    "prompt_cache_retention": "in_memory",
    "reasoning_effort": "low",
    "response_format": {"type": "text"},
    "safety_identifier": "user-1",
    "seed": 7,
    "service_tier": "auto",
    "stop": ["\n\n"],
    "store": False,
    "stream_options": {"include_usage": True},
    "temperature": 0.2,
    "tool_choice": "none",
    "tools": [{"type": "function", "function": FX}],
    "top_logprobs": 2,
    "top_p": 0.9,
    "user": "user-1",
    "verbosity": "low",
    "web_search_options": {},
}
CHAT_REFUSED = {
    "web_search_options": "server tools",  # only OpenAI can search the web
    "stream_options": "only allowed when 'stream' is enabled",
    "tool_choice": "only allowed when 'tools' are specified",
}

RESPONSES: dict[str, Any] = {
    "access_programs": {"cyber": "standard"},
    "background": True,
    "background_options": {"completion_window": "soonest"},
    "context_management": [{"type": "compaction", "compact_threshold": 1000}],
    "conversation": "conv_123",
    "image": {"context_compression": "auto"},
    "include": ["message.output_text.logprobs"],
    "instructions": "Be brief.",
    "max_output_tokens": 16,
    "max_tool_calls": 1,
    "metadata": {"suite": "fields"},
    "moderation": {"model": "omni-moderation-latest"},
    "parallel_tool_calls": False,
    "previous_response_id": "resp_123",
    "prompt": {"id": "pmpt_123"},
    "prompt_cache_key": "fields-test",
    "prompt_cache_options": {"mode": "implicit"},
    "prompt_cache_retention": "in_memory",
    "reasoning": {"effort": "low"},
    "safety_identifier": "user-1",
    "service_tier": "auto",
    "store": False,
    "stream_options": {"include_obfuscation": False},
    "temperature": 0.2,
    "text": {"format": {"type": "text"}, "verbosity": "low"},
    "tool_choice": "none",
    "tools": [{"type": "function", **FX}],
    "top_logprobs": 2,
    "top_p": 0.9,
    "truncation": "auto",
    "user": "user-1",
}
RESPONSES_REFUSED = {
    "background": "nothing is stored to poll",
    "conversation": "nothing is stored",
    "previous_response_id": "nothing is stored",
    "prompt": "nothing is stored",
}

MESSAGES: dict[str, Any] = {
    "cache_control": {"type": "ephemeral"},
    "container": "container_123",
    "diagnostics": {"previous_message_id": "msg_123"},
    "inference_geo": "us",
    "metadata": {"user_id": "user-1"},
    "output_config": {"effort": "low"},
    "service_tier": "auto",
    "speed": "standard",
    "stop_sequences": ["\n\n"],
    "system": "Be brief.",
    "thinking": {"type": "disabled"},
    "tool_choice": {"type": "none"},
    "tools": [{"name": FX["name"], "description": FX["description"], "input_schema": FX["parameters"]}],
    "user_profile_id": "user-1",
    "workspace_id": "wrk_123",
}
MESSAGES_REFUSED: dict[str, str] = {}

# Sent by every request of the endpoint, so they are not fields under test.
BASE_FIELDS = {
    "chat": {"model", "messages", "stream"},
    "responses": {"model", "input", "stream"},
    "messages": {"model", "messages", "max_tokens", "stream"},
}

SDK_TYPES = {
    "chat": completion_create_params.CompletionCreateParamsNonStreaming,
    "responses": response_create_params.ResponseCreateParamsNonStreaming,
    "messages": message_create_params.MessageCreateParamsNonStreaming,
}
TABLES = {"chat": CHAT, "responses": RESPONSES, "messages": MESSAGES}
REFUSED = {"chat": CHAT_REFUSED, "responses": RESPONSES_REFUSED, "messages": MESSAGES_REFUSED}


def annotations(kind: str) -> dict[str, str]:
    """Each field of the SDK's request type with its annotation as written (``Optional[int]``...)."""
    merged: dict[str, Any] = {}
    for base in reversed(SDK_TYPES[kind].__mro__):
        merged.update(getattr(base, "__annotations__", {}))
    names = SDK_TYPES[kind].__required_keys__ | SDK_TYPES[kind].__optional_keys__
    return {n: getattr(merged[n], "__forward_arg__", str(merged[n])) for n in names}


def fields(kind: str) -> dict[str, Any]:
    """Every field of the installed SDK's request type (but the base ones) with the value to send."""
    out: dict[str, Any] = {}
    for name, annotation in sorted(annotations(kind).items()):
        if name in BASE_FIELDS[kind]:
            continue
        if name in TABLES[kind]:
            out[name] = TABLES[kind][name]
        elif annotation.startswith("Optional["):
            out[name] = None  # a field newer than this table: null is a value its type allows
        else:
            raise AssertionError(
                f"the installed SDK's {kind} request has a new field {name!r} ({annotation}): add a value"
            )
    return out
