"""OpenAI's legacy function calling (June 2023, ``gpt-4-0613`` era), as pure functions.

It is Chat Completions before tool calls existed, so this module translates to and from the
``openai-chat`` spelling and lets that module do the rest (content parts, images, usage, stop words):

- Declarations are ``functions: [{name, description, parameters}]`` (no wrapper, no ``strict``);
  the choice is ``function_call: "auto" | "none" | {"name": ...}`` (there is no "required").
- An assistant message carries at most one ``function_call: {name, arguments}``, with no id.
- A result is a ``role: "function"`` message paired by ``name``, with no id and no error flag.

What it cannot express is never dropped quietly. Several calls in one assistant message raise
:class:`~toolslip.core.errors.CannotExpress`, unless the caller passes ``split=True``: then each call becomes its
own assistant turn followed by its result (the model sees a sequence instead of a batch). Coming back,
call ids are re-created deterministically from the name, the arguments and how many identical calls came
before, so reading the same body twice gives the same ids, a reply keeps its call's id when it comes back
in the next request's history, and results pair with their calls.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import CannotExpress, FormatError
from ..core.messages import Message, ModelResponse, Request, Settings, ToolSpec, UseTool
from . import openai_chat as chat
from ._wire import Json, leftover, need, obj, seq
from .server_tools import render as render_server_tools
from .structured import output_to_wire

NAME = "openai-functions"

_BODY_KEYS = frozenset({"functions", "function_call"})


def call_id(name: str, arguments: str, repeat: int = 0) -> str:
    """The id of the ``repeat``-th (from 0) call of ``name`` with exactly ``arguments`` in one history."""
    digest = hashlib.sha1(f"{repeat}\0{name}\0{arguments}".encode()).hexdigest()[:16]
    return f"call_{digest}"


# --- the stash: what openai_chat keeps, kept under this format's name -------------------------------


def _rekey(extra: Mapping[str, Any], src: str, dst: str) -> Mapping[str, Any]:
    if src not in extra:
        return {k: v for k, v in extra.items() if k != dst}  # never read another format's stash
    return {**{k: v for k, v in extra.items() if k not in (src, dst)}, dst: extra[src]}


def _as_chat(message: Message) -> Message:
    return replace(message, extra=_rekey(message.extra, NAME, chat.NAME)) if message.extra else message


def _as_ours(message: Message) -> Message:
    return replace(message, extra=_rekey(message.extra, chat.NAME, NAME)) if message.extra else message


# --- tools ------------------------------------------------------------------------------------------


def tools_to_wire(specs: Iterable[ToolSpec]) -> list[Json]:
    """``functions`` entries; ``strict`` has no spelling here and is left out (``convert`` reports it)."""
    out = []
    for spec in specs:
        plain = replace(spec, strict=None, extra=_rekey(spec.extra, NAME, chat.NAME))
        out.append(chat.tools_to_wire([plain])[0]["function"])
    return out


def tools_from_wire(items: Sequence[object]) -> list[ToolSpec]:
    return [
        spec_from_wire(obj(raw, f"functions[{i}]"), f"functions[{i}]") for i, raw in enumerate(seq(items, "functions"))
    ]


def spec_from_wire(item: Json, path: str = "functions[0]") -> ToolSpec:
    """One ``functions`` entry ``{name, description, parameters}`` as a ToolSpec."""
    spec = chat.spec_from_wire({"type": "function", "function": item}, path)
    assert spec is not None  # a function wrapper always reads as a function tool
    return replace(spec, extra=_rekey(spec.extra, chat.NAME, NAME))


# --- messages ---------------------------------------------------------------------------------------


def messages_to_wire(messages: Iterable[Message], /, *, split: bool = False) -> list[Json]:
    """The ``messages`` array; ``split=True`` turns parallel calls into consecutive single-call turns."""
    wire = chat.messages_to_wire(_as_chat(m) for m in messages)
    out: list[Json] = []
    names: dict[str, str] = {}
    i = 0
    while i < len(wire):
        message = wire[i]
        calls = message.get("tool_calls") or []
        if message["role"] == "tool":
            out.append(_function_result(message, names))
        elif len(calls) > 1 and not split:
            raise CannotExpress(
                f"{len(calls)} calls in one assistant message; legacy function calling allows one per turn. "
                "Pass split=True to send them as consecutive turns",
                f"messages[{i}].tool_calls",
            )
        elif calls:
            results = []
            while i + 1 < len(wire) and wire[i + 1]["role"] == "tool":
                i += 1
                results.append(wire[i])
            _calls_to_wire(message, calls, results, names, out)
        else:
            out.append(message)
        i += 1
    return out


def _calls_to_wire(
    message: Json, calls: list[Json], results: list[Json], names: dict[str, str], out: list[Json]
) -> None:
    """One assistant turn per call, each followed by its own result (results in call order)."""
    by_id = {r["tool_call_id"]: r for r in results}
    rest = {k: v for k, v in message.items() if k != "tool_calls"}
    for j, call in enumerate(calls):
        fn = call["function"]
        names[call["id"]] = fn["name"]
        turn = rest if j == 0 else {"role": "assistant", "content": None}
        out.append({**turn, "function_call": {"name": fn["name"], "arguments": fn["arguments"]}})
        if call["id"] in by_id:
            out.append(_function_result(by_id.pop(call["id"]), names))
    out.extend(_function_result(r, names) for r in by_id.values())


def _function_result(message: Json, names: dict[str, str]) -> Json:
    if message["role"] != "tool":
        return message  # the user turn holding text sent next to results
    name = message.get("name") or names.get(message["tool_call_id"])
    if name is None:
        raise CannotExpress(
            f"the result for call {message['tool_call_id']!r} has no tool name, which legacy function results need",
            "messages",
        )
    rest = leftover(message, frozenset({"role", "tool_call_id", "name", "content"}))
    return {**rest, "role": "function", "name": name, "content": message["content"]}


def messages_from_wire(items: object, path: str = "messages") -> list[Message]:
    return [_as_ours(m) for m in chat.messages_from_wire(_to_chat(seq(items, path), path), path)]


def _to_chat(items: list[Any], path: str) -> list[Json]:
    """Legacy messages in the Chat spelling: ids made up for calls, results paired to the last call by name."""
    out: list[Json] = []
    pending: dict[str, list[str]] = {}  # name -> ids of calls still waiting for a result
    seen: dict[tuple[str, str], int] = {}  # (name, arguments) -> identical calls so far
    for i, raw in enumerate(items):
        where = f"{path}[{i}]"
        message = obj(raw, where)
        role = message.get("role")
        if "function_call" in message:
            fn = obj(message["function_call"], f"{where}.function_call")
            name = need(fn, "name", f"{where}.function_call")
            arguments = need(fn, "arguments", f"{where}.function_call")
            repeat = seen[name, arguments] = seen.get((name, arguments), -1) + 1
            cid = call_id(name, arguments, repeat)
            pending.setdefault(name, []).append(cid)
            call = {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}
            out.append({**leftover(message, frozenset({"function_call"})), "tool_calls": [call]})
        elif role == "function":
            name = need(message, "name", where)
            waiting = pending.get(name)
            if not waiting:
                raise FormatError(f"a result of {name!r} with no earlier call of {name!r} to answer", where)
            rest = leftover(message, frozenset({"role", "name", "content"}))
            out.append(
                {
                    **rest,
                    "role": "tool",
                    "tool_call_id": waiting.pop(0),
                    "name": name,
                    "content": message.get("content"),
                }
            )
        else:
            out.append(message)
    return out


# --- requests ---------------------------------------------------------------------------------------


def request_to_wire(request: Request, /, *, split: bool = False) -> Json:
    """The full JSON body of a legacy ``POST /v1/chat/completions`` with ``functions``."""
    settings = request.settings
    choice = settings.tool_choice
    if choice == "required":
        raise CannotExpress(
            'legacy function calling has no "required" choice; name one function instead', "tool_choice"
        )
    render_server_tools(request.server_tools, NAME)  # legacy functions have none: this says so
    output_to_wire(NAME, request.output, {})  # nor structured output: this raises for one
    plain = replace(
        request,
        tools=(),
        extra_tools=(),
        server_tools=(),
        settings=replace(settings, tool_choice=None, parallel_tool_calls=None),
    )
    body = chat.request_to_wire(plain)
    body["messages"] = messages_to_wire(request.messages, split=split)
    if request.tools or request.extra_tools:
        body["functions"] = [*tools_to_wire(request.tools), *request.extra_tools]
    if choice is not None:
        body["function_call"] = {"name": choice.name} if isinstance(choice, UseTool) else choice
    return body


def request_from_wire(body: object) -> Request:
    data = obj(body, "body")
    rest = leftover(data, _BODY_KEYS)
    rest["messages"] = _to_chat(seq(data.get("messages"), "messages"), "messages")
    request = chat.request_from_wire(rest)
    choice = data.get("function_call")
    settings: Settings = request.settings
    if choice in ("auto", "none"):
        settings = replace(settings, tool_choice=choice)
    elif isinstance(choice, dict) and choice.keys() == {"name"} and isinstance(choice["name"], str):
        settings = replace(settings, tool_choice=UseTool(choice["name"]))
    elif choice is not None:
        raise FormatError(f'expected "auto", "none" or {{"name": ...}}, got {choice!r}', "function_call")
    return replace(
        request,
        messages=tuple(_as_ours(m) for m in request.messages),
        tools=tuple(tools_from_wire(data.get("functions") or [])),
        settings=settings,
    )


# --- responses --------------------------------------------------------------------------------------


def response_to_wire(response: ModelResponse) -> Json:
    """A ``chat.completion`` whose message carries one ``function_call``."""
    calls = response.message.tool_calls
    if len(calls) > 1:
        raise CannotExpress(f"{len(calls)} calls in one response; legacy function calling returns one", "choices[0]")
    kept = _rekey(response.extra, NAME, chat.NAME)
    out = chat.response_to_wire(replace(response, message=_as_chat(response.message), extra=kept))
    choice = out["choices"][0]
    message = choice["message"]
    if calls:
        call = message.pop("tool_calls")[0]["function"]
        message["function_call"] = {"name": call["name"], "arguments": call["arguments"]}
        if choice["finish_reason"] == "tool_calls":
            choice["finish_reason"] = "function_call"
    return out


def response_from_wire(data: object) -> ModelResponse:
    body = obj(data, "response")
    choices = seq(body.get("choices"), "choices")
    if choices:
        first = obj(choices[0], "choices[0]")
        message = _to_chat([obj(first.get("message"), "choices[0].message")], "choices[0].message")[0]
        body = {**body, "choices": [{**first, "message": message}, *choices[1:]]}
    response = chat.response_from_wire(body)
    return replace(response, message=_as_ours(response.message), extra=_rekey(response.extra, chat.NAME, NAME))
