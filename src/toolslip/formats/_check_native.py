"""The checker's scanners for Gemini ``contents``, Converse ``messages`` and Ollama ``messages``.

Converse pairs ``toolResult`` to ``toolUse`` by id, as Anthropic does. Gemini (without ``id``) and Ollama
(without ``tool_call_id``) pair a result with the previous assistant turn's calls by order and name, so
a scanner gives each id-less call a stand-in id (``name@path``) and each id-less result the stand-in id
of the first unanswered call of the same name in that turn. A result no call is left for is reported
here, by name; a call left without a result is reported by the common pairing check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ._check_scan import Json, Scan, not_an_object

NAME_PATTERNS = {
    "gemini": r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$",
    "bedrock": r"^[a-zA-Z0-9_-]{1,64}$",
    "ollama": r"^[a-zA-Z0-9_.:-]{1,64}$",
}
"""The tool names each service takes (Gemini: a letter or underscore first; dots, colons and dashes allowed)."""


class _Open:
    """The id-less calls of the last calls turn, by name, for id-less results to pair with."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []  # (name, stand-in id)

    def take(self, name: str | None) -> str | None:
        for j, (called, cid) in enumerate(self.calls):
            if name is None or called == name:
                del self.calls[j]
                return cid
        return None


def _unpaired(scan: Scan, index: int, path: str, name: str | None) -> None:
    named = f" named {name!r}" if name else ""
    scan.problem(
        index,
        path,
        "orphan_result",
        f"a result without an id and no call{named} left to answer in the assistant turn before it",
        "put each result right after the turn holding its call, one result per call, or give both the same id",
    )


def scan_gemini(contents: list[Any], scan: Scan) -> None:
    pending = _Open()
    for i, content in enumerate(contents):
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            scan.add(i, "other")
            continue
        role = content.get("role")
        calls = _parts_with(parts, "functionCall")
        results = _parts_with(parts, "functionResponse")
        if calls and role == "model":
            turn = scan.add(i, "calls")
            pending.calls = []
            for j, call in calls:
                where = f"contents[{i}].parts[{j}].functionCall"
                cid = call.get("id") or f"{call.get('name')}@{where}"
                if not call.get("id"):
                    pending.calls.append((str(call.get("name")), cid))
                turn.calls.append((str(cid), where, i))
                if "args" in call and not isinstance(call["args"], dict):
                    scan.problem(
                        i, f"{where}.args", "arguments_type", "args is not an object", "send args as a JSON object"
                    )
        elif results and role != "model":
            turn = scan.add(i, "results")
            for j, result in results:
                where = f"contents[{i}].parts[{j}].functionResponse"
                cid = result.get("id") or pending.take(result.get("name"))
                if cid is None:
                    _unpaired(scan, i, where, result.get("name"))
                    continue
                turn.results.append((str(cid), where, i))
                if "response" in result and not isinstance(result["response"], dict):
                    scan.problem(
                        i,
                        f"{where}.response",
                        "result_shape",
                        "response is not an object",
                        'wrap it as {"output": ...} (or {"error": ...})',
                    )
        else:
            if results:
                scan.problem(
                    i,
                    f"contents[{i}].role",
                    "wrong_role",
                    "functionResponse parts in a model turn",
                    'send results in the "user" content after the calls',
                )
            scan.add(i, "other")


def _parts_with(parts: list[Any], key: str) -> list[tuple[int, Json]]:
    """(index, part[key]) of the parts holding ``key`` (in either spelling)."""
    found = ((j, _camel(part, key)) for j, part in enumerate(parts))
    return [(j, value) for j, value in found if value is not None]


def _camel(part: object, key: str) -> Json | None:
    """``part[key]``, also under its snake_case spelling (the service takes both)."""
    if not isinstance(part, dict):
        return None
    value = part.get(key, part.get(re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), key)))
    return value if isinstance(value, dict) else None


def scan_bedrock(messages: list[Any], scan: Scan) -> None:
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            scan.add(i, "other")
            continue
        role = message.get("role")
        uses = [
            (j, b["toolUse"])
            for j, b in enumerate(content)
            if isinstance(b, dict) and isinstance(b.get("toolUse"), dict)
        ]
        results = [
            (j, b["toolResult"])
            for j, b in enumerate(content)
            if isinstance(b, dict) and isinstance(b.get("toolResult"), dict)
        ]
        if uses and role == "assistant":
            turn = scan.add(i, "calls")
            for j, use in uses:
                where = f"messages[{i}].content[{j}].toolUse"
                turn.calls.append((str(use.get("toolUseId") or ""), where, i))
                if not isinstance(use.get("input"), dict):
                    scan.problem(
                        i, f"{where}.input", "arguments_type", "input is not an object", "send input as a JSON object"
                    )
        elif results and role == "user":
            turn = scan.add(i, "results")
            turn.results += [
                (str(r.get("toolUseId") or ""), f"messages[{i}].content[{j}].toolResult", i) for j, r in results
            ]
        else:
            if results:
                scan.problem(
                    i,
                    f"messages[{i}].role",
                    "wrong_role",
                    "toolResult blocks in an assistant message",
                    'send results in the "user" message after the calls',
                )
            scan.add(i, "other")


def scan_ollama(messages: list[Any], scan: Scan) -> None:
    pending = _Open()
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            not_an_object(scan, i, f"messages[{i}]", message, "a message object")
            scan.add(i, "other")
            continue
        role = message.get("role")
        calls = message.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            turn = scan.add(i, "calls")
            pending.calls = []
            for j, call in enumerate(calls):
                where = f"messages[{i}].tool_calls[{j}]"
                fn = call.get("function") if isinstance(call, dict) else None
                if not isinstance(fn, dict):
                    not_an_object(scan, i, where, call, "a tool call object")
                    continue
                cid = call.get("id") or f"{fn.get('name')}@{where}"
                if not call.get("id"):
                    pending.calls.append((str(fn.get("name")), cid))
                turn.calls.append((str(cid), where, i))
                if not isinstance(fn.get("arguments"), dict):
                    scan.problem(
                        i,
                        f"{where}.function.arguments",
                        "arguments_type",
                        "arguments are not an object (Ollama takes an object, not JSON text)",
                        "send arguments as a JSON object",
                    )
        elif role == "tool":
            turn = scan.add(i, "results")
            cid = message.get("tool_call_id") or pending.take(message.get("tool_name"))
            if cid is None:
                _unpaired(scan, i, f"messages[{i}]", message.get("tool_name"))
            else:
                turn.results.append((str(cid), f"messages[{i}]", i))
        else:
            scan.add(i, "other")


NATIVE_SCANNERS: dict[str, Callable[[list[Any], Scan], None]] = {
    "gemini": scan_gemini,
    "bedrock": scan_bedrock,
    "ollama": scan_ollama,
}


def native_declarations(body: Json, fmt: str) -> list[tuple[str, Json]]:
    """(path, declaration) of each function tool in a Gemini, Converse or Ollama request body."""
    out: list[tuple[str, Json]] = []
    if fmt == "gemini":
        for i, entry in enumerate(body.get("tools") or ()):
            found = (
                entry.get("functionDeclarations", entry.get("function_declarations"))
                if isinstance(entry, dict)
                else None
            )
            for j, declaration in enumerate(found if isinstance(found, list) else ()):
                if isinstance(declaration, dict):
                    out.append((f"tools[{i}].functionDeclarations[{j}]", declaration))
    elif fmt == "bedrock":
        config = body.get("toolConfig")
        for i, tool in enumerate((config.get("tools") if isinstance(config, dict) else None) or ()):
            if isinstance(tool, dict) and isinstance(tool.get("toolSpec"), dict):
                out.append((f"toolConfig.tools[{i}].toolSpec", tool["toolSpec"]))
    else:
        for i, tool in enumerate(body.get("tools") or ()):
            if isinstance(tool, dict) and isinstance(tool.get("function"), dict):
                out.append((f"tools[{i}].function", tool["function"]))
    return out


def check_native_tools(body: Json, fmt: str, scan: Scan) -> None:
    """Each declared name against the service's pattern; Converse's history of tool blocks needs tools."""
    pattern = re.compile(NAME_PATTERNS[fmt])
    for path, declaration in native_declarations(body, fmt):
        name = declaration.get("name")
        if not isinstance(name, str) or not pattern.fullmatch(name):
            scan.problem(
                None,
                f"{path}.name",
                "bad_name",
                f"{name!r} breaks {fmt}'s name pattern {pattern.pattern}",
                "rename it (toolslip.NameMap keeps the way back)",
            )
    if fmt == "bedrock" and any(t.kind != "other" for t in scan.turns) and not native_declarations(body, fmt):
        scan.problem(
            None,
            "toolConfig",
            "tools_dropped",
            "the history holds toolUse or toolResult blocks but this request has no toolConfig, which Converse rejects",
            "send the same toolConfig as the first request",
        )
