"""The console's pages: the runs, one run's timeline, two runs side by side, the inbox of held calls.

Pages are rendered on the server from the journal (no front-end build); a page that changes while it is
open has one element with ``data-live``, whose children each carry an ``id`` and a version ``data-v``: the
console's script swaps in children whose version changed, so a form being filled in is left alone.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import orjson

from ..core._display import dollars, local_time
from ..core.messages import Reasoning, ToolCall, ToolResult, message_from_dict, part_from_dict
from ..durable.inbox import HeldCall, describe_decision
from ..durable.journal import response_from_dict
from ..durable.journal_store import Entry
from .html import Html, fold, html, join
from .index import RunRow

__all__ = ["STATES", "inbox_items", "page", "run_rows", "runs_page", "timeline"]

STATES = ("running", "paused", "completed", "failed", "interrupted", "max_steps")


def page(title: str, body: Html, *, active: str = "") -> Html:
    nav = join(
        html('<a href="{}"{}>{}</a>', href, Html(' class="on"') if name == active else Html(""), name)
        for name, href in (("runs", "/runs"), ("inbox", "/inbox"), ("compare", "/compare"), ("evals", "/evals"))
    )
    return html(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{} · toolslip console</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/console.css"><script src="/static/console.js" defer></script>'
        "</head><body><header><b>toolslip console</b><nav>{}</nav></header><main>{}</main></body></html>",
        title,
        nav,
        body,
    )


def _when(at: float) -> str:
    return local_time(at) if at else "-"


def _duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() if value is not None else "null"


# --- runs ---------------------------------------------------------------------------------------------


def run_rows(rows: Sequence[RunRow]) -> Html:
    now = time.time()
    return join(
        html(
            '<tr id="run-{}" data-v="{}"><td><a href="/runs/{}">{}</a></td><td class="state {}">{}</td><td>{}</td>'
            '<td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td class="n">{}</td><td>{}</td>'
            '<td class="n">{}</td><td>{}</td><td class="prompt">{}</td></tr>',
            r.run_id,
            f"{r.last_seq}:{r.state(now)}:{r.host}",
            r.run_id,
            r.run_id,
            r.state(now),
            r.state(now) + (f" ({r.message})" if r.message else ""),
            r.model,
            r.steps,
            r.tool_calls,
            f"{r.tokens:,}",
            dollars(r.cost) if r.cost is not None else "-",
            _when(r.started),
            _duration(r.updated - r.started),
            r.host,
            r.prompt[:120],
        )
        for r in rows
    )


def runs_page(rows: Sequence[RunRow], total: int, states: Mapping[str, int], state: str, query: str) -> Html:
    options = join(
        html('<option value="{}"{}>{}</option>', s, Html(" selected") if s == state else Html(""), label)
        for s, label in [("", "any state"), *((s, f"{s} ({states.get(s, 0)})") for s in sorted({*STATES, *states}))]
    )
    live = "/runs/live?" + urlencode({"state": state, "q": query})
    return html(
        '<h1>Runs</h1><form class="filter" method="get" action="/runs"><select name="state">{}</select>'
        '<input name="q" value="{}" placeholder="search run id, model, prompt, host"><button>filter</button></form>'
        '<p class="count">{} runs match; the newest {} are shown. The list updates as runs write the journal.</p>'
        "<table><thead><tr><th>run</th><th>state</th><th>model</th><th>steps</th><th>tool calls</th>"
        "<th>tokens</th><th>cost</th><th>started</th><th>duration</th><th>holder</th><th>prompt</th></tr></thead>"
        '<tbody id="live" data-live="{}">{}</tbody></table>',
        options,
        query,
        total,
        len(rows),
        live,
        run_rows(rows),
    )


# --- one run --------------------------------------------------------------------------------------------


def _value_link(run_id: str, seq: int, call: str = "") -> str:
    return f"/runs/{run_id}/value?" + urlencode({"seq": seq, "call": call})


def _outcome(data: Mapping[str, Any], result: ToolResult) -> str:
    if data.get("duplicate_of"):
        return "deduplicated"
    if data.get("not_rerun"):
        return "not executed"
    if data.get("refused") or result.outcome == "refused":
        return "refused"
    if result.outcome is not None:
        return {"duplicate": "deduplicated", "not_executed": "not executed"}.get(result.outcome, result.outcome)
    if not data.get("executed"):
        return "answered without running"
    return "failed" if result.is_error else "ran"


def timeline(entries: Sequence[Entry], held: Sequence[HeldCall], csrf: str, *, decided: Mapping[str, Any]) -> Html:
    """Each entry of a run as one item: the model's steps, each tool execution, decisions, the end; then the
    calls it holds, each with its decision form."""
    if not entries:
        return Html("")
    reader = _Timeline(entries[0].run_id)
    items = [item for e in entries if (item := reader.item(e)) is not None]
    for begun in reader.started.values():  # started, no end: running now, or cut off
        items.append(
            html(
                '<li id="s-{}" data-v="{}" class="tool_start"><b>step {}</b> tool <code>{}</code> ({}) started, '
                "no recorded end yet</li>",
                begun.seq,
                begun.seq,
                begun.step,
                begun.data["call"]["name"],
                begun.data["call"]["id"],
            )
        )
    items += inbox_items(held, csrf, decided=decided, link=False)
    return join(items)


class _Timeline:
    """Reads a run's entries in order, remembering the calls each step asked for and when each started."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.model = ""
        self.calls: dict[tuple[int, str], ToolCall] = {}
        self.started: dict[tuple[int, str], Entry] = {}

    def item(self, e: Entry) -> Html | None:
        if e.kind == "tool_start":
            self.started[e.step, e.data["call"]["id"]] = e
            return None  # shown with its end
        head = html('<span class="at">{}</span> <b>step {}</b> ', _when(e.at), e.step)
        render = getattr(self, f"_{e.kind}", None)
        body = render(e, head) if render is not None else html("{}{} {}", head, e.kind, fold(_json(e.data)))
        return html('<li id="e-{}" data-v="{}" class="{}">{}</li>', e.seq, e.seq, e.kind, body)

    def _start(self, e: Entry, head: Html) -> Html:
        self.model = str(e.data.get("model", ""))
        messages = join(
            html('<div class="msg"><i>{}</i> {}</div>', m.role, fold(m.text, more=_value_link(self.run_id, e.seq)))
            for m in map(message_from_dict, e.data.get("messages", ()))
        )
        return html("{}started with model <code>{}</code>{}", head, self.model, messages)

    def _model(self, e: Entry, head: Html) -> Html:
        response = response_from_dict(e.data["response"])
        parts = [
            html(
                '<div class="reasoning"><i>{}</i>{}</div>',
                "reasoning summary" if p.summary else "reasoning",
                fold(p.text),
            )
            for p in response.message.parts
            if isinstance(p, Reasoning) and p.text
        ]
        if response.message.text:
            parts.append(html('<div class="text">{}</div>', fold(response.message.text)))
        for c in response.message.tool_calls:
            self.calls[e.step, c.id] = c
            args = _json(c.arguments) if c.arguments is not None else (c.raw_arguments or "")
            more = _value_link(self.run_id, e.seq, c.id)
            parts.append(
                html('<div class="call">asks <code>{}</code> ({}){}</div>', c.name, c.id, fold(args, more=more))
            )
        u = response.usage
        spent = f"{u.input_tokens:,} in / {u.output_tokens:,} out"
        price = _step_cost(self.model, u)
        spent += f", {dollars(price)}" if price is not None else ""
        return html("{}model answered ({}; {}){}", head, response.stop_reason, spent, join(parts))

    def _tool_end(self, e: Entry, head: Html) -> Html:
        d = e.data
        result = part_from_dict(d["result"])
        assert isinstance(result, ToolResult)
        begun = self.started.pop((e.step, result.call_id), None)
        call = self.calls.get((e.step, result.call_id))
        gates = join(
            html(
                '<div class="gate">{} {}: {}{}</div>',
                g.get("gate"),
                g.get("decision"),
                g.get("reason"),
                f" (untrusted sources: {', '.join(g.get('sources') or ())})" if g.get("sources") else "",
            )
            for g in d.get("gates", ())
        )
        outcome = _outcome(d, result)
        text = "(the same result as the earlier identical call)" if d.get("duplicate_of") else result.text
        return html(
            '{}tool <code>{}</code> ({}) <span class="outcome {}">{}</span> in {}'
            '<div class="args">arguments {}</div><div class="result">result {}</div>{}',
            head,
            result.name or (call.name if call else "?"),
            result.call_id,
            outcome.replace(" ", "-"),
            outcome,
            _duration(e.at - begun.at) if begun is not None else "-",
            fold(_json(call.arguments) if call is not None else ""),
            fold(text, more=_value_link(self.run_id, e.seq)),
            gates,
        )

    def _decision(self, e: Entry, head: Html) -> Html:
        edited, where = e.data.get("arguments"), (e.step, e.data.get("call_id", ""))
        if edited is not None and where in self.calls:  # the call ran with these: show them with its result
            self.calls[where] = dataclasses.replace(self.calls[where], arguments=edited)
        return html('{}<span class="decision">decision: {}</span>', head, describe_decision(e.data))

    def _finish(self, e: Entry, head: Html) -> Html:
        d = e.data
        u = d.get("usage") or {}
        spent = f"{u.get('input_tokens', 0):,} in / {u.get('output_tokens', 0):,} out"
        spent += f", {dollars(d['cost'])}" if d.get("cost") is not None else ""
        stop = d.get("stop_reason")
        return html(
            '{}finished: <span class="state {}">{}</span> ({}){}',
            head,
            stop,
            stop,
            spent,
            fold(str(d.get("output", ""))),
        )

    def _abort(self, e: Entry, head: Html) -> Html:
        status = e.data.get("status")
        return html('{}<span class="state {}">{}</span>: {}', head, status, status, e.data.get("error"))

    def _eval(self, e: Entry, head: Html) -> Html:
        d = e.data
        detail = fold(str(d["detail"])) if d.get("detail") else Html("")
        return html(
            '{}eval check: <span class="verdict {}">{}</span> (reward {}){}',
            head,
            d.get("reason"),
            d.get("reason"),
            d.get("reward"),
            detail,
        )

    def _resume(self, e: Entry, head: Html) -> Html:
        return html("{}resumed", head)

    def _ask(self, e: Entry, head: Html) -> Html:
        d = e.data
        return html("{}asks about <code>{}</code> ({}): {}", head, d.get("tool"), d.get("call_id"), d.get("reason"))


def _step_cost(model: str, usage: Any) -> float | None:
    """A step's cost when genai-prices knows the model; never raises (a page must render)."""
    from ..agent.pricing import cost, prices_installed

    if not prices_installed():
        return None
    try:
        return cost(model, usage)
    except Exception:  # an unknown model or a price lookup failing: no figure rather than no page
        return None


def inbox_items(held: Sequence[HeldCall], csrf: str, *, decided: Mapping[str, Any], link: bool = True) -> list[Html]:
    """One form per held call; the form carries the hash of the call as shown, so a decision binds to it."""
    items = []
    for h in held:
        key = f"{h.run_id}/{h.step}/{h.call_id}"
        done = decided.get(key)
        run = html('run <a href="/runs/{}">{}</a> ', h.run_id, h.run_id) if link else Html("")
        what = "cut off by an interruption: run it again?" if h.interrupted else "waiting for a decision"
        what = "asked by the running process, which waits for your answer" if h.asked else what
        head = html(
            '{}step {}: <code>{}</code> ({}) {}<div class="why">{}</div>',
            run,
            h.step,
            h.tool,
            h.call_id,
            what,
            h.reason,
        )
        if done is not None:
            verdict = html('<div class="decided">{}; the run goes on where it is owned</div>', describe_decision(done))
            items.append(html('<li id="h-{}" data-v="done" class="held">{}{}</li>', key, head, verdict))
            continue
        edit = (
            Html("")
            if not h.editable
            else html(
                "<label>arguments (edit to approve with changes)"
                '<textarea name="arguments" rows="6">{}</textarea></label>',
                _json(dict(h.arguments)),
            )
        )
        shown = Html("") if h.editable else fold(_json(dict(h.arguments)))
        form = html(
            '<form method="post" action="/inbox/decide" class="decide">'
            '<input type="hidden" name="csrf" value="{}"><input type="hidden" name="run" value="{}">'
            '<input type="hidden" name="call" value="{}"><input type="hidden" name="shown" value="{}">{}{}'
            '<label>reason (the model reads it when you deny)<input name="note"></label>'
            '<label>your name<input name="by" class="by"></label>'
            '<button name="verdict" value="approve">approve</button> '
            '<button name="verdict" value="deny">deny</button></form>',
            csrf,
            h.run_id,
            h.call_id,
            h.hash,
            shown,
            edit,
        )
        items.append(html('<li id="h-{}" data-v="open" class="held">{}{}</li>', key, head, form))
    return items
