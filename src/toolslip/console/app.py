"""The console's web application on aiohttp: its pages, their live updates, and the decision form.

The JSON API is in :mod:`~toolslip.console.api`, the UI message stream in :mod:`~toolslip.console.uistream`,
what they share (the journal, its index, the worker thread) in :mod:`~toolslip.console.state`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import orjson
from aiohttp import web

from ..core.errors import ConfigError
from ..core.messages import ToolResult, part_from_dict
from ..durable.inbox import DecisionRefused
from ..durable.journal import response_from_dict
from ..durable.journal_store import Entry
from .api import add_api_routes
from .assets import CSS, JS
from .html import Html, clean, html, join
from .pages import inbox_items, page, run_rows, runs_page, timeline
from .reports import report_page, report_sections, reports_page, trial_note
from .security import HEADERS
from .state import Console, query_int
from .uistream import add_stream_routes

__all__ = ["make_app"]


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
            # A run id may hold slashes (the fleet's WORKFLOW/STEP): its pages end the path, tried first.
            web.get("/runs/{run:.+}/live", routes.run_live),
            web.get("/runs/{run:.+}/value", routes.value),
            web.get("/runs/{run:.+}", routes.run),
            web.get("/compare", routes.compare),
            web.get("/evals", routes.reports),
            web.get("/evals/{report}", routes.report),
            web.get("/evals/{report}/live", routes.report_live),
            web.get("/inbox", routes.inbox),
            web.get("/inbox/live", routes.inbox_live),
            web.post("/inbox/decide", routes.decide_form),
        ]
    )
    add_api_routes(app, console)
    add_stream_routes(app, console)

    async def following(app: web.Application) -> AsyncIterator[None]:
        await console.refresh()  # the whole journal read once before the first page
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

    async def runs(self, request: web.Request) -> web.StreamResponse:
        rows, total = await self.c.select(request.query)
        state, query = request.query.get("state", ""), request.query.get("q", "")
        states = await self.c.db(self.c.index.states)
        return _page(page("Runs", runs_page(rows, total, states, state, query), active="runs"))

    async def runs_live(self, request: web.Request) -> web.StreamResponse:
        async def render() -> str:
            return run_rows((await self.c.select(request.query))[0])

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
            '<a href="/compare?a={}">compare with…</a></p>{}',
            run_id,
            state,
            state,
            f" ({row.message})" if row is not None and row.message else "",
            run_id,
            trial_note(row) if row is not None else Html(""),
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
        run_id, seq, call = (
            request.match_info["run"],
            query_int(request.query.get("seq"), 0),
            request.query.get("call", ""),
        )
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
            row = self.c.index.rows.get(run_id)
            note = trial_note(row) if row is not None else Html("")
            cols.append(
                html(
                    '<div><h2><a href="/runs/{}">{}</a></h2>{}<ol class="timeline">{}</ol></div>',
                    run_id,
                    run_id,
                    note,
                    items,
                )
            )
        return _page(page("compare", join([form, html('<div class="cols">{}</div>', join(cols))]), active="compare"))

    # --- eval reports -------------------------------------------------------------------------------

    async def reports(self, request: web.Request) -> web.StreamResponse:
        reports = await self.c.db(self.c.index.reports)
        return _page(page("eval reports", reports_page(reports), active="evals"))

    async def report(self, request: web.Request) -> web.StreamResponse:
        report = request.match_info["report"]
        runs = (await self.c.db(self.c.index.reports)).get(report)
        if not runs:
            return _page(
                page("No such report", html('<p class="error">No eval report {} in the journal.</p>', report)), 404
            )
        return _page(page(f"eval {report}", report_page(report, runs), active="evals"))

    async def report_live(self, request: web.Request) -> web.StreamResponse:
        report = request.match_info["report"]

        async def render() -> str:
            return report_sections((await self.c.db(self.c.index.reports)).get(report, []))

        return await self._live(request, render)

    # --- the inbox ------------------------------------------------------------------------------------

    async def _inbox_items(self) -> str:
        calls, decided = await self.c.db(self.c.inbox)
        items = join(inbox_items(calls, self.c.guard.csrf, decided=decided))
        return items or html('<li id="empty" data-v="0">Nothing is waiting for a decision.</li>')

    async def inbox(self, request: web.Request) -> web.StreamResponse:
        items = await self._inbox_items()
        body = html(
            '<h1>Inbox: calls waiting for a decision</h1><ul class="inbox" id="live" data-live="/inbox/live">{}</ul>',
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
            await self.c.decide(run_id, call_id, {**form, "approved": approved}, arguments)
        except DecisionRefused as exc:
            return _back(request, run_id, str(exc))
        return _back(request, run_id, "")

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
        return _page(page("refused", html('<p class="error">{}</p><p><a href="{}">back</a></p>', error, target)), 409)
    raise web.HTTPSeeOther(target)


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
