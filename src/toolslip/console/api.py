"""The console's JSON API for applications: the runs, one run, the held calls, and deciding one.

Every route takes ``Authorization: Bearer TOKEN`` (:mod:`toolslip.console.security`). A decision names the
``shown`` hash the list gave for the call (:func:`toolslip.durable.inbox.call_hash`): a call that changed
since, or was decided already, is answered 409 with why.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from ..durable.inbox import DecisionRefused, HeldCall
from .index import RunRow

if TYPE_CHECKING:
    from .state import Console

__all__ = ["add_api_routes"]


def add_api_routes(app: web.Application, console: Console) -> None:
    async def api_runs(request: web.Request) -> web.StreamResponse:
        rows, total = await console.select(request.query)
        now = time.time()
        return _json({"total": total, "runs": [_row_json(r, now) for r in rows]})

    async def api_run(request: web.Request) -> web.StreamResponse:
        run_id = request.match_info["run"]
        entries, held, decided = await console.db(console.run, run_id)
        if not entries:
            return _json({"error": f"no run {run_id!r} in the journal"}, 404)
        row = console.index.rows.get(run_id)
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

    async def api_held(request: web.Request) -> web.StreamResponse:
        calls, decided = await console.db(console.inbox)
        return _json({"held": [_held_json(h, decided) for h in calls]})

    async def api_decide(request: web.Request) -> web.StreamResponse:
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
            call = await console.decide(request.match_info["run"], request.match_info["call"], body, arguments)
        except DecisionRefused as exc:
            return _json({"error": str(exc)}, 409)
        return _json({"decided": {"run_id": call.run_id, "step": call.step, "call_id": call.call_id}})

    app.add_routes(
        [
            web.get("/api/runs", api_runs),
            web.get("/api/runs/{run:.+}", api_run),
            web.get("/api/held", api_held),
            web.post("/api/held/{run:.+}/{call}", api_decide),
        ]
    )


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
        "asked": call.asked,
        "shown": call.hash,
        "decision": done,
    }
