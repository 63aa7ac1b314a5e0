"""Find (and safely repair) the classic tool-calling mistakes in a transcript, in any of the seven formats.

The most reported tool-calling error is still a call without its result, or a result without its call
(HTTP 400 "tool_call_ids did not have response messages", "tool_use ids were found without tool_result
blocks"). :func:`check` reads a request body or a message list leniently, lists every such problem with
its message index and a one-line fix, and with ``fix=True`` returns a repaired copy:

- a call with no result gets an explicit ``is_error`` result saying it was not executed;
- a result that is not right after its call is moved there (re-paired by id), results are put in call order;
- a second result for the same call, and a result of no call at all, are removed;
- format mix-ups that cannot change meaning are undone (``parameters`` <-> ``input_schema``, arguments
  re-encoded as the format wants, results moved to the role this format uses).

Duplicate or missing call ids, dropped ``tools`` and names that break the provider's pattern are reported
but not changed: repairing them needs a decision only the caller can make. Server-side tools (Anthropic
``server_tool_use`` blocks, Responses hosted-tool items) answer themselves and are never unanswered calls.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..core.errors import FormatError
from ..core.messages import Message, Request, ToolResult
from . import get_format
from ._check_native import NATIVE_SCANNERS, check_native_tools
from ._check_scan import SCANNERS, Json, Problem, Scan, Turn, not_an_object
from .schema import name_pattern
from .server_tools import declared_server_tools

__all__ = ["CheckReport", "Problem", "check", "check_request", "detect_format", "repair_messages"]

NOT_EXECUTED = "not executed: no result was recorded for this call"
_SCHEMA_KEY = {"anthropic": "input_schema"}
_TOOLS_KEY = {"openai-functions": "functions"}


@dataclass(frozen=True)
class CheckReport:
    """The problems found and, with ``fix=True``, the repaired data and what changed."""

    format: str
    problems: tuple[Problem, ...]
    fixed: Any = None
    changes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def check(data: object, fmt: str | None = None, *, fix: bool = False) -> CheckReport:
    """Check a request body or a message list in wire format ``fmt`` (guessed when ``None``)."""
    if _is_declaration_list(data):
        raise FormatError(
            "this is a list of tool declarations, not a conversation: check takes a request body or a message "
            "list; to check declarations run `toolslip lint FILE.json`"
        )
    fmt = fmt or detect_format(data)
    get_format(fmt)  # an unknown name raises here, listing the known ones
    body = data if isinstance(data, dict) else None
    items = _items(data, fmt)
    scan = Scan()
    key = _ITEMS_KEY.get(fmt, "messages")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            not_an_object(scan, i, f"{key}[{i}]", item, "a message object")
    (NATIVE_SCANNERS.get(fmt) or SCANNERS[fmt])(items, scan)
    if body is not None and fmt in NATIVE_SCANNERS:
        check_native_tools(body, fmt, scan)
    elif body is not None:
        _check_tools(body, fmt, scan)
        # OpenAI takes a history with calls and no tools (a last step that must answer in words);
        # Anthropic rejects it with an HTTP 400.
        if fmt == "anthropic" and any(t.kind != "other" for t in scan.turns) and not body.get("tools"):
            scan.problem(
                None,
                "tools",
                "tools_dropped",
                "the history holds tool blocks but this request declares no tools, which Anthropic rejects",
                "send the same tools as the first request",
            )
    _check_pairing(scan.turns, scan)
    if (
        body is not None
        and fmt == "openai-responses"
        and (body.get("previous_response_id") or body.get("conversation"))
    ):
        # The earlier items, calls included, live on the server: an output for a call not in `input` is fine.
        scan.problems = [p for p in scan.problems if p.code != "orphan_result"]
    problems = tuple(sorted(scan.problems, key=lambda p: -1 if p.index is None else p.index))
    if not fix:
        return CheckReport(fmt, problems)
    fixed, changes = _repair(data, fmt, problems)
    return CheckReport(fmt, problems, fixed, changes)


def _is_declaration_list(data: object) -> bool:
    """Every item is a tool declaration of some format (and none is a message or an input item)."""
    if not isinstance(data, list) or not data:
        return False
    return all(
        isinstance(item, dict)
        and "role" not in item
        and (
            "input_schema" in item or (item.get("type") == "function" and ("function" in item or "parameters" in item))
        )
        for item in data
    )


def detect_format(data: object) -> str:
    """The wire format a request body or message list is most likely written in (``openai-chat`` if unsure)."""
    return evident_format(data) or "openai-chat"


def evident_format(data: object) -> str | None:
    """The wire format a request body or message list shows signs of (``None`` when nothing tells)."""
    if isinstance(data, dict):
        hint = _body_hint(data)
        if hint is not None:
            return hint
        data = data.get("messages")
    if not isinstance(data, list):
        return None
    dicts = [m for m in data if isinstance(m, dict)]
    blocks = [b for m in dicts if isinstance(m.get("content"), list) for b in m["content"] if isinstance(b, dict)]
    votes = {
        "openai-chat": sum("tool_calls" in m or m.get("role") == "tool" for m in dicts),
        "openai-functions": sum("function_call" in m or m.get("role") == "function" for m in dicts),
        "anthropic": sum(b.get("type") in ("tool_use", "tool_result") for b in blocks),
        "openai-responses": sum("type" in m and "role" not in m for m in dicts),
        "gemini": sum("parts" in m for m in dicts),
        "bedrock": sum("toolUse" in b or "toolResult" in b for b in blocks),
        "ollama": sum("tool_name" in m for m in dicts),
    }
    best = max(votes, key=lambda k: votes[k])
    return best if votes[best] else None


def _body_hint(body: Json) -> str | None:
    if "input" in body:
        return "openai-responses"
    native = _native_hint(body)
    if native is not None:
        return native
    if "functions" in body:
        return "openai-functions"
    if "system" in body:
        return "anthropic"
    tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
    if any("input_schema" in t for t in tools) or declared_server_tools("anthropic", tools, body):
        return "anthropic"  # a client tool's schema, or a versioned server tool (web_search_20250305)
    if any("function" in t for t in tools):
        return "openai-chat"
    return None


def _native_hint(body: Json) -> str | None:
    """Gemini's ``contents``, Converse's ``toolConfig``/``inferenceConfig`` or block lists without ``type``,
    Ollama's ``options``/``keep_alive``."""
    if "contents" in body:
        return "gemini"
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    if (
        "toolConfig" in body
        or "inferenceConfig" in body
        or any(isinstance(b, dict) and "type" not in b for b in blocks)
    ):
        return "bedrock"
    if "options" in body or "keep_alive" in body:
        return "ollama"
    return None


_ITEMS_KEY = {"openai-responses": "input", "gemini": "contents"}


def _items(data: object, fmt: str) -> list[Any]:
    key = _ITEMS_KEY.get(fmt, "messages")
    if isinstance(data, dict) and key not in data and _TOOLS_KEY.get(fmt, "tools") not in data:
        # Neither a transcript nor declarations: "no problems" would be a lie about a file of something else.
        raise FormatError(f"this {fmt} body has neither {key!r} nor tools to check; give a request body", key)
    items = data.get(key, []) if isinstance(data, dict) else data
    if isinstance(items, str) and fmt == "openai-responses":
        return []
    if not isinstance(items, list):
        raise FormatError(f"expected a request body or a list of messages, got {type(items).__name__}", key)
    return items


# --- declarations -----------------------------------------------------------------------------------


def _check_tools(body: Json, fmt: str, scan: Scan) -> None:
    key = _TOOLS_KEY.get(fmt, "tools")
    tools = body.get(key)
    if not isinstance(tools, list):
        return
    pattern = re.compile(name_pattern(fmt))
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        fn = _declaration(tool, fmt, f"{key}[{i}]", scan)
        if fn is None:
            continue  # a server or hosted tool: the provider names it
        name = fn.get("name")
        if not isinstance(name, str) or not pattern.fullmatch(name):
            scan.problem(
                None,
                f"{key}[{i}].name",
                "bad_name",
                f"{name!r} breaks {fmt}'s name pattern {pattern.pattern}",
                "rename it (toolslip.NameMap keeps the way back)",
            )


def _declaration(tool: Json, fmt: str, path: str, scan: Scan) -> Json | None:
    """The function declaration inside ``tool`` after undoing spelling mix-ups (None for server tools)."""
    if fmt != "anthropic" and tool.get("type", "function") != "function":
        # A hosted or provider tool (web_search, openrouter:web_search, a client tool_search): the
        # provider defines it, so its name and shape are the provider's business.
        return None
    wrapped = isinstance(tool.get("function"), dict)  # Mistral leaves out "type"
    wants_wrapper = fmt == "openai-chat"
    if wrapped != wants_wrapper and (wrapped or "parameters" in tool or "input_schema" in tool):
        how = 'wrap it as {"type": "function", "function": {...}}' if wants_wrapper else 'unwrap "function"'
        scan.problem(None, path, "declaration_shape", f"a tool spelled for another format than {fmt}", how, True)
        if scan.fix:
            inner = dict(tool["function"]) if wrapped else {k: v for k, v in tool.items() if k != "type"}
            if fmt == "openai-responses":
                inner = {"type": "function", **inner}
            tool.clear()
            tool.update({"type": "function", "function": inner} if wants_wrapper else inner)
    fn = tool["function"] if isinstance(tool.get("function"), dict) else tool
    if not isinstance(fn, dict) or ("parameters" not in fn and "input_schema" not in fn and "name" not in fn):
        return None
    if fmt == "anthropic" and tool.get("type", "custom") != "custom" and "input_schema" not in fn:
        return None
    right = _SCHEMA_KEY.get(fmt, "parameters")
    wrong = "parameters" if right == "input_schema" else "input_schema"
    if wrong in fn and right not in fn:
        scan.problem(
            None,
            f"{path}.{wrong}",
            "schema_key",
            f"{fmt} reads the schema from {right!r}, not {wrong!r}",
            f"rename {wrong!r} to {right!r}",
            True,
        )
        if scan.fix:
            fn[right] = fn.pop(wrong)
    return fn


# --- pairing ----------------------------------------------------------------------------------------


def _check_pairing(turns: list[Turn], scan: Scan) -> None:
    calls_at = {cid: at for t in turns for cid, _, at in t.calls if cid}
    answered_anywhere = {cid for t in turns for cid, _, _ in t.results}
    made = Counter(cid for t in turns for cid, _, _ in t.calls)
    answered: Counter[str] = Counter()
    seen: set[str] = set()
    for n, turn in enumerate(turns):
        for cid, path, at in turn.calls:
            if not cid:
                scan.problem(at, path, "missing_id", "a call without an id", "give every call a unique id")
            elif cid in seen:
                scan.problem(
                    at,
                    path,
                    "duplicate_id",
                    f"call id {cid!r} is used twice",
                    "give every call a unique id (and its result the same one)",
                )
            seen.add(cid)
        if turn.kind == "results":
            expected = [cid for cid, _, _ in turns[n - 1].calls] if n and turns[n - 1].kind == "calls" else []
            _check_results(turn, expected, calls_at, made, answered, scan)
        if turn.kind == "calls":
            following = turns[n + 1] if n + 1 < len(turns) and turns[n + 1].kind == "results" else None
            got = {cid for cid, _, _ in following.results} if following else set()
            for cid, path, at in turn.calls:
                if cid and cid not in got and cid not in answered_anywhere:
                    scan.problem(
                        at,
                        path,
                        "missing_result",
                        f"call {cid!r} has no result",
                        'add an is_error result saying "not executed"',
                        True,
                    )


def _check_results(
    turn: Turn, expected: list[str], calls_at: dict[str, int], made: Counter[str], answered: Counter[str], scan: Scan
) -> None:
    in_place: list[str] = []
    for cid, path, at in turn.results:
        if not cid:
            scan.problem(at, path, "missing_id", "a result without a call id", "pair it with its call's id")
        elif answered[cid] >= max(made[cid], 1):
            scan.problem(
                at, path, "duplicate_result", f"a second result for call {cid!r}", "keep one result per call", True
            )
        elif cid in expected:
            in_place.append(cid)
        elif cid in calls_at:
            scan.problem(
                at,
                path,
                "not_adjacent",
                f"the result of call {cid!r} is not right after its call (message {calls_at[cid]})",
                "move it right after the message holding its call",
                True,
            )
        else:
            scan.problem(
                at,
                path,
                "orphan_result",
                f"a result for call {cid!r}, which no earlier assistant message made",
                "remove it, or restore the assistant message holding the call",
                True,
            )
        answered[cid] += 1
    order = list(dict.fromkeys(in_place))
    if order != [cid for cid in dict.fromkeys(expected) if cid in order]:
        first = turn.results[0]
        scan.problem(
            first[2],
            first[1],
            "out_of_order",
            "results are not in the order of their calls",
            "send results in call order",
            True,
        )


# --- repair -----------------------------------------------------------------------------------------


def _repair(data: object, fmt: str, problems: Sequence[Problem]) -> tuple[object, tuple[str, ...]]:
    fixable = [p for p in problems if p.fixable]
    if not fixable:
        return data, ()
    data = copy.deepcopy(data)
    scan = Scan(fix=True)  # undo the format mix-ups in place first, so the format can read the data
    SCANNERS[fmt](_items(data, fmt), scan)
    if isinstance(data, dict):
        _check_tools(data, fmt, scan)
    wire = get_format(fmt)
    try:
        if isinstance(data, dict):
            # Only the transcript is rewritten: the rest of the body (even without "model") stays as given.
            key = _ITEMS_KEY.get(fmt, "messages")
            items = data.get(key)
            fixed: object = (
                data
                if not isinstance(items, list)
                else {
                    **data,
                    key: wire.messages_to_wire(repair_messages(wire.messages_from_wire(items))),
                }
            )
        else:
            fixed = wire.messages_to_wire(repair_messages(wire.messages_from_wire(data)))
    except FormatError as exc:
        by_hand = [str(p) for p in problems if not p.fixable]
        first = f"; fix by hand first: {by_hand[0]}" if by_hand else ""
        raise FormatError(f"cannot repair this transcript ({exc}){first}") from exc
    return fixed, tuple(f"{p.path}: {p.fix}" for p in fixable)


def repair_messages(messages: Sequence[Message]) -> list[Message]:
    """Every call answered right after its message, in call order, once; results of no call removed.

    A call takes the first unused result with its id after it (else before it); one with none gets an
    ``is_error`` "not executed" result. A call without an id is left as it is.
    """
    pool: list[tuple[int, ToolResult]] = [(i, r) for i, m in enumerate(messages) for r in m.tool_results]
    used: set[int] = set()

    def take(position: int, call_id: str) -> ToolResult | None:
        mine = [k for k, (_, r) in enumerate(pool) if r.call_id == call_id and k not in used]
        after = [k for k in mine if pool[k][0] > position]
        if not mine:
            return None
        pick = (after or mine)[0]
        used.add(pick)
        return pool[pick][1]

    out: list[Message] = []
    for i, message in enumerate(messages):
        if message.role == "tool":
            if not (i and messages[i - 1].tool_calls):
                rest = tuple(p for p in message.parts if type(p) is not ToolResult)
                if rest:  # text that stood next to misplaced results stays, as a user turn
                    out.append(Message(role="user", parts=rest))
            continue
        out.append(message)
        if not message.tool_calls:
            continue
        results = [
            take(i, c.id) or ToolResult(call_id=c.id, name=c.name, content=NOT_EXECUTED, is_error=True)
            for c in message.tool_calls
            if c.id
        ]
        nxt = messages[i + 1] if i + 1 < len(messages) and messages[i + 1].role == "tool" else None
        if nxt is not None and nxt.tool_results == results:
            out.append(nxt)  # already right: keep it as it was, stash and all
            continue
        trailing = tuple(p for p in nxt.parts if type(p) is not ToolResult) if nxt else ()
        if results or trailing:
            out.append(Message(role="tool", parts=(*results, *trailing)))
    return out


# --- the loop's debug mode --------------------------------------------------------------------------


DEBUG_FORMATS = ("openai-chat", "anthropic")
"""The two formats with the strictest pairing rules: what passes both, passes the others."""


def check_request(request: Request, formats: Sequence[str] = DEBUG_FORMATS, where: str = "") -> None:
    """Raise :class:`~toolslip.core.errors.FormatError` at the first problem ``request`` has in any of ``formats``."""
    # Server-tool declarations are left out: the pairing does not depend on them, and Chat Completions,
    # one of the formats checked, cannot carry them.
    request = replace(request, model=request.model or "debug", server_tools=())
    for fmt in formats:
        report = check(get_format(fmt).request_to_wire(request), fmt)
        if report.problems:
            raise FormatError(f"{where}as {fmt}: {report.problems[0]}")
