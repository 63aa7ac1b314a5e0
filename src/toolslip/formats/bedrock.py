"""The Amazon Bedrock Converse wire format (``POST /model/{modelId}/converse``), as pure functions.

What is particular to this format:

- Tools live in ``toolConfig.tools[]`` as ``{"toolSpec": {name, description, inputSchema: {json}, strict}}``;
  other entries (``cachePoint``, ``systemTool``) travel verbatim in ``Request.extra_tools``, in place.
  ``toolConfig.toolChoice`` is ``{"auto": {}}``, ``{"any": {}}`` (required) or ``{"tool": {"name"}}``;
  Converse has no "none" and no parallel-calls switch (``toolslip.convert`` reports both).
- The model is named in the URL, not the body: ``Request.model`` is not written (the transport uses it).
- Messages hold one-key content blocks (see ``_bedrock_blocks``); the system prompt is the top-level
  ``system`` block list, ``cachePoint`` blocks included.
- ``inferenceConfig`` holds ``maxTokens``, ``temperature`` and ``stopSequences``; its other keys
  (``topP``...) travel verbatim.
- ``outputConfig.textFormat`` (``json_schema``, the schema as JSON text) is structured output
  (``Request.output``); only some models on Bedrock honour it (Claude 4.5 and later, some open-weight
  models), the others refuse the request: use a final-answer tool there (``Agent(output_mode='tool')``).
- ``stopReason``: ``end_turn``, ``tool_use``, ``max_tokens``, ``stop_sequence``, ``guardrail_intervened``
  and ``content_filtered`` (read as ``content_filter``), ``malformed_model_output`` and
  ``malformed_tool_use`` (``other``, the word kept), ``model_context_window_exceeded`` (``max_tokens``).
- ``usage``: ``inputTokens`` excludes ``cacheReadInputTokens`` and ``cacheWriteInputTokens``, as Anthropic
  counts. A response has no id and no model name.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..core.messages import Message, ModelResponse, Request, Settings, StopReason, ToolChoice, ToolSpec, Usage, UseTool
from ._bedrock_blocks import NAME as NAME  # re-exported: the format module's public names
from ._bedrock_blocks import message_from_wire, message_to_wire, system_to_wire
from ._bedrock_blocks import messages_from_wire as messages_from_wire
from ._bedrock_blocks import messages_to_wire as messages_to_wire
from ._memo import RecentMemo
from ._wire import (
    BOOKKEEPING,
    EMPTY,
    EMPTY_VALUES,
    Json,
    drop_absent,
    knobs_from_wire,
    knobs_to_wire,
    leftover,
    need,
    note_absent,
    obj,
    only_specs,
    split_tools,
    stop_to_wire,
    take_count,
    text_or_none,
    tool_list,
    unstash,
)
from .structured import output_from_wire, output_to_wire

STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
    "model_context_window_exceeded": "max_tokens",
}
STOP_BACK: dict[StopReason, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "content_filtered",
    "pause_turn": "end_turn",
    "content_filter": "content_filtered",
    "other": "end_turn",
}
_SPEC_KEYS = frozenset({"name", "description", "inputSchema", "strict"})
_BODY_KEYS = frozenset({"messages", "system", "toolConfig", "inferenceConfig"})
_KNOBS = ("maxTokens", "temperature", "stopSequences")
"""Max tokens, temperature and stop sequences in ``inferenceConfig``."""
_RESPONSE_KEYS = frozenset({"output", "stopReason", "usage"})
_USAGE_KEYS = frozenset({"inputTokens", "outputTokens", "totalTokens"})
_QUIET = frozenset({"metrics", "performanceConfig"})
"""Response fields with no content another format could want (latency, the service tier)."""

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    """The ``toolConfig.tools`` entries for ``specs``."""
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    out: Json = {"name": spec.name}
    if spec.description:
        out["description"] = spec.description
    elif "description" in kept:
        out["description"] = kept["description"]
    out["inputSchema"] = {"json": spec.parameters}
    if spec.strict is not None:
        out["strict"] = spec.strict
    fields = kept.get("fields")
    return {"toolSpec": {**fields, **out} if fields else out}


_tools = RecentMemo(tools_to_wire)  # the loop offers the same tuple of specs on every step


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """``toolSpec`` entries as ToolSpecs; any other entry raises (``request_from_wire`` keeps those)."""
    return only_specs(split_tools(items, "toolConfig.tools", spec_from_wire), "toolSpec")


def spec_from_wire(item: Json, path: str = "toolConfig.tools[0]") -> ToolSpec | None:
    """One ``toolConfig.tools`` entry as a ToolSpec; ``None`` for a ``cachePoint`` or ``systemTool`` entry."""
    spec = item.get("toolSpec")
    if item.keys() != {"toolSpec"} or not isinstance(spec, dict):
        return None
    schema = spec.get("inputSchema")
    if not isinstance(schema, dict) or schema.keys() != {"json"}:
        return None
    where = f"{path}.toolSpec"
    description = text_or_none(spec.get("description"), f"{where}.description")
    kept: Json = {}
    if not description and "description" in spec:
        kept["description"] = description
    fields = leftover(spec, _SPEC_KEYS)
    strict = spec.get("strict")
    if strict is not None and not isinstance(strict, bool):
        fields["strict"] = strict  # not Converse's flag: kept verbatim
        strict = None
    if fields:
        kept["fields"] = fields
    return ToolSpec(
        name=need(spec, "name", where),
        description=description or "",
        parameters=obj(schema["json"], f"{where}.inputSchema.json"),
        strict=strict,
        extra={NAME: kept} if kept else EMPTY,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The JSON body of a ``converse`` call (the model id goes in the URL)."""
    settings = request.settings
    body: Json = {"messages": messages_to_wire(request.messages)}
    system = system_to_wire(request.messages)
    if system is not None:
        body["system"] = system
    extra = dict(settings.extra)
    config: Json = dict(extra.pop("toolConfig", None) or EMPTY)
    tools = tool_list(_tools(request.tools), request, NAME)
    if tools:
        config["tools"] = tools
    choice = _choice_to_wire(settings.tool_choice)
    if choice is not None:
        config["toolChoice"] = choice
    if config or "toolConfig" in settings.extra:
        body["toolConfig"] = config
    knobs = knobs_to_wire(settings, extra, "inferenceConfig", _KNOBS)
    if knobs is not None:
        body["inferenceConfig"] = knobs
    body.update(extra)
    output_to_wire(NAME, request.output, body)  # next to outputConfig's other keys, if extra held some
    return body


def _choice_to_wire(choice: ToolChoice | None) -> Json | None:
    if isinstance(choice, UseTool):
        return {"tool": {"name": choice.name}}
    # Converse has no "none": leaving toolChoice out lets the model choose (toolslip.convert reports it).
    return {"auto": {}} if choice == "auto" else {"any": {}} if choice == "required" else None


def _choice_from_wire(choice: object) -> ToolChoice | None:
    if not isinstance(choice, dict) or len(choice) != 1:
        return None
    ((kind, value),) = choice.items()
    if kind == "tool" and isinstance(value, dict) and value.keys() == {"name"} and isinstance(value["name"], str):
        return UseTool(value["name"])
    if value == {}:
        return "auto" if kind == "auto" else "required" if kind == "any" else None
    return None


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    extra = leftover(data, _BODY_KEYS)
    tools: list[ToolSpec] = []
    extra_tools: list[Json] = []
    choice: ToolChoice | None = None
    if "toolConfig" in data:
        config = obj(data["toolConfig"], "toolConfig")
        rest = leftover(config, frozenset({"tools", "toolChoice"}))
        if config.get("tools"):
            tools, extra_tools = split_tools(config["tools"], "toolConfig.tools", spec_from_wire, NAME)
        elif "tools" in config:
            rest["tools"] = config["tools"]  # spelled empty
        if "toolChoice" in config:
            choice = _choice_from_wire(config["toolChoice"])
            if choice is None:
                rest["toolChoice"] = config["toolChoice"]  # kept verbatim
        if rest or not config.get("tools"):
            extra["toolConfig"] = rest
    max_tokens, temperature, stop = knobs_from_wire(data, "inferenceConfig", _KNOBS, extra)
    output = output_from_wire(NAME, extra)
    settings = Settings(
        max_tokens=max_tokens,
        temperature=temperature,
        tool_choice=choice,
        stop=stop,
        extra=extra,
    )
    return Request(
        model="",
        messages=tuple(messages_from_wire(data.get("messages") or [], data.get("system"))),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
        output=output,
    )


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A ``converse`` response object."""
    kept = unstash(response.extra, NAME)
    usage = response.usage
    wire_usage: Json = {
        **kept.get("usage", EMPTY),
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens
        + usage.output_tokens
        + usage.cache_read_tokens
        + usage.cache_write_tokens
        + kept.get("uncounted", 0),
    }
    if usage.cache_read_tokens:
        wire_usage["cacheReadInputTokens"] = usage.cache_read_tokens
    if usage.cache_write_tokens:
        wire_usage["cacheWriteInputTokens"] = usage.cache_write_tokens
    for key in kept.get("usage_absent", ()):
        wire_usage.pop(key, None)
    output: Json = {**kept.get("output", EMPTY)}
    if not kept.get("no_message"):
        output["message"] = message_to_wire(response.message)
    out: Json = {
        **kept.get("fields", EMPTY),
        "output": output,
        "stopReason": stop_to_wire(response, STOP, STOP_BACK),
        "usage": wire_usage,
    }
    drop_absent(out, kept)
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A ``converse`` response dict (or boto3's parsed answer, minus ``ResponseMetadata``) as a ModelResponse."""
    body = obj(data, "response")
    kept: Json = {}
    fields = leftover(body, _RESPONSE_KEYS)
    if fields:
        kept["fields"] = fields
    note_absent(kept, body, ("stopReason", "usage"))
    unread = [k for k, v in fields.items() if k not in _QUIET and k not in BOOKKEEPING and v not in EMPTY_VALUES]
    output = obj(body.get("output") or {}, "output")
    if not output.keys() <= {"message"}:
        kept["output"] = leftover(output, frozenset({"message"}))
    if "message" in output:
        message = message_from_wire(obj(output["message"], "output.message"), "output.message")
        if message.role != "assistant":
            message = Message(role="assistant", parts=message.parts, extra=message.extra)
    else:
        kept["no_message"] = True
        message = Message(role="assistant", parts=())
    raw = body.get("stopReason")
    stop: StopReason = STOP.get(raw, "other") if isinstance(raw, str) else "other"
    if unread:
        kept["unread"] = unread
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=_usage_from_wire(body.get("usage"), kept),
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )


def _usage_from_wire(raw: object, kept: Json) -> Usage:
    if raw is None:
        return Usage()
    wire = obj(raw, "usage")
    rest = leftover(wire, _USAGE_KEYS)
    read = take_count(rest, "cacheReadInputTokens")
    write = take_count(rest, "cacheWriteInputTokens")
    if rest:
        kept["usage"] = rest
    absent = [k for k in ("inputTokens", "outputTokens", "totalTokens") if k not in wire]
    if absent:
        kept["usage_absent"] = absent
    inputs, outputs = wire.get("inputTokens") or 0, wire.get("outputTokens") or 0
    total = wire.get("totalTokens")
    if type(total) is int and total != inputs + outputs + read + write:
        kept["uncounted"] = total - inputs - outputs - read - write
    return Usage(input_tokens=inputs, output_tokens=outputs, cache_read_tokens=read, cache_write_tokens=write)
