"""The Gemini wire format (``POST /v1beta/models/{model}:generateContent``), as pure functions.

What is particular to this format:

- Tools are ``tools[].functionDeclarations[]`` of ``{name, description, parameters}``, where
  ``parameters`` is Gemini's OpenAPI subset of JSON Schema (translated by ``toolslip.formats.gemini_schema``)
  or ``parametersJsonSchema`` is full JSON Schema. A schema that does not fit the subset is written as
  ``parametersJsonSchema``, so nothing is lost. Built-in tools (``googleSearch``, ``codeExecution``,
  ``urlContext``...) are other ``tools`` entries, kept verbatim in ``Request.extra_tools``.
- The model is named in the URL, not the body: ``Request.model`` is not written (the transport uses it).
- Messages are ``contents`` (see ``_gemini_parts``); the system prompt is ``systemInstruction``.
- ``toolConfig.functionCallingConfig`` is ``tool_choice``: ``AUTO`` auto, ``NONE`` none, ``ANY`` required,
  ``ANY`` with one ``allowedFunctionNames`` entry a named tool; other spellings (``VALIDATED``, several
  names) travel verbatim. There is no parallel-calls switch.
- ``generationConfig`` holds ``maxOutputTokens``, ``temperature`` and ``stopSequences``, and structured
  output (``responseMimeType: "application/json"`` with ``responseJsonSchema``, or the older
  ``responseSchema``: ``Request.output``, see ``toolslip.formats.structured``); its other keys travel verbatim.
- ``finishReason`` ``STOP`` covers tool calls too (read as ``tool_use`` when the answer holds calls);
  ``MALFORMED_FUNCTION_CALL`` (the model wrote a call that does not parse) reads as ``other`` with the raw
  word kept, so the loop can tell the model. Some SDKs record the proto enum's number; it goes back as
  a number.
- ``usageMetadata``: ``promptTokenCount`` includes ``cachedContentTokenCount``; ``thoughtsTokenCount``
  is reasoning, counted in neutral ``output_tokens`` next to ``candidatesTokenCount``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import FormatError
from ..core.messages import Message, ModelResponse, Request, Settings, StopReason, ToolChoice, ToolSpec, Usage, UseTool
from ._gemini_media import camel, snake
from ._gemini_parts import NAME as NAME  # re-exported: the format module's public names
from ._gemini_parts import _Calls, _content_to_wire, content_from_wire, system_to_wire
from ._gemini_parts import messages_from_wire as messages_from_wire
from ._gemini_parts import messages_to_wire as messages_to_wire
from ._memo import RecentMemo
from ._pairing import Pairing, response_call_id
from ._wire import (
    EMPTY,
    EMPTY_VALUES,
    Json,
    _in_place,
    drop_absent,
    knobs_from_wire,
    knobs_to_wire,
    leftover,
    need,
    note_absent,
    obj,
    seq,
    stop_to_wire,
    take_count,
    text_or_none,
    unstash,
)
from .gemini_schema import from_gemini, to_gemini
from .server_tools import render as render_server_tools
from .structured import output_from_wire, output_to_wire

FINISH: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter",
}
FINISH_BACK: dict[StopReason, str] = {
    "end_turn": "STOP",
    "tool_use": "STOP",
    "max_tokens": "MAX_TOKENS",
    "stop_sequence": "STOP",
    "refusal": "SAFETY",
    "pause_turn": "STOP",
    "content_filter": "SAFETY",
    "other": "OTHER",
}
_FINISH_NUMBERS = (
    "FINISH_REASON_UNSPECIFIED",
    "STOP",
    "MAX_TOKENS",
    "SAFETY",
    "RECITATION",
    "OTHER",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "MALFORMED_FUNCTION_CALL",
    "IMAGE_SAFETY",
)
"""The proto enum ``FinishReason`` by number, as some SDKs record it."""
_MODES: dict[str, ToolChoice] = {"AUTO": "auto", "ANY": "required", "NONE": "none"}
_MODES_BACK = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
_BODY_KEYS = frozenset({"contents", "systemInstruction", "tools", "toolConfig", "generationConfig"})
_KNOBS = ("maxOutputTokens", "temperature", "stopSequences")
"""Max tokens, temperature and stop sequences in ``generationConfig``."""
_RESPONSE_KEYS = frozenset({"candidates", "usageMetadata", "modelVersion", "responseId"})
_USAGE_KEYS = frozenset({"promptTokenCount", "candidatesTokenCount", "totalTokenCount"})
_QUIET = frozenset({"createTime", "index", "avgLogprobs", "modelStatus"})
"""Response and candidate fields that carry no content another format could want (and ``finishMessage`` on a
STOP, which only explains the ordinary stop: "Model generated function call(s)."; on a MALFORMED_FUNCTION_CALL
it holds the call the model botched, and is reported)."""

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    """The ``tools`` entries for ``specs``: one ``functionDeclarations`` entry, or the entries they came in."""
    groups: dict[Any, list[Json]] = {}
    entries: dict[Any, Mapping[str, Any]] = {}
    for spec in specs:
        kept = unstash(spec.extra, NAME)
        group = kept.get("group")
        groups.setdefault(group, []).append(declaration_to_wire(spec))
        if "entry" in kept:
            entries[group] = kept["entry"]
    out = []
    for group, declarations in groups.items():
        entry = entries.get(group, EMPTY)
        wire: Json = {**entry.get("fields", EMPTY), "functionDeclarations": declarations}
        out.append(snake(wire, entry.get("snake")))
    return out


_tools = RecentMemo(tools_to_wire)  # the loop offers the same tuple of specs on every step


def declaration_to_wire(spec: ToolSpec) -> Json:
    """One ``functionDeclarations`` entry."""
    kept = unstash(spec.extra, NAME)
    out: Json = {"name": spec.name}
    if spec.description:
        out["description"] = spec.description
    elif "description" in kept:
        out["description"] = kept["description"]  # spelled "" or null
    if kept.get("shape") != "absent":
        schema = kept.get("schema")
        if kept.get("json"):
            out["parametersJsonSchema"] = spec.parameters
        elif schema is not None and from_gemini(schema) == spec.parameters:
            out["parameters"] = schema  # as it was read (lower-case types, proto numbers...)
        else:
            key, value = parameters_to_wire(spec.parameters)
            if key:
                out[key] = value
    fields = kept.get("fields")
    return snake({**fields, **out} if fields else out, kept.get("snake"))


def parameters_to_wire(schema: Mapping[str, Any]) -> tuple[str, Any]:
    """(key, value) for a declaration's schema: ``parameters`` when it fits Gemini's subset exactly,
    ``parametersJsonSchema`` when not, and ``("", None)`` for an object with no properties, which Gemini
    takes as a function without parameters (it refuses an ``OBJECT`` with empty ``properties``)."""
    if not schema.get("properties") and schema.keys() <= {"type", "properties", "required", "additionalProperties"}:
        return "", None
    translated, changes = to_gemini(schema)
    return ("parametersJsonSchema", schema) if changes else ("parameters", translated)


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    """The function declarations of a ``tools`` list; a built-in tool raises (``request_from_wire`` keeps those)."""
    specs, others = split_tools(items, "tools")
    if others:
        raise FormatError(f"not a function tool: {others[0]!r}; request_from_wire keeps such tools", "tools")
    return specs


def split_tools(items: object, path: str) -> tuple[list[ToolSpec], list[Json]]:
    """A ``tools`` list as the specs of its ``functionDeclarations`` and the other entries, verbatim."""
    specs: list[ToolSpec] = []
    others: list[Json] = []
    for i, raw in enumerate(seq(items, path)):
        original = obj(raw, f"{path}[{i}]")
        entry, snaked = camel(original)
        declarations = entry.get("functionDeclarations")
        if not isinstance(declarations, list) or not declarations:
            others.append(original)  # googleSearch, codeExecution, urlContext, retrieval...
            continue
        kept: Json = {"group": i}
        if snaked or len(entry) > 1:
            kept["entry"] = {"fields": leftover(entry, frozenset({"functionDeclarations"})), "snake": snaked}
        for j, item in enumerate(declarations):
            spec = spec_from_wire(obj(item, f"{path}[{i}].functionDeclarations[{j}]"), f"{path}[{i}]")
            extra = {**unstash(spec.extra, NAME), **kept}
            specs.append(
                ToolSpec(name=spec.name, description=spec.description, parameters=spec.parameters, extra={NAME: extra})
            )
            kept = {"group": i}  # the entry's own fields go back once
    return specs, others


def spec_from_wire(item: Json, path: str = "tools[0]") -> ToolSpec:
    """One function declaration as a ToolSpec (JSON Schema parameters; the wire schema kept if needed)."""
    data, snaked = camel(item)
    kept: Json = {}
    if "parametersJsonSchema" in data:
        parameters = obj(data["parametersJsonSchema"], f"{path}.parametersJsonSchema")
        known = "parametersJsonSchema"
        kept["json"] = True
    elif "parameters" in data:
        schema = data["parameters"]
        parameters = obj(from_gemini(schema), f"{path}.parameters")
        known = "parameters"
        if parameters_to_wire(parameters) != ("parameters", schema):
            kept["schema"] = schema
    else:
        parameters, known = {"type": "object"}, ""
        kept["shape"] = "absent"
    description = text_or_none(data.get("description"), f"{path}.description")
    if not description and "description" in data:
        kept["description"] = description
    fields = leftover(data, frozenset({"name", "description", known}))
    if fields:
        kept["fields"] = fields
    if snaked:
        kept["snake"] = snaked
    return ToolSpec(
        name=need(data, "name", path),
        description=description or "",
        parameters=parameters,
        extra={NAME: kept} if kept else EMPTY,
    )


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The JSON body of a ``generateContent`` call (the model goes in the URL)."""
    settings = request.settings
    body: Json = {"contents": messages_to_wire(request.messages)}
    system = system_to_wire(request.messages)
    if system is not None:
        body["systemInstruction"] = system
    tools = _tool_entries(request)
    if tools:
        one = len(tools) == 1 and unstash(request.tools[0].extra, NAME).get("one") if request.tools else False
        body["tools"] = tools[0] if one else tools
    extra = dict(settings.extra)
    config = extra.pop("toolConfig", None)
    if settings.tool_choice is not None or config is not None:
        body["toolConfig"] = {**(config or EMPTY), **_choice_to_wire(settings.tool_choice)}
    knobs = knobs_to_wire(settings, extra, "generationConfig", _KNOBS)
    if knobs is not None:
        body["generationConfig"] = knobs
    body.update(extra)
    output_to_wire(NAME, request.output, body)  # after the knobs: it joins a generationConfig they began
    return body


def _tool_entries(request: Request) -> list[Any]:
    entries = _tools(request.tools)
    if not request.server_tools and not request.extra_tools:
        return list(entries)
    others: list[Mapping[str, Any]] = [*render_server_tools(request.server_tools, NAME), *request.extra_tools]
    groups = list(dict.fromkeys(unstash(s.extra, NAME).get("group") for s in request.tools))
    return _in_place(entries, groups, others)


def _choice_to_wire(choice: ToolChoice | None) -> Json:
    if choice is None:
        return {}
    if isinstance(choice, UseTool):
        return {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [choice.name]}}
    return {"functionCallingConfig": {"mode": _MODES_BACK[choice]}}


def _choice_from_wire(config: Json) -> ToolChoice | None:
    """The neutral tool_choice of a ``functionCallingConfig``; ``None`` for a spelling kept verbatim."""
    fcc = config.get("functionCallingConfig")
    if not isinstance(fcc, dict) or not fcc.keys() <= {"mode", "allowedFunctionNames"}:
        return None
    mode, names = fcc.get("mode"), fcc.get("allowedFunctionNames")
    if mode == "ANY" and isinstance(names, list) and len(names) == 1 and isinstance(names[0], str):
        return UseTool(names[0])
    return _MODES.get(mode) if isinstance(mode, str) and names is None else None


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    raw_tools = data.get("tools")
    one = isinstance(raw_tools, dict)  # one entry, not in a list: the service takes that too
    tools, extra_tools = split_tools([raw_tools] if one else raw_tools or [], "tools")
    if one and tools:
        tools[0] = replace(tools[0], extra={NAME: {**unstash(tools[0].extra, NAME), "one": True}})
    extra = leftover(data, _BODY_KEYS)
    if "tools" in data and data["tools"] in EMPTY_VALUES:
        extra["tools"] = data["tools"]
    choice: ToolChoice | None = None
    if "toolConfig" in data:
        config = obj(data["toolConfig"], "toolConfig")
        choice = _choice_from_wire(config)
        rest = config if choice is None else leftover(config, frozenset({"functionCallingConfig"}))
        if rest or choice is None:
            extra["toolConfig"] = rest
    max_tokens, temperature, stop = knobs_from_wire(data, "generationConfig", _KNOBS, extra)
    output = output_from_wire(NAME, extra)
    settings = Settings(
        max_tokens=max_tokens,
        temperature=temperature,
        tool_choice=choice,
        stop=stop,
        extra=extra,
    )
    named = extra.get("model")  # the Go SDK also names the model in the body ("models/gemini-2.0-flash")
    return Request(
        model=named.removeprefix("models/") if isinstance(named, str) else "",
        messages=tuple(messages_from_wire(data.get("contents") or [], data.get("systemInstruction"))),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
        output=output,
    )


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A ``GenerateContentResponse`` object."""
    kept = unstash(response.extra, NAME)
    candidate: Json = dict(kept.get("candidate", EMPTY))
    if not kept.get("no_content"):
        candidate["content"] = _content_to_wire(response.message, _Calls())
    if not kept.get("no_finish"):
        word = stop_to_wire(response, FINISH, FINISH_BACK)
        number = kept.get("finish")
        same = type(number) is int and 0 <= number < len(_FINISH_NUMBERS) and _FINISH_NUMBERS[number] == word
        candidate["finishReason"] = number if same else word
    out: Json = {
        **kept.get("fields", EMPTY),
        "candidates": [candidate, *kept.get("more", ())],
        "usageMetadata": _usage_to_wire(response.usage, kept),
        "modelVersion": response.model,
        "responseId": response.id,
    }
    drop_absent(out, kept)
    return out


def _usage_to_wire(usage: Usage, kept: Mapping[str, Any]) -> Json:
    prompt = usage.input_tokens + usage.cache_read_tokens
    out: Json = {
        **kept.get("usage", EMPTY),
        "promptTokenCount": prompt,
        "candidatesTokenCount": usage.output_tokens - usage.reasoning_tokens,
        "totalTokenCount": prompt + usage.output_tokens + kept.get("uncounted", 0),
    }
    if usage.reasoning_tokens:
        out["thoughtsTokenCount"] = usage.reasoning_tokens
    if usage.cache_read_tokens:
        out["cachedContentTokenCount"] = usage.cache_read_tokens
    for key in kept.get("usage_absent", ()):
        out.pop(key, None)
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A ``GenerateContentResponse`` dict (or the SDK's object) as a ModelResponse; the first candidate."""
    body = obj(data, "response")
    kept: Json = {}
    fields = leftover(body, _RESPONSE_KEYS)
    if fields:
        kept["fields"] = fields
    note_absent(kept, body, ("candidates", "usageMetadata", "modelVersion", "responseId"))
    unread = [k for k in fields if k not in _QUIET and fields[k] not in EMPTY_VALUES]  # promptFeedback...
    candidates = seq(body.get("candidates") or [], "candidates")
    candidate = obj(candidates[0], "candidates[0]") if candidates else {}
    if len(candidates) > 1:
        kept["more"] = candidates[1:]
        unread.append("candidates[1:]")
    rest = leftover(candidate, frozenset({"content", "finishReason"}))
    if rest:
        kept["candidate"] = rest
        quiet = _QUIET | {"finishMessage"} if candidate.get("finishReason") == "STOP" else _QUIET
        unread += [f"candidates[0].{k}" for k in rest if k not in quiet and rest[k] not in EMPTY_VALUES]
    response_id = text_or_none(body.get("responseId"), "responseId") or ""
    content = candidate.get("content")
    if content is None:
        kept["no_content"] = True
        message = Message(role="assistant", parts=())
    else:
        wire = obj(content, "candidates[0].content")
        message = content_from_wire(
            wire, "candidates[0].content", Pairing(), 0, lambda k: response_call_id(response_id, k)
        )
        if message.role != "assistant":
            message = Message(role="assistant", parts=message.parts, extra=message.extra)
    raw = candidate.get("finishReason")
    if "finishReason" not in candidate:
        kept["no_finish"] = True
    if type(raw) is int:
        kept["finish"] = raw
        raw = _FINISH_NUMBERS[raw] if 0 <= raw < len(_FINISH_NUMBERS) else str(raw)
    stop: StopReason = FINISH.get(raw, "other") if isinstance(raw, str) else "end_turn"
    if stop == "end_turn" and message.tool_calls:
        stop = "tool_use"
    if unread:
        kept["unread"] = unread
    model = text_or_none(body.get("modelVersion"), "modelVersion") or ""
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=_usage_from_wire(body.get("usageMetadata"), kept),
        model=model,
        id=response_id,
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )


def _usage_from_wire(raw: object, kept: Json) -> Usage:
    if raw is None:
        return Usage()
    wire = obj(raw, "usageMetadata")
    rest = leftover(wire, _USAGE_KEYS)
    thoughts = take_count(rest, "thoughtsTokenCount")
    cached = take_count(rest, "cachedContentTokenCount")
    prompt = wire.get("promptTokenCount") or 0
    candidates = wire.get("candidatesTokenCount") or 0
    if rest:
        kept["usage"] = rest
    absent = [k for k in ("promptTokenCount", "candidatesTokenCount", "totalTokenCount") if k not in wire]
    if absent:
        kept["usage_absent"] = absent
    total = wire.get("totalTokenCount")
    if type(total) is int and total != prompt + candidates + thoughts:
        kept["uncounted"] = total - prompt - candidates - thoughts  # toolUsePromptTokenCount...
    return Usage(
        input_tokens=prompt - cached,
        output_tokens=candidates + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )
