"""``toolslip show RUN_ID``: one run's journal, entry by entry, with full tool arguments and outputs."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from ..core._display import dollars, local_time
from ..core.errors import ConfigError
from ..core.messages import Message, ToolCall, ToolResult, message_from_dict, part_from_dict
from ..durable.inbox import describe_decision
from ..durable.journal import Entry, response_from_dict
from . import EXIT_OK
from .durable import JOURNAL_HELP
from .runs import open_store

__all__ = ["format_entry", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("show", help="print one run from the journal")
    parser.add_argument("run_id", metavar="RUN_ID", help="as listed by `toolslip runs`")
    parser.add_argument("--journal", metavar="PATH|URL", help=JOURNAL_HELP)
    parser.add_argument("--json", action="store_true", help="print the raw entries as JSON lines")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    entries = open_store(args.journal, read_only=True).entries(args.run_id)
    if not entries:
        raise ConfigError(f"no run {args.run_id!r} in the journal; `toolslip runs` lists the runs it holds")
    for entry in entries:
        if args.json:
            line = {"seq": entry.seq, "at": entry.at, "kind": entry.kind, "step": entry.step, "key": entry.key}
            print(json.dumps({**line, "data": entry.data}, ensure_ascii=False))
        else:
            print(format_entry(entry))
    return EXIT_OK


def format_entry(entry: Entry) -> str:
    """One entry as the lines a person reads."""
    when = local_time(entry.at, "%H:%M:%S")
    head = f"[{when}] step {entry.step} {entry.kind}"
    data = entry.data
    if entry.kind == "start":
        meta = {k: v for k, v in (data.get("meta") or {}).items() if v is not None}
        lines = [f"{head}: model {data.get('model')} {_json(meta) if meta else ''}".rstrip()]
        for message in map(message_from_dict, data.get("messages", ())):
            lines += _message_lines(message)
        return "\n".join(lines)
    if entry.kind == "model":
        response = response_from_dict(data["response"])
        lines = [f"{head}: stop {response.stop_reason}"]
        if response.message.text:
            lines.append(f"  text: {response.message.text}")
        lines += [f"  call {c.id} {c.name} {_arguments(c)}" for c in response.message.tool_calls]
        return "\n".join(lines)
    if entry.kind == "tool_start":
        call = data["call"]
        effects = ",".join(data.get("effects", ()))
        again = " (run again after the interruption)" if data.get("rerun") else ""
        return f"{head}: {call['name']} ({call['id']}) effects {effects} key {entry.key}{again}"
    result = part_from_dict(data["result"]) if entry.kind == "tool_end" else None
    if isinstance(result, ToolResult):
        how = "ran" if data.get("executed") else "answered without running"
        if data.get("duplicate_of"):  # the result is stored once, with the call that ran
            return f"{head}: {result.call_id} answered as a duplicate of the earlier call with key {entry.key}"
        why = " (refused)" if data.get("refused") else ""
        why = " (not run again: it may have happened)" if data.get("not_rerun") else why
        error = " ERROR" if result.is_error else ""
        gates = "".join(
            f"\n  gate {g.get('gate')} {g.get('decision')}: {g.get('reason')}"
            + (f" (untrusted sources: {', '.join(g['sources'])})" if g.get("sources") else "")
            for g in data.get("gates", ())
        )
        return f"{head}: {result.call_id} {how}{why}{error}{gates}\n{textwrap.indent(result.text, '  ')}"
    if entry.kind == "abort":
        return f"{head}: {data.get('status')}: {data.get('error', '')}"
    if entry.kind == "decision":
        return f"{head}: {describe_decision(data)}"
    if entry.kind == "eval":  # an eval trial's verdict (toolslip eval --journal)
        detail = f": {data['detail']}" if data.get("detail") else ""
        return f"{head}: check {data.get('reason')} (reward {data.get('reward')}){detail}"
    if entry.kind == "ask":  # the run waits for the inbox (journal.inbox_approver)
        call = f"{data.get('call_id')} {data.get('tool')} {_json(data.get('arguments'))}"
        return f"{head}: {call} asked: {data.get('reason')}"
    if entry.kind == "finish":
        pending = "".join(
            f"\n  pending approval: {p['tool']} {_json(p['arguments'])} ({p['call_id']})"
            for p in data.get("pending", ())
        )
        usage = data.get("usage") or {}
        spent = f"tokens {usage.get('input_tokens', 0)} in / {usage.get('output_tokens', 0)} out"
        spent += f", cost {dollars(data['cost'])}" if data.get("cost") is not None else ""
        return f"{head}: {data.get('stop_reason')} ({spent}): {data.get('output', '')}{pending}"
    return f"{head}: {_json(data)}"


def _message_lines(message: Message) -> list[str]:
    """A message of the history a run started with: its text, and each tool call and result in it (the
    earlier turns of a conversation are mostly calls and results, which have no text)."""
    lines = (
        [f"  {message.role}: {message.text}"]
        if message.text or not (message.tool_calls or message.tool_results)
        else []
    )
    lines += [f"  {message.role}: call {c.id} {c.name} {_arguments(c)}" for c in message.tool_calls]
    for result in message.tool_results:
        error = " ERROR" if result.is_error else ""
        lines.append(f"  {message.role}: {result.call_id} {result.name or ''}{error}".rstrip())
        lines.append(textwrap.indent(result.text, "    "))
    return lines


def _arguments(call: ToolCall) -> str:
    return _json(call.arguments) if call.arguments is not None else str(call.raw_arguments)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
