"""The Ollama native chat wire format (``POST /api/chat``), as pure functions.

What is particular to this format:

- Tools are declared as OpenAI Chat declares them (``{"type": "function", "function": {...}}``).
- A message is ``{role, content, thinking, images, tool_calls}``: ``content`` is one string, ``thinking``
  the model's reasoning (a neutral Reasoning part), ``images`` base64 strings without a media type.
- ``tool_calls[].function.arguments`` is an object, not JSON text. Older servers send no call ``id``:
  one is made up (see ``_pairing``) and left out again on writing.
- A result is its own message ``{"role": "tool", "content": ..., "tool_name": ...}``, with no call id on
  older servers: it is paired with the previous assistant turn's calls by name (by order when there is
  no ``tool_name`` either), checked. Consecutive tool messages are one neutral ``tool`` message, and back.
  There is no error flag: an error result's content starts with ``"Error: "``, as for OpenAI.
- Knobs live in ``options`` (``temperature``, ``num_predict`` = max tokens, ``stop``; others verbatim).
- ``format`` holding a JSON Schema is structured output (``Request.output``); ``format: "json"`` (any JSON)
  travels verbatim.
- A response is ``{model, created_at, message, done, done_reason, prompt_eval_count, eval_count, ...}``:
  ``done_reason`` ``stop`` (``tool_use`` when the answer holds calls) or ``length``; it has no id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

import orjson

from ..core.errors import FormatError
from ..core.messages import (
    Image,
    Message,
    ModelResponse,
    Part,
    Reasoning,
    Request,
    Role,
    Settings,
    StopReason,
    Text,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from ._memo import RecentMemo
from ._pairing import MADE_UP, Pairing, history_call_id, response_call_id
from ._wire import (
    EMPTY,
    EMPTY_VALUES,
    Json,
    drop_absent,
    keep_empty,
    knobs_from_wire,
    knobs_to_wire,
    leftover,
    mark_error,
    need,
    note_absent,
    obj,
    only_specs,
    seq,
    split_tools,
    stop_to_wire,
    text_or_none,
    tool_list,
    unstash,
    with_fields,
)
from .structured import output_from_wire, output_to_wire

NAME = "ollama"

DONE: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}
DONE_BACK: dict[StopReason, str] = {
    "end_turn": "stop",
    "tool_use": "stop",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "stop",
    "pause_turn": "stop",
    "content_filter": "stop",
    "other": "stop",
}
_MESSAGE_KEYS = frozenset({"role", "content", "thinking", "images", "tool_calls"})
_RESULT_KEYS = frozenset({"role", "content", "tool_name", "tool_call_id"})
_CALL_KEYS = frozenset({"id", "function"})
_FUNCTION_KEYS = frozenset({"name", "arguments"})
_BODY_KEYS = frozenset({"model", "messages", "tools", "options"})
_KNOBS = ("num_predict", "temperature", "stop")
"""Max tokens, temperature and stop sequences in ``options``."""
_RESPONSE_KEYS = frozenset({"model", "message", "done", "done_reason", "prompt_eval_count", "eval_count"})
_QUIET = frozenset(
    {"created_at", "total_duration", "load_duration", "prompt_eval_duration", "eval_duration", "context"}
)
_IMAGE_MAGIC = {"iVBOR": "image/png", "/9j/": "image/jpeg", "R0lG": "image/gif", "UklG": "image/webp"}

# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    return [_tool_to_wire(spec) for spec in specs]


def _tool_to_wire(spec: ToolSpec) -> Json:
    kept = unstash(spec.extra, NAME)
    fn: Json = {"name": spec.name}
    if spec.description:
        fn["description"] = spec.description
    elif "description" in kept:
        fn["description"] = kept["description"]
    fn["parameters"] = spec.parameters
    return {**kept.get("tool", EMPTY), "type": "function", "function": with_fields(fn, kept)}


_tools = RecentMemo(tools_to_wire)  # the loop offers the same tuple of specs on every step


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    return only_specs(split_tools(items, "tools", spec_from_wire), "function")


def spec_from_wire(item: Json, path: str = "tools[0]") -> ToolSpec | None:
    """One ``tools`` entry as a ToolSpec; ``None`` when it is not a function tool."""
    fn = item.get("function")
    if item.get("type") != "function" or not isinstance(fn, dict) or "parameters" not in fn:
        return None
    where = f"{path}.function"
    description = text_or_none(fn.get("description"), f"{where}.description")
    kept: Json = {}
    if not description and "description" in fn:
        kept["description"] = description
    fields = leftover(fn, frozenset({"name", "description", "parameters"}))
    if fields:
        kept["fields"] = fields
    if item.keys() != {"type", "function"}:
        kept["tool"] = leftover(item, frozenset({"type", "function"}))
    return ToolSpec(
        name=need(fn, "name", where),
        description=description or "",
        parameters=obj(fn["parameters"], f"{where}.parameters"),
        extra={NAME: kept} if kept else EMPTY,
    )


# --- messages ---------------------------------------------------------------------------------------


def messages_from_wire(items: object, path: str = "messages") -> list[Message]:
    out: list[Message] = []
    pairing = Pairing()
    for i, raw in enumerate(seq(items, path)):
        where = f"{path}[{i}]"
        data = obj(raw, where)
        role = data.get("role")
        if role == "tool":
            result, kept = _result_from_wire(data, where, pairing)
            last = out[-1] if out else None
            if last is not None and last.role == "tool" and unstash(last.extra, NAME).get("tool"):
                out[-1] = _with_result(last, result, kept)
            else:
                out.append(Message(role="tool", parts=(result,), extra={NAME: {"tool": True, "parts": {"0": kept}}}))
            continue
        if role not in ("system", "user", "assistant"):
            raise FormatError(f"unknown role {role!r}; expected system, user, assistant or tool", f"{where}.role")
        message = message_from_wire(data, where, partial(history_call_id, i))
        pairing.turn(message.tool_calls)
        out.append(message)
    return out


def _with_result(message: Message, result: ToolResult, kept: Json) -> Message:
    stashed = unstash(message.extra, NAME)
    parts = {**stashed["parts"], str(len(message.parts)): kept}
    return replace(message, parts=(*message.parts, result), extra={NAME: {**stashed, "parts": parts}})


def _result_from_wire(data: Json, where: str, pairing: Pairing) -> tuple[ToolResult, Json]:
    """A tool message as a result, plus what writing it back needs."""
    content = data.get("content")
    name = text_or_none(data.get("tool_name"), f"{where}.tool_name")
    call_id = text_or_none(data.get("tool_call_id"), f"{where}.tool_call_id")
    kept: Json = {}
    if call_id is None:
        call_id = pairing.take(name, where)
        kept[MADE_UP] = True
    else:
        pairing.close(call_id)
    if "content" not in data:
        kept["~content"] = "absent"
    if name is None:
        kept["~noname"] = True  # written back without one, though its call's name is known
    fields = leftover(data, _RESULT_KEYS)
    if fields:
        kept["fields"] = fields
    text = content if isinstance(content, str) else "" if content is None else None
    if text is None:
        raise FormatError("expected a string", f"{where}.content")
    return ToolResult(call_id=call_id, content=text, name=name), kept


def message_from_wire(data: Json, where: str, make_id: Callable[[int], str] | None = None) -> Message:
    """A system, user or assistant message; calls without ids get ``make_id(k)``."""
    role = data.get("role")
    parts: list[Part] = []
    kept: Json = {}
    thinking = data.get("thinking")
    if isinstance(thinking, str) and thinking:
        parts.append(Reasoning(text=thinking, source=NAME))
    content = data.get("content")
    if isinstance(content, str) and content:
        parts.append(Text(text=content))
    elif "content" not in data:
        kept["content"] = "absent"
    elif content != "":
        raise FormatError("expected a string", f"{where}.content")
    for j, image in enumerate(seq(data.get("images") or [], f"{where}.images")):
        if not isinstance(image, str):
            raise FormatError("expected a base64 string", f"{where}.images[{j}]")
        parts.append(Image(media_type=_media_type(image), data=image))
    calls: list[Json] = []
    for k, raw in enumerate(seq(data.get("tool_calls") or [], f"{where}.tool_calls")):
        call, call_kept = _call_from_wire(obj(raw, f"{where}.tool_calls[{k}]"), f"{where}.tool_calls[{k}]")
        if call_kept.get(MADE_UP):
            call = replace(call, id=make_id(k) if make_id else history_call_id(0, k))
        parts.append(call)
        calls.append(call_kept)
    if any(calls):
        kept["calls"] = calls
    fields = leftover(data, _MESSAGE_KEYS)
    keep_empty(data, fields, ("thinking", "images", "tool_calls"))
    if fields:
        kept["fields"] = fields
        unread = [k for k, v in fields.items() if v not in EMPTY_VALUES and k not in ("thinking", "images")]
        if unread:
            kept["unread"] = unread
    neutral: Role = "system" if role == "system" else "user" if role == "user" else "assistant"
    return Message(role=neutral, parts=tuple(parts), extra={NAME: kept} if kept else EMPTY)


def _media_type(data: str) -> str:
    """An image's media type from the first bytes of its base64 (Ollama sends none)."""
    return next((kind for magic, kind in _IMAGE_MAGIC.items() if data.startswith(magic)), "image/*")


def _call_from_wire(call: Json, where: str) -> tuple[ToolCall, Json]:
    fn = obj(call.get("function"), f"{where}.function")
    args = fn.get("arguments")
    kept: Json = {}
    call_id = text_or_none(call.get("id"), f"{where}.id")
    if call_id is None:
        kept[MADE_UP] = True
    if not call.keys() <= _CALL_KEYS:
        kept["call"] = leftover(call, _CALL_KEYS)
    if not fn.keys() <= _FUNCTION_KEYS:
        kept["function"] = leftover(fn, _FUNCTION_KEYS)  # index
    if not isinstance(args, dict):
        kept["arguments"] = args
    parsed = ToolCall(
        id=call_id or "",
        name=need(fn, "name", f"{where}.function"),
        arguments=args if isinstance(args, dict) else None,
        raw_arguments=None if isinstance(args, dict) else orjson.dumps(args).decode(),
    )
    return parsed, kept


def messages_to_wire(messages: Iterable[Message]) -> list[Json]:
    out: list[Json] = []
    made_up: set[str] = set()
    names: dict[str, str] = {}  # a result from a format that does not name its tool gets its call's name
    for message in messages:
        if message.role == "tool":
            out += _results_to_wire(message, made_up, names)
        else:
            out.append(message_to_wire(message, made_up))
            names.update((c.id, c.name) for c in message.tool_calls)
    return out


def message_to_wire(message: Message, made_up: set[str] | None = None) -> Json:
    """A system, user or assistant message (results: see :func:`messages_to_wire`)."""
    kept = unstash(message.extra, NAME)
    out: Json = {"role": message.role}
    text = "".join(p.text for p in message.parts if type(p) is Text)
    if text or kept.get("content") != "absent":
        out["content"] = text
    thinking = "".join(p.text for p in message.parts if type(p) is Reasoning)
    if thinking:
        out["thinking"] = thinking
    images = [p.data for p in message.parts if type(p) is Image and p.data is not None]
    if images:
        out["images"] = images
    calls = [p for p in message.parts if type(p) is ToolCall]
    if calls:
        call_kept = kept.get("calls") or [EMPTY] * len(calls)
        out["tool_calls"] = [
            _call_to_wire(c, call_kept[k] if k < len(call_kept) else EMPTY, made_up) for k, c in enumerate(calls)
        ]
    fields = kept.get("fields")
    return {**fields, **out} if fields else out


def _call_to_wire(call: ToolCall, kept: Mapping[str, Any], made_up: set[str] | None) -> Json:
    args = call.arguments if call.arguments is not None else kept.get("arguments", {})
    out: Json = {"function": {**kept.get("function", EMPTY), "name": call.name, "arguments": args}}
    if kept.get(MADE_UP):
        if made_up is not None:
            made_up.add(call.id)
    else:
        out["id"] = call.id
    return {**kept.get("call", EMPTY), **out}


def _results_to_wire(message: Message, made_up: set[str], names: Mapping[str, str]) -> list[Json]:
    """One tool message per result; text and image parts of the neutral message (Anthropic lets them follow the
    results in one user message) go in a user message after them."""
    part_kept = unstash(message.extra, NAME).get("parts", EMPTY)
    out: list[Json] = []
    texts: list[str] = []
    images: list[str] = []
    for i, part in enumerate(message.parts):
        if type(part) is not ToolResult:
            if type(part) is Text:
                texts.append(part.text)
            elif type(part) is Image and part.data is not None:
                images.append(part.data)
            continue
        kept = part_kept.get(str(i), EMPTY)
        content = mark_error(part.text) if part.is_error else part.text
        wire: Json = {"role": "tool"}
        if content or kept.get("~content") != "absent":
            wire["content"] = content
        name = part.name or (None if kept.get("~noname") else names.get(part.call_id))
        if name is not None:
            wire["tool_name"] = name
        if not kept.get(MADE_UP) and part.call_id not in made_up:
            wire["tool_call_id"] = part.call_id
        out.append({**kept.get("fields", EMPTY), **wire})
    if texts or images:
        after: Json = {"role": "user", "content": "".join(texts)}
        if images:
            after["images"] = images
        out.append(after)
    return out


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request) -> Json:
    """The JSON body of a ``POST /api/chat``."""
    settings = request.settings
    body: Json = {"model": request.model} if request.model else {}
    body["messages"] = messages_to_wire(request.messages)
    tools = tool_list(_tools(request.tools), request, NAME)
    if tools:
        body["tools"] = tools
    extra = dict(settings.extra)
    knobs = knobs_to_wire(settings, extra, "options", _KNOBS)
    if knobs is not None:
        body["options"] = knobs
    body.update(extra)
    output_to_wire(NAME, request.output, body)
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    tools, extra_tools = split_tools(data.get("tools") or [], "tools", spec_from_wire, NAME)
    extra = leftover(data, _BODY_KEYS)
    keep_empty(data, extra, ("tools",))
    max_tokens, temperature, stop = knobs_from_wire(data, "options", _KNOBS, extra)
    output = output_from_wire(NAME, extra)
    settings = Settings(
        max_tokens=max_tokens,
        temperature=temperature,
        stop=stop,
        extra=extra,
    )
    return Request(
        model=text_or_none(data.get("model"), "model") or "",
        messages=tuple(messages_from_wire(data.get("messages") or [])),
        tools=tuple(tools),
        settings=settings,
        extra_tools=tuple(extra_tools),
        output=output,
    )


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A ``/api/chat`` answer (``done: true``)."""
    kept = unstash(response.extra, NAME)
    usage = response.usage
    out: Json = {
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        **kept.get("fields", EMPTY),
        "model": response.model,
        "message": message_to_wire(response.message),
        "done": True,
        "done_reason": stop_to_wire(response, DONE, DONE_BACK),
        # Ollama counts every prompt token here; it has no cache fields (toolslip.convert reports them).
        "prompt_eval_count": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        "eval_count": usage.output_tokens,
    }
    drop_absent(out, kept)
    return out


def response_from_wire(data: object) -> ModelResponse:
    """A ``/api/chat`` answer dict (or the ``ollama`` SDK's ``ChatResponse``) as a ModelResponse."""
    body = obj(data, "response")
    kept: Json = {}
    fields = leftover(body, _RESPONSE_KEYS)
    if body.get("done") is not True and "done" in body:
        fields["done"] = body["done"]
    if fields:
        kept["fields"] = fields
    note_absent(kept, body, ("model", "created_at", "done", "done_reason", "prompt_eval_count", "eval_count"))
    unread = [k for k, v in fields.items() if k not in _QUIET and k != "done" and v not in EMPTY_VALUES]
    if unread:
        kept["unread"] = unread
    created = body.get("created_at")
    seed = created if isinstance(created, str) else ""
    message = message_from_wire(
        obj(body.get("message") or {"role": "assistant"}, "message"), "message", lambda k: response_call_id(seed, k)
    )
    if message.role != "assistant":
        message = Message(role="assistant", parts=message.parts, extra=message.extra)
    raw = body.get("done_reason")
    stop: StopReason = DONE.get(raw, "other") if isinstance(raw, str) else "end_turn"
    if stop == "end_turn" and message.tool_calls:
        stop = "tool_use"
    return ModelResponse(
        message=message,
        stop_reason=stop,
        usage=Usage(input_tokens=body.get("prompt_eval_count") or 0, output_tokens=body.get("eval_count") or 0),
        model=text_or_none(body.get("model"), "model") or "",
        raw_stop_reason=raw if isinstance(raw, str) else None,
        extra={NAME: kept},
    )
