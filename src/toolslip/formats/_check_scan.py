"""Reading a wire transcript leniently, for the checker: who called what, who answered what, and where.

The format modules reject bad data at the first wrong field; the checker must read *through* the
mistakes to report all of them with their message index. Each scanner turns a format's message list
into :class:`Turn` objects (an assistant turn's calls, a results turn's answers, or anything else) and
reports the mistakes only one format can make (wrong role for results, arguments of the wrong type).
With ``fix=True`` it also repairs those in place where the repair cannot change meaning (a key renamed,
arguments re-encoded, a result moved to the role this format expects), and says what it changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Problem:
    """One mistake: where it is, what is wrong, and the one-line fix."""

    index: int | None
    """The wire message (or input item) index; ``None`` for the request's tools."""
    path: str
    code: str
    message: str
    fix: str
    fixable: bool = False

    def __str__(self) -> str:
        return f"{self.path}: {self.message}. Fix: {self.fix}"


@dataclass
class Turn:
    index: int
    kind: str  # "calls", "results" or "other"
    calls: list[tuple[str, str, int]] = field(default_factory=list)  # (id, path, message index)
    results: list[tuple[str, str, int]] = field(default_factory=list)  # (call_id, path, message index)


@dataclass
class Scan:
    turns: list[Turn] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    changes: list[str] = field(default_factory=list)
    fix: bool = False

    def add(self, index: int, kind: str) -> Turn:
        if self.turns and self.turns[-1].kind == kind and kind != "other":
            return self.turns[-1]  # consecutive tool messages or items form one turn
        self.turns.append(Turn(index, kind))
        return self.turns[-1]

    def problem(self, index: int | None, path: str, code: str, message: str, fix: str, fixable: bool = False) -> None:
        self.problems.append(Problem(index, path, code, message, fix, fixable))
        if fixable and self.fix:
            self.changes.append(f"{path}: {fix}")


def not_an_object(scan: Scan, index: int, path: str, value: object, what: str) -> None:
    """Report a value where an object belongs: a checker reads garbage too, and says where it is."""
    scan.problem(
        index,
        path,
        "not_an_object",
        f"expected {what}, got {type(value).__name__} {json.dumps(value)[:40]}",
        "write it as a JSON object, or remove it",
    )


def _arguments_text(scan: Scan, holder: Json, key: str, index: int, path: str) -> None:
    """OpenAI formats: arguments must be a JSON *string*; an object is re-encoded."""
    value = holder.get(key)
    if isinstance(value, dict):
        scan.problem(
            index,
            path,
            "arguments_type",
            "arguments are an object, not a JSON string",
            "send json.dumps(arguments)",
            fixable=True,
        )
        if scan.fix:
            holder[key] = json.dumps(value, ensure_ascii=False)
    elif not isinstance(value, str):
        scan.problem(
            index,
            path,
            "arguments_type",
            f"arguments are {type(value).__name__}, not a JSON string",
            "send the arguments as a JSON object encoded as a string",
        )


def scan_openai_chat(messages: list[Any], scan: Scan) -> None:
    moved: list[int] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            scan.add(i, "other")
            continue
        role = message.get("role")
        if role == "tool":
            scan.add(i, "results").results.append((str(message.get("tool_call_id") or ""), f"messages[{i}]", i))
        elif role == "function":
            scan.problem(
                i,
                f"messages[{i}].role",
                "wrong_role",
                'a legacy "function" result in a tool-calls history',
                'send {"role": "tool", "tool_call_id": ...} for each result',
            )
            scan.add(i, "other")
        elif role == "assistant" and message.get("tool_calls"):
            turn = scan.add(i, "calls")
            calls = message["tool_calls"]
            for j, call in enumerate(calls if isinstance(calls, list) else [calls]):
                where = f"messages[{i}].tool_calls" + (f"[{j}]" if isinstance(calls, list) else "")
                if not isinstance(call, dict):
                    what = "a tool call object" if isinstance(calls, list) else "a list of tool call objects"
                    not_an_object(scan, i, where, call, what)
                    continue
                turn.calls.append((str(call.get("id") or ""), where, i))
                _arguments_text(scan, call.get("function") or {}, "arguments", i, f"{where}.function.arguments")
        else:
            content = message.get("content")
            blocks = content if isinstance(content, list) else []
            if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks):
                scan.problem(
                    i,
                    f"messages[{i}].content",
                    "wrong_role",
                    "Anthropic tool_result blocks in an OpenAI history",
                    'send each result as its own {"role": "tool", "tool_call_id": ...} message',
                    fixable=True,
                )
                moved.append(i)
            scan.add(i, "other")
    if scan.fix:
        for i in reversed(moved):  # splice from the end so earlier indexes stay valid
            _anthropic_results_to_tool_messages(messages, i)


def _anthropic_results_to_tool_messages(messages: list[Any], i: int) -> None:
    blocks = messages[i]["content"]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    rest = [b for b in blocks if b not in results]
    tool_messages: list[Any] = [
        {"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": b.get("content", "")} for b in results
    ]
    messages[i : i + 1] = tool_messages + ([{**messages[i], "content": rest}] if rest else [])


def scan_anthropic(messages: list[Any], scan: Scan) -> None:
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            scan.add(i, "other")
            continue
        role, content = message.get("role"), message.get("content")
        blocks = content if isinstance(content, list) else []
        if role == "tool":
            scan.problem(
                i,
                f"messages[{i}].role",
                "wrong_role",
                'Anthropic has no "tool" role',
                'send results as tool_result blocks in a "user" message',
                fixable=True,
            )
            if scan.fix:
                block = {"type": "tool_result", "tool_use_id": message.get("tool_call_id"), "content": content or ""}
                messages[i] = {"role": "user", "content": [block]}
            scan.add(i, "results").results.append((str(message.get("tool_call_id") or ""), f"messages[{i}]", i))
            continue
        uses = [(j, b) for j, b in enumerate(blocks) if isinstance(b, dict) and b.get("type") == "tool_use"]
        results = [(j, b) for j, b in enumerate(blocks) if isinstance(b, dict) and b.get("type") == "tool_result"]
        if role == "assistant" and message.get("tool_calls"):
            scan.problem(
                i,
                f"messages[{i}].tool_calls",
                "wrong_role",
                "OpenAI tool_calls in an Anthropic history",
                "send each call as a tool_use block in the assistant content",
            )
        if uses and role == "assistant":
            turn = scan.add(i, "calls")
            for j, block in uses:
                where = f"messages[{i}].content[{j}]"
                turn.calls.append((str(block.get("id") or ""), where, i))
                _input_object(scan, block, i, f"{where}.input")
        elif results and role == "user":
            turn = scan.add(i, "results")
            turn.results += [(str(b.get("tool_use_id") or ""), f"messages[{i}].content[{j}]", i) for j, b in results]
            if results[0][0] != 0 or len(results) != results[-1][0] + 1:
                scan.problem(
                    i,
                    f"messages[{i}].content",
                    "results_first",
                    "text comes before tool_result blocks; Anthropic wants the results first",
                    "put every tool_result block before any text in the message",
                    fixable=True,
                )
                if scan.fix:
                    message["content"] = [b for _, b in results] + [
                        b for b in blocks if b not in dict(results).values()
                    ]
        else:
            if results:
                scan.problem(
                    i,
                    f"messages[{i}].role",
                    "wrong_role",
                    "tool_result blocks in an assistant message",
                    'send results in the "user" message after the calls',
                )
            scan.add(i, "other")


def _input_object(scan: Scan, block: Json, index: int, path: str) -> None:
    value = block.get("input")
    if isinstance(value, dict):
        return
    parsed = None
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = None
    fixable = isinstance(parsed, dict)
    scan.problem(
        index,
        path,
        "arguments_type",
        f"input is {type(value).__name__}, not an object",
        "send input as a JSON object, not a string" if fixable else "send input as a JSON object",
        fixable=fixable,
    )
    if fixable and scan.fix:
        block["input"] = parsed


def scan_openai_functions(messages: list[Any], scan: Scan) -> None:
    waiting: dict[str, list[str]] = {}
    orphans: list[int] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            scan.add(i, "other")
            continue
        role, fn = message.get("role"), message.get("function_call")
        if isinstance(fn, dict):
            name = str(fn.get("name") or "")
            cid = f"{name}#{i}"
            waiting.setdefault(name, []).append(cid)
            scan.add(i, "calls").calls.append((cid, f"messages[{i}].function_call", i))
            _arguments_text(scan, fn, "arguments", i, f"messages[{i}].function_call.arguments")
        elif role == "function":
            name = str(message.get("name") or "")
            queue = waiting.get(name) or []
            if not queue:
                orphans.append(i)
            scan.add(i, "results").results.append((queue.pop(0) if queue else f"{name}#?", f"messages[{i}]", i))
        elif role == "tool" or message.get("tool_calls"):
            scan.problem(
                i,
                f"messages[{i}]",
                "wrong_role",
                "tool_calls / tool messages in a legacy functions history",
                'use "function_call" and {"role": "function", "name": ...} results',
            )
            scan.add(i, "other")
        else:
            scan.add(i, "other")
    if scan.fix:
        for i in reversed(orphans):  # a result of no call cannot be read (or sent): it goes
            del messages[i]


def scan_openai_responses(items: list[Any], scan: Scan) -> None:
    for i, item in enumerate(items):
        kind = item.get("type", "message" if "role" in item else None) if isinstance(item, dict) else None
        if kind == "function_call":
            scan.add(i, "calls").calls.append((str(item.get("call_id") or ""), f"input[{i}]", i))
            _arguments_text(scan, item, "arguments", i, f"input[{i}].arguments")
        elif kind == "tool_search_call" and item.get("execution") == "client":
            # A tool search the client runs: answered like a call, by its call_id.
            scan.add(i, "calls").calls.append((str(item.get("call_id") or ""), f"input[{i}]", i))
        elif kind == "tool_search_output" and item.get("execution") == "client":
            scan.add(i, "results").results.append((str(item.get("call_id") or ""), f"input[{i}]", i))
        elif kind == "function_call_output":
            scan.add(i, "results").results.append((str(item.get("call_id") or ""), f"input[{i}]", i))
        elif kind == "message" and item.get("role") == "tool":
            scan.problem(
                i,
                f"input[{i}].role",
                "wrong_role",
                'the Responses API has no "tool" role',
                'send {"type": "function_call_output", "call_id": ..., "output": ...}',
            )
            scan.add(i, "other")
        elif kind == "message" or kind is None:
            scan.add(i, "other")
        # reasoning and hosted-tool items (web_search_call, mcp_call...) answer themselves: not calls


SCANNERS: dict[str, Callable[[list[Any], Scan], None]] = {
    "openai-chat": scan_openai_chat,
    "anthropic": scan_anthropic,
    "openai-functions": scan_openai_functions,
    "openai-responses": scan_openai_responses,
}
