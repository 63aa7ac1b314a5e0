"""The Vercel AI SDK's UI messages (what ``useChat`` posts each turn) as toolslip's neutral transcript.

``useChat`` sends the whole conversation every turn, each message a list of parts (the ``ai`` package's
``UIMessagePart``). A follow-up turn must see what earlier turns' tools returned, so tool parts become
what they were: an assistant message with the calls of one step (``step-start`` parts divide an
assistant message into steps) and a tool message with their results, paired by ``toolCallId``. The part
states map as the SDK's own ``convertToModelMessages`` maps them: ``output-available`` is the result,
``output-error`` an error result, ``output-denied`` a refusal with the user's reason; a call that never got
a result (its approval left unanswered when the user wrote again) is answered "not run", so no call is
left unpaired. Parts that never reach a model in the SDK either (``step-start``, ``source-url``,
``source-document``, ``data-*``) are skipped; anything else that is not a well-formed part is refused
with :class:`BadUIMessages`, naming the message and part, never dropped.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from ..core.messages import File, Image, Message, Part, Reasoning, Text, ToolCall, ToolResult

__all__ = ["BadUIMessages", "ui_transcript"]

_UI_ONLY = ("step-start", "source-url", "source-document")
"""Parts that mark steps or show sources in the UI: nothing a model is sent (``data-*`` neither)."""

_STATES = frozenset(
    {
        "input-streaming",
        "input-available",
        "approval-requested",
        "approval-responded",
        "output-available",
        "output-error",
        "output-denied",
    }
)
"""A tool part's states (``UIToolInvocation`` in the ``ai`` package's types)."""


class BadUIMessages(Exception):
    """A posted message or part that is not the shape the ``ai`` package sends; the text is one sentence."""


def ui_transcript(messages: Sequence[Any]) -> list[Message]:
    """``messages`` (a ``useChat`` body's) as toolslip messages; :class:`BadUIMessages` for a malformed one."""
    out: list[Message] = []
    for n, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("parts"), list):
            raise BadUIMessages(f"message {n} must be an object with a list of parts")
        role = message.get("role")
        parts = [_checked(p, n, i) for i, p in enumerate(message["parts"])]
        if role == "assistant":
            out += _assistant(parts, n)
        elif role in ("user", "system"):
            content = tuple(_content(p, n, i, role) for i, p in enumerate(parts) if not _skipped(p))
            if content:
                out.append(Message(role=role, parts=content))
        else:
            raise BadUIMessages(f"message {n} has role {role!r}; a UI message is from 'user', 'assistant' or 'system'")
    return out


def _checked(part: Any, n: int, i: int) -> Mapping[str, Any]:
    if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
        raise BadUIMessages(f"part {i} of message {n} must be an object with a string 'type'")
    return part


def _skipped(part: Mapping[str, Any]) -> bool:
    kind = str(part["type"])
    return kind in _UI_ONLY or kind.startswith("data-")


def _tool_part(part: Mapping[str, Any]) -> bool:
    kind = str(part["type"])
    return kind.startswith("tool-") or kind == "dynamic-tool"


def _string(part: Mapping[str, Any], key: str, n: int, i: int) -> str:
    value = part.get(key)
    if not isinstance(value, str):
        raise BadUIMessages(f"part {i} of message {n} ({part['type']}) needs a string {key!r}")
    return value


def _content(part: Mapping[str, Any], n: int, i: int, role: str) -> Part:
    """A text, reasoning or file part; anything else in a user or system message is refused."""
    kind = part["type"]
    if kind == "text":
        return Text(text=_string(part, "text", n, i))
    if kind == "reasoning" and role == "assistant":
        return Reasoning(text=_string(part, "text", n, i))
    if kind == "file" and role != "system":
        return _file(part, n, i)
    raise BadUIMessages(f"part {i} of message {n} has type {kind!r}, which a {role} message cannot carry")


def _file(part: Mapping[str, Any], n: int, i: int) -> Part:
    """A file part: its ``url`` is a ``data:`` URL (inline bytes) or a link the provider fetches."""
    media_type, url = _string(part, "mediaType", n, i), _string(part, "url", n, i)
    data = None
    if url.startswith("data:"):
        head, _, body = url.partition(",")
        if not head.endswith(";base64"):
            raise BadUIMessages(f"part {i} of message {n} (file) has a data: URL that is not base64")
        try:
            base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise BadUIMessages(f"part {i} of message {n} (file) has a data: URL whose base64 is broken") from None
        data, url = body, ""
    if media_type.startswith("image/"):
        return Image(media_type=media_type, data=data, url=url or None)
    name = part.get("filename")
    return File(media_type=media_type, data=data, url=url or None, name=name if isinstance(name, str) else None)


def _assistant(parts: Sequence[Mapping[str, Any]], n: int) -> list[Message]:
    """One assistant message per step, each followed by the results of its calls."""
    out: list[Message] = []
    step: list[tuple[int, Mapping[str, Any]]] = []
    for i, part in [*enumerate(parts), (len(parts), {"type": "step-start"})]:
        if part["type"] != "step-start":
            step.append((i, part))
            continue
        said: list[Part] = []
        results: list[ToolResult] = []
        for j, p in step:
            if _tool_part(p):
                call, result = _tool(p, n, j)
                if call is not None:
                    said.append(call)
                    results.append(result)
            elif not _skipped(p):
                said.append(_content(p, n, j, "assistant"))
        if said:
            out.append(Message(role="assistant", parts=tuple(said)))
        if results:
            out.append(Message.tool(results))
        step = []
    return out


def _tool(part: Mapping[str, Any], n: int, i: int) -> tuple[ToolCall | None, ToolResult]:
    """A tool part as its call and its result (no call for one whose input was still streaming)."""
    name = part.get("toolName") if part["type"] == "dynamic-tool" else part["type"].removeprefix("tool-")
    call_id, state = part.get("toolCallId"), part.get("state")
    if not isinstance(name, str) or not name or not isinstance(call_id, str) or not call_id:
        raise BadUIMessages(f"part {i} of message {n} ({part['type']}) needs a tool name and a string 'toolCallId'")
    if state not in _STATES:
        raise BadUIMessages(f"part {i} of message {n} ({part['type']}) has an unknown state {state!r}")
    arguments = part.get("input")
    if state == "output-error" and arguments is None:
        arguments = {}
    if state != "input-streaming" and not isinstance(arguments, Mapping):
        raise BadUIMessages(f"part {i} of message {n} ({part['type']}) needs its 'input' as a JSON object")
    given = part.get("approval")
    approval: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    reason = str(approval.get("reason") or "")
    if state == "output-available":
        output = part.get("output")
        text = output if isinstance(output, str) else orjson.dumps(output).decode()
        result = ToolResult(call_id=call_id, name=name, content=text, outcome="ran")
    elif state == "output-error":
        text = _string(part, "errorText", n, i)
        result = ToolResult(call_id=call_id, name=name, content=text, is_error=True, outcome="failed")
    elif state == "output-denied" or (state == "approval-responded" and approval.get("approved") is False):
        text = "The user denied this call" + (f": {reason}" if reason else ".")
        result = ToolResult(call_id=call_id, name=name, content=text, is_error=True, outcome="refused")
    else:  # streaming, waiting for approval, or approved but never run: no result to show the model
        text = "Not run: the conversation went on before this call had a result."
        result = ToolResult(call_id=call_id, name=name, content=text, is_error=True, outcome="not_executed")
    if state == "input-streaming" or not isinstance(arguments, Mapping):  # the SDK sends no half-written call
        return None, result
    return ToolCall(id=call_id, name=name, arguments=dict(arguments)), result
