"""What the real services refuse, refused by ``toolslip serve`` in the services' own words.

A program tested against ``serve`` must fail against it where it would fail against OpenAI or Anthropic,
so each endpoint checks a request body the way its service does before any model sees it: required
fields, empty lists, tool names, number ranges, and calls and results that do not pair up. A refusal
carries the service's message, ``param`` and ``code`` (OpenAI) or its dotted field path (Anthropic), so
the official SDKs raise their own ``BadRequestError`` with a message a user can search for. Where each
message comes from (recorded traffic, SDK types, public reports of the real error) is listed in
``docs/providers.md``.

Only what the service rejects is checked here; the shapes of the messages themselves are checked by the
format's ``request_from_wire``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..formats.schema import NAME_RULES, name_pattern

__all__ = ["Check", "Rejection", "check_chat", "check_messages", "check_responses"]

_OPENAI_NAME = re.compile(r"[a-zA-Z0-9_-]+")
_ANTHROPIC_PATTERN = name_pattern("anthropic")
_ANTHROPIC_NAME = re.compile(_ANTHROPIC_PATTERN)
_OPENAI_NAME_MAX = NAME_RULES["openai-chat"]
_N_MAX = 128


@dataclass(frozen=True, slots=True)
class Rejection:
    """Why the service would answer 400: its message, and (OpenAI) the field and error code."""

    message: str
    param: str | None = None
    code: str | None = None
    details: dict[str, str] | None = None
    """Anthropic's ``error.details`` (``{"error_code": "thread_not_found"}``), which its SDK branches on."""


Check = Callable[[dict[str, Any]], Rejection | None]
"""What an endpoint runs on a request body before anything else: the refusal, or None."""


def _first(*checks: Iterator[Rejection]) -> Rejection | None:
    return next((r for check in checks for r in check), None)


def _openai_range(body: dict[str, Any], field: str, low: float, high: float | None = None) -> Iterator[Rejection]:
    """OpenAI's words for a number out of range: ``integer below minimum value`` and friends."""
    value = body.get(field)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return  # absent, or not a number: the format's own check names it
    kind = "integer" if isinstance(value, int) else "decimal"
    if value < low:
        yield Rejection(
            f"Invalid '{field}': {kind} below minimum value. Expected a value >= {low:g}, but got {value} instead.",
            field,
            f"{kind}_below_min_value",
        )
    elif high is not None and value > high:
        yield Rejection(
            f"Invalid '{field}': {kind} above maximum value. Expected a value <= {high:g}, but got {value} instead.",
            field,
            f"{kind}_above_max_value",
        )


def _openai_empty(body: dict[str, Any], field: str) -> Iterator[Rejection]:
    if body.get(field) == []:
        yield Rejection(
            f"Invalid '{field}': empty array. Expected an array with minimum length 1, but got an empty array instead.",
            field,
            "empty_array",
        )


def _openai_missing(body: dict[str, Any], field: str) -> Iterator[Rejection]:
    if body.get(field) is None:
        yield Rejection(f"Missing required parameter: '{field}'.", field, "missing_required_parameter")


def _openai_tool_names(
    tools: object, where: Callable[[int], str], named: Callable[[Any], object]
) -> Iterator[Rejection]:
    for i, tool in enumerate(tools if isinstance(tools, list) else ()):
        if not isinstance(tool, dict) or tool.get("type", "function") != "function":
            continue
        name, param = named(tool), where(i)
        if name is None:
            yield Rejection(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
        elif isinstance(name, str) and not _OPENAI_NAME.fullmatch(name):
            yield Rejection(
                f"Invalid '{param}': string does not match pattern. Expected a string that matches the pattern "
                "'^[a-zA-Z0-9_-]+$'.",
                param,
                "invalid_value",
            )
        elif isinstance(name, str) and len(name) > _OPENAI_NAME_MAX:
            yield Rejection(
                f"Invalid '{param}': string too long. Expected a string with maximum length {_OPENAI_NAME_MAX}, "
                f"but got a string with length {len(name)} instead.",
                param,
                "string_above_max_length",
            )


def _function(tool: Any) -> object:
    fn = tool.get("function")
    return fn.get("name") if isinstance(fn, dict) else None


# --- OpenAI Chat Completions -------------------------------------------------------------------------


def check_chat(body: dict[str, Any]) -> Rejection | None:
    """``POST /v1/chat/completions``; ``body`` still holds ``stream`` and ``stream_options``."""
    if not body.get("model"):
        return Rejection("you must provide a model parameter")
    return _first(
        _openai_missing(body, "messages"),
        _openai_empty(body, "messages"),
        _openai_empty(body, "tools"),
        _openai_tool_names(body.get("tools"), lambda i: f"tools[{i}].function.name", _function),
        _chat_options(body),
        _openai_range(body, "n", 1, _N_MAX),
        _openai_range(body, "max_tokens", 1),
        _openai_range(body, "max_completion_tokens", 1),
        _openai_range(body, "temperature", 0, 2),
        _openai_range(body, "top_p", 0, 1),
        _chat_pairs(body.get("messages")),
    )


def _chat_options(body: dict[str, Any]) -> Iterator[Rejection]:
    if body.get("tool_choice") is not None and not body.get("tools"):
        yield Rejection(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            "tool_choice",
        )
    if body.get("stream_options") is not None and not body.get("stream"):
        yield Rejection("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options")


def _chat_pairs(messages: object) -> Iterator[Rejection]:
    """Every ``tool`` message answers the assistant turn just before it, and every call is answered."""
    if not isinstance(messages, list):
        return
    asked: list[str] = []  # calls of the last assistant turn not answered yet
    asked_at = -1
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, dict) else None
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if asked_at < 0 or (call_id not in asked and not _answered(messages, asked_at, call_id)):
                yield Rejection(
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.",
                    f"messages.[{i}].role",
                )
                return
            if call_id in asked:
                asked.remove(call_id)
            continue
        if asked:
            break
        calls = message.get("tool_calls") if role == "assistant" else None
        asked = [str(c.get("id")) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        asked_at = i if asked else -1
    if asked:
        yield Rejection(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
            f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(asked)}",
            f"messages.[{asked_at}].role",
        )


def _answered(messages: list[Any], asked_at: int, call_id: object) -> bool:
    """A second result for a call already answered is still "a response to" that turn."""
    calls = messages[asked_at].get("tool_calls") or ()
    return any(isinstance(c, dict) and str(c.get("id")) == call_id for c in calls)


# --- OpenAI Responses --------------------------------------------------------------------------------


def check_responses(body: dict[str, Any]) -> Rejection | None:
    """``POST /v1/responses``."""
    return _first(
        _openai_missing(body, "model"),
        _openai_tool_names(body.get("tools"), lambda i: f"tools[{i}].name", lambda tool: tool.get("name")),
        _openai_range(body, "max_output_tokens", 16),
        _openai_range(body, "temperature", 0, 2),
        _openai_range(body, "top_p", 0, 1),
        _responses_pairs(body.get("input")),
    )


def _responses_pairs(items: object) -> Iterator[Rejection]:
    if not isinstance(items, list):
        return
    calls: list[str] = []
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.append(item.get("call_id", ""))
        elif item.get("type") == "function_call_output":
            call_id = item.get("call_id", "")
            if call_id not in calls:
                yield Rejection(f"No tool call found for function call output with call_id {call_id}.", "input")
                return
            answered.add(call_id)
    for call_id in calls:
        if call_id not in answered:
            yield Rejection(f"No tool output found for function call {call_id}.", "input")
            return


# --- Anthropic Messages ------------------------------------------------------------------------------


def check_messages(body: dict[str, Any]) -> Rejection | None:
    """``POST /v1/messages``. Anthropic names the field in the message itself (``tools.0.custom.name: ...``)."""
    for field in ("model", "max_tokens", "messages"):
        if body.get(field) is None:
            return Rejection(f"{field}: Field required", field)
    if body["messages"] == []:
        return Rejection("messages: at least one message is required", "messages")
    return _first(_anthropic_tool_names(body.get("tools")), _anthropic_pairs(body["messages"]))


def _anthropic_tool_names(tools: object) -> Iterator[Rejection]:
    for i, tool in enumerate(tools if isinstance(tools, list) else ()):
        if not isinstance(tool, dict) or tool.get("type", "custom") != "custom":
            continue
        name = tool.get("name")
        if isinstance(name, str) and not _ANTHROPIC_NAME.fullmatch(name):
            where = f"tools.{i}.custom.name"
            yield Rejection(f"{where}: String should match pattern '{_ANTHROPIC_PATTERN}'", where)


def _blocks(message: object, kind: str) -> list[tuple[int, dict[str, Any]]]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [(j, b) for j, b in enumerate(content) if isinstance(b, dict) and b.get("type") == kind]


def _anthropic_pairs(messages: object) -> Iterator[Rejection]:
    """Each ``tool_use`` is answered in the very next (user) message, and each result answers one of them."""
    if not isinstance(messages, list):
        return
    for i, message in enumerate(messages):
        previous = messages[i - 1] if i else None
        asked = {b.get("id") for _, b in _blocks(previous, "tool_use")} if previous is not None else set()
        for j, block in _blocks(message, "tool_result"):
            if block.get("tool_use_id") not in asked:
                where = f"messages.{i}.content.{j}"
                yield Rejection(
                    f"{where}: unexpected `tool_use_id` found in `tool_result` blocks: {block.get('tool_use_id')}. "
                    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.",
                    where,
                )
                return
        uses = [b.get("id") for _, b in _blocks(message, "tool_use")]
        if uses and i + 1 < len(messages):
            answered = {b.get("tool_use_id") for _, b in _blocks(messages[i + 1], "tool_result")}
            missing = [str(u) for u in uses if u not in answered]
            if missing:
                yield Rejection(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message.",
                    f"messages.{i}",
                )
                return
