"""The console's web application on aiohttp: pages, live updates, decisions, and the JSON API.

Every read and write of the journal happens on one worker thread (a SQLite connection belongs to the
thread that opened it, and the journal's reads are blocking calls that must not stall the event loop).
A background task refreshes the run index every :data:`POLL` seconds; live pages and the inbox wait on
it, so a run written by another process or machine shows within about that much time.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import orjson
from aiohttp import web

from ..core.errors import ConfigError
from ..core.messages import ToolResult, part_from_dict
from ..durable.inbox import DecisionRefused, HeldCall, decide, held_calls, inbox_decisions
from ..durable.journal import response_from_dict
from ..durable.journal_store import Entry
from ..durable.stores import LeasedStore
from .assets import CSS, JS
from .html import Html, clean, html, join
from .index import RunIndex, RunRow
from .pages import inbox_items, page, run_rows, runs_page, timeline
from .security import HEADERS, Guard

__all__ = ["POLL", "Console", "make_app"]

POLL = 0.2
"""Seconds between two reads of the journal's new entries."""

T = TypeVar("T")
_INBOX_RUNS = 200
"""At most this many paused or interrupted runs (the newest) are looked into for held calls."""


@dataclass(kw_only=True)
class Console:
    """The state one console serves: the journal, its index, who decides by default, the stream agent."""

    store: LeasedStore
    token: str
    user: str = field(default_factory=getpass.getuser)
    """Recorded as who decided when a form names no one."""
    loopback: bool = True
    agent: Any = None
    """The agent ``/api/chat`` runs, if any: an :class:`~toolslip.Agent` carrying :attr:`journal`'s hooks
    (``journal.wrap(Dedup(), Approval())``), so its held calls wait in the inbox."""
    journal: Any = None
    """The :class:`~toolslip.Journal` of :attr:`agent`, on the same journal as :attr:`store`."""
    index: RunIndex = field(init=False)
    guard: Guard = field(init=False)

    def __post_init__(self) -> None:
        self.index = RunIndex(self.store)
        self.guard = Guard(self.token, loopback=self.loopback)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="console-journal")
        self._changed = asyncio.Event()
        self._held: dict[str, tuple[int, list[HeldCall]]] = {}

    async def db(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn`` on the journal's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._worker, lambda: fn(*args, **kwargs))

    async def follow(self) -> None:
        """Fold the journal's new entries into the index, forever; wakes the live pages on a change."""
        while True:
            with contextlib.suppress(Exception):  # a journal briefly locked or away: try again next time
                if await self.db(self.index.refresh):
                    self._changed.set()
                    self._changed = asyncio.Event()
            await asyncio.sleep(POLL)

    async def changed(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)

    # --- held calls -----------------------------------------------------------------------------------

    def held(self, rows: list[RunRow]) -> list[HeldCall]:
        """The held calls of ``rows`` (paused or interrupted runs), from each run's entries (cached by version)."""
        calls: list[HeldCall] = []
        for row in rows:
            cached = self._held.get(row.run_id)
            if cached is None or cached[0] != row.last_seq:
                cached = self._held[row.run_id] = (row.last_seq, held_calls(self.store.entries(row.run_id)))
            calls += cached[1]
        return calls

    def decided(self, calls: list[HeldCall]) -> dict[str, Any]:
        """Decisions already in the inbox for ``calls``, by ``run/step/call``."""
        out: dict[str, Any] = {}
        for run_id in {c.run_id for c in calls}:
            for d in inbox_decisions(self.store, run_id, self.store.entries(run_id)):
                out[f"{run_id}/{d['step']}/{d['call_id']}"] = d
        return out

    def inbox(self) -> tuple[list[HeldCall], dict[str, Any]]:
        calls = self.held(self.index.held()[:_INBOX_RUNS])
        return calls, self.decided(calls)

    def run(self, run_id: str) -> tuple[list[Entry], list[HeldCall], dict[str, Any]]:
        entries = self.store.entries(run_id)
        row = self.index.rows.get(run_id)
        running = row is not None and row.state(time.time()) == "running"
        calls = held_calls(entries, running=running)
        return entries, calls, self.decided(calls)


def make_app(console: Console) -> web.Application:
    app = web.Application(middlewares=[console.guard.middleware], client_max_size=64 * 1024**2)
    routes = _Routes(console)
    app.add_routes(
        [
            web.get("/", routes.home),
            web.get("/static/console.js", routes.script),
            web.get("/static/console.css", routes.style),
            web.get("/runs", routes.runs),
            web.get("/runs/live", routes.runs_live),
            web.get("/runs/{run}", routes.run),
            web.get("/runs/{run}/live", routes.run_live),
            web.get("/runs/{run}/value", routes.value),
            web.get("/compare", routes.compare),
            web.get("/inbox", routes.inbox),
            web.get("/inbox/live", routes.inbox_live),
            web.post("/inbox/decide", routes.decide_form),
            web.get("/api/runs", routes.api_runs),
            web.get("/api/runs/{run}", routes.api_run),
            web.get("/api/held", routes.api_held),
            web.post("/api/held/{run}/{call}", routes.api_decide),
        ]
    )
    from .uistream import add_stream_routes

    add_stream_routes(app, console)

    async def following(app: web.Application) -> AsyncIterator[None]:
        await console.db(console.index.refresh)
        task = asyncio.create_task(console.follow())
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    app.cleanup_ctx.append(following)
    return app


def _page(body: Html, status: int = 200) -> web.Response:
    return web.Response(text=body, content_type="text/html", charset="utf-8", status=status)


class _Routes:
    def __init__(self, console: Console) -> None:
        self.c = console

    async def home(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPSeeOther("/runs")

    async def script(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text=JS, content_type="text/javascript", charset="utf-8")

    async def style(self, request: web.Request) -> web.StreamResponse:
        return web.Response(text=CSS, content_type="text/css", charset="utf-8")

    # --- runs -----------------------------------------------------------------------------------------

    async def _select(self, request: web.Request) -> tuple[list[RunRow], int]:
        """The runs the request's filter asks for (read on the journal's thread: the index changes there)."""
        limit = _int(request.query.get("limit"), 200)
        state, query = request.query.get("state", ""), request.query.get("q", "")
        return await self.c.db(self.c.index.select, state=state, query=query, limit=limit)

    async def runs(self, request: web.Request) -> web.StreamResponse:
        rows, total = await self._select(request)
        state, query = request.query.get("state", ""), request.query.get("q", "")
        states = await self.c.db(self.c.index.states)
        return _page(page("Runs", runs_page(rows, total, states, state, query), active="runs"))

    async def runs_live(self, request: web.Request) -> web.StreamResponse:
        async def render() -> str:
            return run_rows((await self._select(request))[0])

        return await self._live(request, render)

    async def run(self, request: web.Request) -> web.StreamResponse:
        run_id = request.match_info["run"]
        entries, held, decided = await self.c.db(self.c.run, run_id)
        if not entries:
            return _page(page("No such run", html('<p class="error">No run {} in the journal.</p>', run_id)), 404)
        row = self.c.index.rows.get(run_id)
        state = row.state(time.time()) if row is not None else "?"
        head = html(
            '<h1>Run {}</h1><p>state <span class="state {}">{}</span>{} · '
            '<a href="/compare?a={}">compare with…</a></p>',
            run_id,
            state,
            state,
            f" ({row.message})" if row is not None and row.message else "",
            run_id,
        )
        body = timeline(entries, held, self.c.guard.csrf, decided=decided)
        live = html('<ol class="timeline" id="live" data-live="/runs/{}/live">{}</ol>', run_id, body)
        return _page(page(f"run {run_id}", join([head, live])))

    async def run_live(self, request: web.Request) -> web.StreamResponse:
        run_id = request.match_info["run"]

        async def render() -> str:
            entries, held, decided = await self.c.db(self.c.run, run_id)
            return timeline(entries, held, self.c.guard.csrf, decided=decided)

        return await self._live(request, render)

    async def value(self, request: web.Request) -> web.StreamResponse:
        """One value in full, as plain text: a tool's result, a call's arguments, a message."""
        run_id, seq, call = request.match_info["run"], _int(request.query.get("seq"), 0), request.query.get("call", "")
        entries = await self.c.db(self.c.store.entries, run_id)
        entry = next((e for e in entries if e.seq == seq), None)
        text = _value_text(entry, call) if entry is not None else None
        if text is None:
            raise web.HTTPNotFound(text="no such value\n")
        response = web.Response(text=clean(text), content_type="text/plain", charset="utf-8")
        response.headers["Content-Security-Policy"] = "sandbox"  # no script, no same origin, whatever it holds
        return response

    async def compare(self, request: web.Request) -> web.StreamResponse:
        a, b = request.query.get("a", ""), request.query.get("b", "")
        form = html(
            '<h1>Two runs side by side</h1><form method="get" action="/compare" class="filter">'
            '<input name="a" value="{}" placeholder="run id"> <input name="b" value="{}" placeholder="run id">'
            " <button>compare</button></form>",
            a,
            b,
        )
        cols = []
        for run_id in (a, b):
            if not run_id:
                cols.append(Html("<div></div>"))
                continue
            entries, held, decided = await self.c.db(self.c.run, run_id)
            items = (
                timeline(entries, held, self.c.guard.csrf, decided=decided) if entries else html("<li>no such run</li>")
            )
            cols.append(
                html('<div><h2><a href="/runs/{}">{}</a></h2><ol class="timeline">{}</ol></div>', run_id, run_id, items)
            )
        return _page(page("compare", join([form, html('<div class="cols">{}</div>', join(cols))]), active="compare"))

    # --- the inbox ------------------------------------------------------------------------------------

    async def _inbox_items(self) -> str:
        calls, decided = await self.c.db(self.c.inbox)
        items = join(inbox_items(calls, self.c.guard.csrf, decided=decided))
        return items or html('<li id="empty" data-v="0">Nothing is waiting for a decision.</li>')

    async def inbox(self, request: web.Request) -> web.StreamResponse:
        items = await self._inbox_items()
        error = html('<p class="error">{}</p>', request.query["error"]) if "error" in request.query else Html("")
        body = html(
            '<h1>Inbox: calls waiting for a decision</h1>{}<ul class="inbox" id="live" data-live="/inbox/live">{}</ul>',
            error,
            Html(items),
        )
        return _page(page("inbox", body, active="inbox"))

    async def inbox_live(self, request: web.Request) -> web.StreamResponse:
        return await self._live(request, self._inbox_items)

    async def decide_form(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        run_id, call_id = str(form.get("run", "")), str(form.get("call", ""))
        approved = form.get("verdict") == "approve"
        arguments: Any = None
        if "arguments" in form and approved:
            try:
                arguments = orjson.loads(str(form["arguments"]))
            except orjson.JSONDecodeError as exc:
                return _back(request, run_id, f"the edited arguments are not JSON: {exc}")
            if not isinstance(arguments, dict):
                return _back(request, run_id, "the edited arguments must be a JSON object")
        try:
            await self._decide(run_id, call_id, form, approved, arguments)
        except DecisionRefused as exc:
            return _back(request, run_id, str(exc))
        return _back(request, run_id, "")

    async def _decide(self, run_id: str, call_id: str, given: Any, approved: bool, arguments: Any) -> HeldCall:
        row = self.c.index.rows.get(run_id)
        running = row is not None and row.state(time.time()) == "running"
        return await self.c.db(
            decide,
            self.c.store,
            run_id,
            call_id,
            shown=str(given.get("shown", "")),
            approved=approved,
            note=str(given.get("note") or ""),
            by=str(given.get("by") or "") or self.c.user,
            arguments=arguments,
            running=running,
        )

    # --- the JSON API ---------------------------------------------------------------------------------

    async def api_runs(self, request: web.Request) -> web.StreamResponse:
        rows, total = await self._select(request)
        now = time.time()
        return _json({"total": total, "runs": [_row_json(r, now) for r in rows]})

    async def api_run(self, request: web.Request) -> web.StreamResponse:
        run_id = request.match_info["run"]
        entries, held, decided = await self.c.db(self.c.run, run_id)
        if not entries:
            return _json({"error": f"no run {run_id!r} in the journal"}, 404)
        row = self.c.index.rows.get(run_id)
        return _json(
            {
                "run": _row_json(row, time.time()) if row is not None else {"run_id": run_id},
                "entries": [
                    {"seq": e.seq, "at": e.at, "kind": e.kind, "step": e.step, "key": e.key, "data": e.data}
                    for e in entries
                ],
                "held": [_held_json(h, decided) for h in held],
            }
        )

    async def api_held(self, request: web.Request) -> web.StreamResponse:
        calls, decided = await self.c.db(self.c.inbox)
        return _json({"held": [_held_json(h, decided) for h in calls]})

    async def api_decide(self, request: web.Request) -> web.StreamResponse:
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _json({"error": "the body must be a JSON object: {approved, shown, note?, by?, arguments?}"}, 400)
        if not isinstance(body, dict) or not isinstance(body.get("approved"), bool) or "shown" not in body:
            return _json({"error": "the body must be a JSON object: {approved, shown, note?, by?, arguments?}"}, 400)
        arguments = body.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            return _json({"error": "arguments must be a JSON object"}, 400)
        try:
            call = await self._decide(
                request.match_info["run"], request.match_info["call"], body, body["approved"], arguments
            )
        except DecisionRefused as exc:
            return _json({"error": str(exc)}, 409)
        return _json({"decided": {"run_id": call.run_id, "step": call.step, "call_id": call.call_id}})

    # --- live pages -----------------------------------------------------------------------------------

    async def _live(self, request: web.Request, render: Callable[[], Awaitable[str]]) -> web.StreamResponse:
        """Server-Sent Events: the live element's children, sent again whenever they change."""
        response = web.StreamResponse(headers={**HEADERS, "Content-Type": "text/event-stream"})
        await response.prepare(request)
        last = None
        try:
            while True:
                text = await render()
                if text != last:
                    data = "".join(f"data: {line}\n" for line in text.split("\n"))
                    await response.write((data + "\n").encode())
                    last = text
                else:
                    await response.write(b": still here\n\n")
                await self.c.changed(15.0)
        except (ConnectionResetError, ConfigError):
            pass
        return response


def _back(request: web.Request, run_id: str, error: str) -> web.StreamResponse:
    """After a form: back to the page it came from (the run or the inbox), with the error if any."""
    came = request.headers.get("Referer", "")
    target = f"/runs/{run_id}" if f"/runs/{run_id}" in came else "/inbox"
    if error:
        if target == "/inbox":
            from urllib.parse import urlencode

            raise web.HTTPSeeOther("/inbox?" + urlencode({"error": error}))
        return _page(page("refused", html('<p class="error">{}</p><p><a href="{}">back</a></p>', error, target)), 409)
    raise web.HTTPSeeOther(target)


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text else default
    except ValueError:
        return default


def _json(value: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(value), content_type="application/json", status=status)


def _row_json(row: RunRow, now: float) -> dict[str, Any]:
    return {
        "run_id": row.run_id,
        "state": row.state(now),
        "message": row.message,
        "model": row.model,
        "steps": row.steps,
        "tool_calls": row.tool_calls,
        "input_tokens": row.input_tokens,
        "output_tokens": row.output_tokens,
        "cost": row.cost,
        "started_at": row.started,
        "updated_at": row.updated,
        "holder_host": row.host,
        "prompt": row.prompt,
    }


def _held_json(call: HeldCall, decided: dict[str, Any]) -> dict[str, Any]:
    done = decided.get(f"{call.run_id}/{call.step}/{call.call_id}")
    return {
        "run_id": call.run_id,
        "step": call.step,
        "call_id": call.call_id,
        "tool": call.tool,
        "arguments": dict(call.arguments),
        "reason": call.reason,
        "interrupted": call.interrupted,
        "shown": call.hash,
        "decision": done,
    }


def _value_text(entry: Entry, call: str) -> str | None:
    if entry.kind == "tool_end":
        result = part_from_dict(entry.data["result"])
        return result.text if isinstance(result, ToolResult) else None
    if entry.kind == "model":
        found = next((c for c in response_from_dict(entry.data["response"]).message.tool_calls if c.id == call), None)
        if found is None:
            return response_from_dict(entry.data["response"]).message.text
        return (
            orjson.dumps(found.arguments, option=orjson.OPT_INDENT_2).decode()
            if found.arguments
            else found.raw_arguments
        )
    if entry.kind == "start":
        from ..core.messages import message_from_dict

        return "\n\n".join(f"{m.role}: {m.text}" for m in map(message_from_dict, entry.data.get("messages", ())))
    return None
