"""The OpenAI Responses API wire format (``POST /v1/responses``), as pure functions.

What is particular to this format:

- A tool is flat: ``{"type": "function", "name", "description", "parameters", "strict"}``. Hosted tools
  (``web_search``, ``file_search``, ``code_interpreter``, ``mcp``...) come from ``Request.server_tools``
  (rendered by ``toolslip.formats.server_tools``) or travel verbatim in ``Request.extra_tools``.
  ``strict`` defaults to *true* here, unlike Chat Completions: a neutral ``strict=None`` (the provider
  default elsewhere, i.e. not strict) is written ``false``, and ``false`` reads back as ``None``.
- There are no messages, only ``input`` items (and ``output`` items in a response): ``message`` items,
  ``function_call`` items (``call_id`` pairs the call with its output; ``id`` is the item's own ``fc_...``
  id), ``function_call_output`` items, ``reasoning`` items, and hosted-tool items (``web_search_call``,
  ``mcp_call``, ``mcp_list_tools``...). Consecutive model-side items form one neutral assistant message;
  consecutive outputs one neutral ``tool`` message. A reasoning item is a Reasoning part (the item kept
  whole in the stash); hosted-tool items become ``ProviderPart("openai-responses", item)``, sent back
  unchanged.
- The system prompt is ``instructions`` (or a ``system``/``developer`` message item).
- There is no error flag on an output: an error result is sent with ``"Error: "`` before its content.
- A response has no finish reason: ``status`` (``completed``, ``incomplete`` with
  ``incomplete_details.reason``, ``failed``...) and the items say why it stopped.
- There are no stop sequences; ``max_output_tokens`` is the output limit.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..core.errors import CannotExpress
from ..core.messages import (
    Message,
    ModelResponse,
    Part,
    ProviderPart,
    Request,
    Settings,
    StopReason,
    Text,
    ToolCall,
    ToolChoice,
    ToolSpec,
    Usage,
    UseTool,
)
from ._responses_items import NAME as NAME  # re-exported: the format module's public names
from ._responses_items import items_to_wire, unread_parts
from ._responses_items import messages_from_wire as messages_from_wire
from ._responses_items import messages_to_wire as messages_to_wire
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
    text,
    text_or_none,
    unstash,
    with_fields,
)
from .structured import output_from_wire, output_to_wire

INCOMPLETE: dict[str, StopReason] = {"max_output_tokens": "max_tokens", "content_filter": "content_filter"}
_STATUSES = frozenset({"completed", "incomplete", "failed", "in_progress", "cancelled", "queued"})
_TOOL_KEYS = frozenset({"type", "name", "description", "parameters", "strict"})
_BODY_KEYS = frozenset(
    {
        "model",
        "input",
        "instructions",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "max_output_tokens",
        "temperature",
    }
)
_RESPONSE_KEYS = frozenset({"id", "model", "output", "usage", "status", "incomplete_details"})
_USAGE_KEYS = frozenset({"input_tokens", "input_tokens_details", "output_tokens", "total_tokens"})
# The usage object does not count hosted-tool calls, so they are counted from the output items, under the
# names Anthropic uses (``web_search_requests``). Computer and local-shell calls run on the client: not here.
_HOSTED_COUNTS = {
    "web_search_call": "web_search_requests",
    "file_search_call": "file_search_requests",
    "code_interpreter_call": "code_interpreter_requests",
    "image_generation_call": "image_generation_requests",
    "mcp_call": "mcp_requests",
}

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    out: Json = {"type": "function", "name": spec.name}
    if spec.description:
        out["description"] = spec.description
    elif "description" in kept:
        out["description"] = kept["description"]  # spelled "" or null
    out["parameters"] = None if kept.get("null_parameters") else spec.parameters
    if kept.get("null_strict") and spec.strict is None:
        out["strict"] = None
    elif not (spec.strict and kept.get("shape") == "no-strict"):
        out["strict"] = bool(spec.strict)
    return with_fields(out, kept)


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """Function tools as ToolSpecs; a hosted tool raises (``request_from_wire`` keeps those)."""
    return only_specs(split_tools(items, "tools", spec_from_wire), "function")


def spec_from_wire(item: Json, path: str = "tools[0]") -> ToolSpec | None:
    """One ``tools`` entry as a ToolSpec; ``None`` for hosted, MCP, custom and namespace tools."""
    params = item.get("parameters")
    if item.get("type") != "function" or not isinstance(params, dict | None):
        return None
    strict = item.get("strict", True)  # the API's default
    description = text_or_none(item.get("description"), f"{path}.description")
    kept = dict(stash(NAME, leftover(item, _TOOL_KEYS), None if "strict" in item else "no-strict").get(NAME, EMPTY))
    if not description and "description" in item:
        kept["description"] = description
    if params is None:
        kept["null_parameters"] = True
    if "strict" in item and strict is None:
        kept["null_strict"] = True
    return ToolSpec(
        name=need(item, "name", path),
        description=description or "",
        parameters=params if params is not None else {"type": "object"},
        strict=True if strict else None,
        extra={NAME: kept} if kept else EMPTY,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The full JSON body of a ``POST /v1/responses``."""
    settings = request.settings
    if settings.stop:
        raise CannotExpress("the Responses API has no stop sequences; leave Settings.stop empty", "stop")
    messages = list(request.messages)
    body: Json = {"model": request.model} if request.model else {}  # a history may have no model yet
    first = messages[0] if messages else None
    if first is not None and first.role == "system" and unstash(first.extra, NAME).get("shape") == "instructions":
        body["instructions"] = first.text
        messages = messages[1:]
    only = messages[0] if len(messages) == 1 else None
    if only is not None and unstash(only.extra, NAME).get("shape") == "input":
        body["input"] = only.text
    else:
        body["input"] = messages_to_wire(messages)
    add_tools(body, tools_to_wire(request.tools), request, NAME)
    choice = settings.tool_choice
    if choice is not None:
        body["tool_choice"] = {"type": "function", "name": choice.name} if isinstance(choice, UseTool) else choice
    if settings.parallel_tool_calls is not None:
        body["parallel_tool_calls"] = settings.parallel_tool_calls
    if settings.max_tokens is not None:
        body["max_output_tokens"] = settings.max_tokens
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    if settings.extra:
        body.update(settings.extra)
    output_to_wire(NAME, request.output, body)
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = split_tools(data.get("tools") or [], "tools", spec_from_wire, NAME)
    extra = leftover(data, _BODY_KEYS)
    keep_empty(data, extra, ("tools", "max_output_tokens", "temperature", "tool_choice", "parallel_tool_calls"))
    choice = choice_from_wire(data, extra, _tool_choice_from_wire)
    messages = messages_from_wire(data.get("input", []))
    instructions = data.get("instructions")
    if isinstance(instructions, str):
        messages.insert(
            0, Message(role="system", parts=(Text(text=instructions),), extra=stash(NAME, None, "instructions"))
        )
    elif instructions is not None:
        extra["instructions"] = instructions
    output = output_from_wire(NAME, extra)
    return Request(
        model=text_or_none(data.get("model"), "model") or "",
        messages=tuple(messages),
        tools=tuple(tools),
        settings=Settings(
            max_tokens=data.get("max_output_tokens"),
            temperature=data.get("temperature"),
            tool_choice=choice,
            parallel_tool_calls=data.get("parallel_tool_calls"),
            extra=extra,
        ),
        extra_tools=tuple(extra_tools),
        output=output,
    )


def _tool_choice_from_wire(choice: object) -> ToolChoice | None:
    if choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, dict) and choice.keys() == {"type", "name"} and choice["type"] == "function":
        return UseTool(text(choice["name"], "tool_choice.name"))
    return None


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A full ``response`` object."""
    kept = unstash(response.extra, NAME)
    output: list[Json] = []
    items_to_wire(response.message, output, full=True)
    status, incomplete = _status_to_wire(response)
    usage = response.usage
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    details: Json = {**kept.get("input_details", EMPTY), "cached_tokens": usage.cache_read_tokens}
    if usage.cache_write_tokens or not kept.get("no_cache_write"):  # the SDK's type requires it
        details["cache_write_tokens"] = usage.cache_write_tokens
    wire_usage: Json = {
        "output_tokens_details": {"reasoning_tokens": 0},
        **kept.get("usage", EMPTY),
        "input_tokens": prompt,
        "input_tokens_details": details,
        "output_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
    }
    if usage.reasoning_tokens:
        wire_usage["output_tokens_details"] = {
            **(wire_usage["output_tokens_details"] or EMPTY),
            "reasoning_tokens": usage.reasoning_tokens,
        }
    out: Json = {
        "object": "response",
        "created_at": int(time.time()),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **kept.get("fields", EMPTY),
        "id": response.id,
        "model": response.model,
        "status": status,
        "incomplete_details": incomplete,
        "output": output,
    }
    if not kept.get("no_usage"):
        out["usage"] = wire_usage
    drop_absent(out, kept)
    if kept.get("null_output") and not output:
        out["output"] = None
    return out


def _status_to_wire(response: ModelResponse) -> tuple[str, Json | None]:
    raw = response.raw_stop_reason
    if raw in INCOMPLETE or (raw is not None and raw not in _STATUSES and response.stop_reason == "other"):
        return "incomplete", {"reason": raw}
    if raw in _STATUSES and raw != "incomplete":
        return raw, None
    for reason, stop in INCOMPLETE.items():
        if stop == response.stop_reason:
            return "incomplete", {"reason": reason}
    return "completed", None


def response_from_wire(data: object) -> ModelResponse:
    """A ``response`` dict, or the SDK's ``Response`` object, as a ModelResponse."""
    body = obj(data, "response")
    parts: list[Part] = []
    part_kept: dict[str, Json] = {}
    output = body.get("output")
    for m in messages_from_wire(seq(output if output is not None else [], "output"), "output"):  # one message
        for key, value in unstash(m.extra, NAME).get("parts", EMPTY).items():
            part_kept[str(len(parts) + int(key))] = value
        parts += m.parts
    status = body.get("status")
    details = body.get("incomplete_details")
    raw: str | None = status if isinstance(status, str) else None
    stop: StopReason = "other"
    if status == "completed":
        stop = "tool_use" if any(type(p) is ToolCall for p in parts) else "end_turn"
        if any(kept.get("refusal") for kept in part_kept.values()):
            stop = "refusal"
    elif status == "incomplete" and isinstance(details, dict) and isinstance(details.get("reason"), str):
        raw = details["reason"]
        stop = INCOMPLETE.get(raw, "other")
    kept: Json = {"fields": leftover(body, _RESPONSE_KEYS)}
    if "output" in body and output is None:
        kept["null_output"] = True
    defaults = (
        "object",
        "created_at",
        "parallel_tool_calls",
        "tool_choice",
        "tools",
        "incomplete_details",
        "id",
        "model",
    )
    note_absent(kept, body, defaults)
    wire_usage = body.get("usage")
    usage = Usage()
    if wire_usage is None:
        kept["no_usage"] = True
    else:
        wire_usage = obj(wire_usage, "usage")
        details = obj(wire_usage.get("input_tokens_details") or {}, "usage.input_tokens_details")
        cached = details.get("cached_tokens") or 0
        written = details.get("cache_write_tokens") or 0
        reasoning = (wire_usage.get("output_tokens_details") or EMPTY).get("reasoning_tokens") or 0
        usage = Usage(
            input_tokens=(wire_usage.get("input_tokens") or 0) - cached - written,
            output_tokens=wire_usage.get("output_tokens") or 0,
            cache_read_tokens=cached,
            cache_write_tokens=written,
            reasoning_tokens=reasoning,
        )
        kept["input_details"] = leftover(details, frozenset({"cached_tokens", "cache_write_tokens"}))
        if "cache_write_tokens" not in details:
            kept["no_cache_write"] = True
        kept["usage"] = leftover(wire_usage, _USAGE_KEYS)
    hosted: dict[str, int] = {}
    for part in parts:
        if type(part) is ProviderPart and (key := _HOSTED_COUNTS.get(part.data.get("type", ""))):
            hosted[key] = hosted.get(key, 0) + 1
    if hosted:
        usage = replace(usage, server_tool_use=hosted)
    message = Message(
        role="assistant", parts=tuple(parts), extra=stash(NAME, None, None, part_kept, unread_parts(parts, part_kept))
    )
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=usage,
        model=text_or_none(body.get("model"), "model") or "",
        id=text_or_none(body.get("id"), "id") or "",
        raw_stop_reason=raw,
        extra={NAME: kept},
    )
