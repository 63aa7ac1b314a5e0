"""The OpenAI Chat Completions wire format (``POST /v1/chat/completions``), as pure functions.

What is particular to this format:

- A tool is ``{"type": "function", "function": {name, description, parameters, strict}}``.
- Calls ride on the assistant message as ``tool_calls``, with ``function.arguments`` a JSON *string*; it is
  parsed here, and kept verbatim in ``ToolCall.raw_arguments`` (``arguments`` is ``None`` when the text is
  not a JSON object, so the loop can tell the model instead of crashing).
- Results are one ``role: "tool"`` message per call, paired by ``tool_call_id``. Consecutive tool messages
  become one neutral ``tool`` message, and back. There is no error flag: an error result's content is
  a list whose first text part is exactly ``"Error: "``, the mark toolslip writes and the only thing it reads
  back as ``is_error`` (a text that merely starts with ``"Error: "`` is a success as far as anyone can tell).
- The system prompt is an ordinary ``system`` (or ``developer``) message in the list.
- ``finish_reason``: stop, tool_calls, length, content_filter, function_call. A message with a
  ``refusal`` reads as stop reason ``refusal``.

Neutral ``input_tokens`` excludes cache reads (as Anthropic counts); ``prompt_tokens`` = input + cached.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from ..core.errors import FormatError
from ..core.messages import ModelResponse, Request, Settings, StopReason, ToolChoice, ToolSpec, Usage, UseTool
from ._chat_messages import NAME as NAME  # re-exported: the format module's public names
from ._chat_messages import message_from_wire, message_to_wire
from ._chat_messages import messages_from_wire as messages_from_wire
from ._chat_messages import messages_to_wire as messages_to_wire
from ._memo import RecentMemo
from ._wire import (
    EMPTY,
    Json,
    add_tools,
    choice_from_wire,
    drop_absent,
    keep_empty,
    leftover,
    need,
    note_absent,
    obj,
    only_specs,
    seq,
    split_tools,
    stash,
    stop_to_wire,
    text_or_none,
    unstash,
    with_fields,
)
from .structured import output_from_wire, output_to_wire

FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filter",
    "function_call": "tool_use",
}
FINISH_BACK: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",  # OpenAI says "stop" for a matched stop sequence too
    "refusal": "stop",  # the refusal text travels in message.refusal
    "pause_turn": "stop",
    "content_filter": "content_filter",
    "other": "stop",
}
_FUNCTION_KEYS = frozenset({"name", "description", "parameters", "strict"})
_BODY_KEYS = frozenset(
    {"model", "messages", "tools", "tool_choice", "parallel_tool_calls", "max_tokens", "temperature", "stop"}
)
_RESPONSE_KEYS = frozenset({"id", "model", "choices", "usage"})
_CHOICE_KEYS = frozenset({"message", "finish_reason"})
_USAGE_KEYS = frozenset({"prompt_tokens", "completion_tokens", "total_tokens"})
_WRITER_DEFAULTS = ("object", "created", "id", "model")
"""The fields response_to_wire writes whatever the response had: the ones it did not have are noted."""
_WRITER_DEFAULT_SET = frozenset(_WRITER_DEFAULTS)

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    fn: Json = {"name": spec.name}
    if spec.description:
        fn["description"] = spec.description
    elif "description" in kept:
        fn["description"] = kept["description"]  # spelled "" or null
    if kept.get("shape") != "absent":
        fn["parameters"] = spec.parameters
    if spec.strict is not None:
        fn["strict"] = spec.strict
    out: Json = {"function": with_fields(fn, kept)}
    if not kept.get("no_type"):
        out = {"type": "function", **out}
    return {**kept["tool"], **out} if kept.get("tool") else out


_tools = RecentMemo(tools_to_wire)  # the loop offers the same tuple of specs on every step


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Function tools as ToolSpecs; any other tool kind raises (``request_from_wire`` keeps those)."""
    return only_specs(split_tools(items, "tools", spec_from_wire), "function")


def spec_from_wire(item: Json, path: str = "tools[0]") -> ToolSpec | None:
    """One ``tools`` entry as a ToolSpec; ``None`` when it is not a function tool (hosted, custom...).

    A function tool may leave out ``type`` (Mistral does), say ``"description": null``, and carry keys
    next to ``function`` (``cache_control`` through proxies); all of it comes back as it was.
    """
    fn = item.get("function")
    if item.get("type", "function") != "function" or not isinstance(fn, dict):
        return None  # hosted, custom and provider tools (openrouter:web_search...)
    where = f"{path}.function"
    params = fn.get("parameters")
    description = text_or_none(fn.get("description"), f"{where}.description")
    kept: Json = dict(stash(NAME, leftover(fn, _FUNCTION_KEYS), "absent" if params is None else None).get(NAME, EMPTY))
    if not description and "description" in fn:
        kept["description"] = description
    if "type" not in item:
        kept["no_type"] = True
    if item.keys() - {"type", "function"}:
        kept["tool"] = leftover(item, frozenset({"type", "function"}))
    return ToolSpec(
        name=need(fn, "name", where),
        description=description or "",
        parameters=obj(params, f"{where}.parameters") if params is not None else {"type": "object"},
        strict=fn.get("strict"),
        extra={NAME: kept} if kept else EMPTY,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/chat/completions``."""
    body: Json = {"model": request.model} if request.model else {}  # a history may have no model yet
    body["messages"] = messages_to_wire(request.messages)
    add_tools(body, _tools(request.tools), request, NAME)
    settings = request.settings
    if settings.tool_choice is not None:
        choice = settings.tool_choice
        body["tool_choice"] = (
            {"type": "function", "function": {"name": choice.name}} if isinstance(choice, UseTool) else choice
        )
    if settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    # max_tokens, not max_completion_tokens: every compatible server reads it; reasoning models that
    # insist on max_completion_tokens get it through Settings.extra.
    if settings.max_tokens is not None:
        body["max_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.stop:
        body["stop"] = list(settings.stop)
    if settings.extra:
        body.update(settings.extra)
        if settings.extra.get("tool_choice") == "any" and settings.tool_choice != "required":
            del body["tool_choice"]  # Mistral's word for a required choice, since changed (set above, if any)
            if settings.tool_choice is not None:
                choice = settings.tool_choice
                body["tool_choice"] = (
                    {"type": "function", "function": {"name": choice.name}} if isinstance(choice, UseTool) else choice
                )
        if isinstance(settings.extra.get("stop"), str) and (settings.extra["stop"],) != settings.stop:
            body["stop"] = list(settings.stop)  # the one-string spelling read earlier no longer applies
        named, untyped = settings.tool_choice, settings.extra.get("tool_choice")
        if isinstance(named, UseTool) and untyped not in (None, {"function": {"name": named.name}}):
            body["tool_choice"] = {"type": "function", "function": {"name": named.name}}  # another tool now
    output_to_wire(NAME, request.output, body)
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = split_tools(data.get("tools") or [], "tools", spec_from_wire, NAME)
    extra = leftover(data, _BODY_KEYS)
    keep_empty(data, extra, ("tools", "stop", "max_tokens", "temperature", "tool_choice", "parallel_tool_calls"))
    if isinstance(data.get("stop"), str):
        extra["stop"] = data["stop"]  # a single string: sent back as one (Settings.stop holds it too)
    choice = choice_from_wire(data, extra, _tool_choice_from_wire)
    _untyped_choice(data, extra, choice)
    stop = data.get("stop")
    settings = Settings(
        max_tokens=data.get("max_tokens"),
        temperature=data.get("temperature"),
        tool_choice=choice,
        parallel_tool_calls=data.get("parallel_tool_calls"),
        stop=(stop,) if isinstance(stop, str) else tuple(seq(stop, "stop")) if stop is not None else (),
        extra=extra,
    )
    output = output_from_wire(NAME, extra)
    return Request(
        model=text_or_none(data.get("model"), "model") or "",
        messages=tuple(messages_from_wire(data.get("messages"), "messages")),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
        output=output,
    )


def _tool_choice_from_wire(choice: object) -> ToolChoice | None:
    if choice in ("auto", "none", "required"):
        return choice
    if choice == "any":
        return "required"  # Mistral's spelling (its API takes both); _untyped_choice keeps the word
    if isinstance(choice, dict) and choice.get("type", "function") == "function" and "function" in choice:
        fn = choice["function"]
        if choice.keys() <= {"type", "function"} and isinstance(fn, dict) and fn.keys() == {"name"}:
            return UseTool(fn["name"]) if isinstance(fn["name"], str) else None
    return None


def _untyped_choice(data: Json, extra: Json, choice: ToolChoice | None) -> None:
    """Keep a named choice sent without ``"type"`` (many clients do; the API takes it) and Mistral's ``"any"``
    as they were spelled."""
    spelled = data.get("tool_choice")
    if (isinstance(choice, UseTool) and isinstance(spelled, dict) and "type" not in spelled) or spelled == "any":
        extra["tool_choice"] = spelled


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A full ``chat.completion`` object."""
    kept = unstash(response.extra, NAME)
    choice: Json = {**kept.get("choice", {"index": 0})}
    if not kept.get("no_message"):
        choice["message"] = message_to_wire(response.message)
    if not kept.get("no_finish"):
        own = kept.get("finish")
        mine = own is not None and own == response.raw_stop_reason
        choice["finish_reason"] = own if mine else stop_to_wire(response, FINISH, FINISH_BACK)
    out: Json = {
        "object": "chat.completion",
        "created": int(time.time()),
        **kept.get("fields", EMPTY),
        "id": response.id,
        "model": response.model,
        "choices": [choice, *kept.get("more_choices", ())],
    }
    if not kept.get("no_usage"):
        usage = response.usage
        prompt = usage.input_tokens + usage.cache_read_tokens
        wire: Json = {
            **kept.get("usage", EMPTY),
            "prompt_tokens": prompt,
            "completion_tokens": usage.output_tokens,
            "total_tokens": prompt + usage.output_tokens + kept.get("uncounted", 0),
        }
        if usage.cache_read_tokens and "prompt_tokens_details" not in wire:
            wire["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
        if usage.reasoning_tokens:
            wire["completion_tokens_details"] = {
                **(wire.get("completion_tokens_details") or EMPTY),
                "reasoning_tokens": usage.reasoning_tokens,
            }
        out["usage"] = wire
    drop_absent(out, kept)
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A ``chat.completion`` dict, or the SDK's ``ChatCompletion`` object, as a ModelResponse."""
    body = data if type(data) is dict else obj(data, "response")  # here and below: no call for a plain dict
    choices = body.get("choices")
    if type(choices) is not list:
        choices = seq(choices, "choices")
    if not choices:
        raise FormatError("the response has no choices", "choices")
    choice = choices[0] if type(choices[0]) is dict else obj(choices[0], "choices[0]")
    kept: Json = {"fields": leftover(body, _RESPONSE_KEYS)}
    if not body.keys() >= _WRITER_DEFAULT_SET:
        note_absent(kept, body, _WRITER_DEFAULTS)
    # A choice withheld by a content filter (Azure) comes with no message at all.
    wire_message = obj(choice["message"], "choices[0].message") if choice.get("message") is not None else {}
    if "message" not in choice:
        kept["no_message"] = True
    message = message_from_wire(wire_message, "assistant", "choices[0].message")
    raw = choice.get("finish_reason")
    if "finish_reason" not in choice:
        kept["no_finish"] = True
    elif isinstance(raw, str) and raw not in FINISH:
        kept["finish"] = raw  # a word of its own ("" next to tool calls): written back as it came
    stop: StopReason = FINISH.get(raw, "other") if isinstance(raw, str) else "other"
    if wire_message.get("refusal"):
        stop = "refusal"
    elif stop in ("end_turn", "other") and message.tool_calls:
        stop = "tool_use"  # some compatible servers say "stop" (or nothing) next to tool calls
    elif stop == "other" and raw is None:
        stop = "end_turn"
    kept["choice"] = leftover(choice, _CHOICE_KEYS)
    if choice.get("message") is None and "message" in choice:
        kept["choice"]["message"] = None
    if len(choices) > 1:
        kept["more_choices"] = choices[1:]
        kept["unread"] = ["choices[1:]"]  # n > 1: the other answers have no neutral slot
    wire_usage = body.get("usage")
    if wire_usage is None:
        kept["no_usage"] = True
        usage = Usage()
    else:
        wire_usage = obj(wire_usage, "usage")
        details = wire_usage.get("prompt_tokens_details") or EMPTY
        cached = details.get("cached_tokens") or 0
        reasoning = (wire_usage.get("completion_tokens_details") or EMPTY).get("reasoning_tokens") or 0
        usage = Usage(
            input_tokens=(wire_usage.get("prompt_tokens") or 0) - cached,
            output_tokens=wire_usage.get("completion_tokens") or 0,
            cache_read_tokens=cached,
            reasoning_tokens=reasoning,
        )
        kept["usage"] = leftover(wire_usage, _USAGE_KEYS)
        total = wire_usage.get("total_tokens")
        if type(total) is int and total != (wire_usage.get("prompt_tokens") or 0) + usage.output_tokens:
            kept["uncounted"] = total - (wire_usage.get("prompt_tokens") or 0) - usage.output_tokens  # xAI's total
    model, response_id = body.get("model"), body.get("id")
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=usage,
        model=model if type(model) is str else text_or_none(model, "model") or "",
        id=response_id if type(response_id) is str else text_or_none(response_id, "id") or "",
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )
