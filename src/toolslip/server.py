"""The local endpoint: any toolslip model behind the OpenAI and Anthropic HTTP protocols.

``toolslip serve`` (or :func:`serve` in a test) answers

* ``POST /v1/chat/completions`` in the OpenAI Chat Completions format,
* ``POST /v1/responses`` in the OpenAI Responses format (stateless: the whole conversation comes in
  ``input``; ``previous_response_id`` and ``conversation`` get a 400, since nothing is stored),
* ``POST /v1/messages`` in the Anthropic Messages format,
* ``GET /v1/models`` listing the one model served (in a shape both official SDKs accept),

so the official ``openai`` and ``anthropic`` SDKs, or any tool built on them, can talk to a scripted,
local or proxied model over loopback. Each request is parsed into the neutral transcript with the
format's ``request_from_wire``, answered by ``model.complete`` and written back with
``response_to_wire``. Errors come back in the protocol's own error JSON, with the status a real service
would use: 400 names the bad field (``messages[2].content``), 404 an unknown route. A request that
declares server tools (Anthropic ``web_search_20250305``, OpenAI hosted tools, ``web_search_options``)
gets a 400 saying they are not available locally: only the provider can run them.

A request with ``"stream": true`` is answered as the provider streams (``text/event-stream``): OpenAI
``chat.completion.chunk`` events ending in ``data: [DONE]`` (with the usage chunk when
``stream_options.include_usage`` asks for it), the Responses API's numbered ``response.created`` ...
``response.completed`` events, Anthropic's named ``message_start`` ... ``message_stop`` events. The
model's answer is complete before the first event is sent (a model's own stream is not forwarded yet);
text and arguments are then cut into small deltas, so the SDKs' streaming helpers work.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler

from .errors import FormatError, ProviderError, ToolslipError
from .formats import (
    anthropic,
    anthropic_stream,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from .formats.sse import encode
from .messages import ModelResponse, Request
from .model import Model
from .server_tools import declared_server_tools

__all__ = ["create_app", "serve"]

log = logging.getLogger("toolslip.server")

MAX_BODY = 64 * 1024 * 1024  # base64 images make large bodies legitimate
_MODEL: web.AppKey[Model] = web.AppKey("model", Model)

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class ServerFormat(Protocol):
    """The two functions of a wire-format module that the server side needs, and its name."""

    NAME: str

    def request_from_wire(self, body: dict[str, Any]) -> Request: ...

    def response_to_wire(self, response: ModelResponse) -> dict[str, Any]: ...


def openai_error(status: int, message: str, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    kind = "server_error" if status >= 500 else _ERROR_TYPES.get(status, "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}


def anthropic_error(status: int, message: str, param: str | None = None) -> dict[str, Any]:
    """Anthropic's error body: ``{"type": "error", "error": {"type", "message"}}`` (no field slot)."""
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


ErrorShape = Callable[[int, str, str | None], dict[str, Any]]


def openai_frames(response: ModelResponse, options: object) -> list[bytes]:
    """The SSE body OpenAI streams for ``response``; ``options`` is the request's ``stream_options``."""
    usage = isinstance(options, Mapping) and options.get("include_usage") is True
    chunks = openai_chat_stream.response_to_chunks(response, include_usage=usage)
    return [*(encode(orjson.dumps(c).decode()) for c in chunks), encode("[DONE]")]


def anthropic_frames(response: ModelResponse, options: object) -> list[bytes]:
    """The SSE body Anthropic streams for ``response`` (it has no stream options)."""
    return _named_frames(anthropic_stream.response_to_events(response))


def responses_frames(response: ModelResponse, options: object) -> list[bytes]:
    """The SSE body the Responses API streams for ``response`` (its one option only pads events)."""
    return _named_frames(openai_responses_stream.response_to_events(response))


def _named_frames(events: list[tuple[str, dict[str, Any]]]) -> list[bytes]:
    return [encode(orjson.dumps(data).decode(), name) for name, data in events]


Frames = Callable[[ModelResponse, object], list[bytes]]


@dataclasses.dataclass(frozen=True)
class _Endpoint:
    wire: ServerFormat
    error: ErrorShape
    frames: Frames
    stateful: tuple[str, ...] = ()
    """Body fields that point at state kept by the provider, which a stateless server cannot honour."""

    async def handle(self, http: web.Request) -> web.StreamResponse:
        try:
            body = orjson.loads(await http.read())
        except orjson.JSONDecodeError as exc:
            return self._fail(400, f"the request body is not valid JSON: {exc}")
        if not isinstance(body, dict):
            return self._fail(400, "the request body must be a JSON object")
        # Taken out here, so a proxied model is not asked to stream by Settings.extra.
        stream, options = body.pop("stream", False), body.pop("stream_options", None)
        for field in self.stateful:
            if body.get(field) is not None:
                return self._fail(400, _stateless(field), field)
        try:
            request = self.wire.request_from_wire(body)
        except FormatError as exc:
            return self._fail(400, str(exc), exc.path or None)
        hosted = declared_server_tools(self.wire.NAME, request.extra_tools, body)
        if hosted:
            return self._fail(400, _not_local(hosted), "tools")
        # The served model decides which model answers; the client's name is echoed back.
        asked = request.model
        try:
            response = await http.app[_MODEL].complete(dataclasses.replace(request, model=""))
            if not response.model:
                response = dataclasses.replace(response, model=asked)
            if stream:
                return await _event_stream(http, self.frames(response, options))
            return _json(200, self.wire.response_to_wire(response))
        except ProviderError as exc:
            return self._fail(exc.status if 400 <= exc.status < 600 else 502, str(exc))
        except ToolslipError as exc:
            return self._fail(500, f"the model behind toolslip serve failed: {exc}")

    def _fail(self, status: int, message: str, param: str | None = None) -> web.Response:
        return _json(status, self.error(status, message, param))


def _not_local(hosted: list[str]) -> str:
    return (
        f"server tools are not available locally: {', '.join(hosted)} would run on the provider's "
        "infrastructure, and toolslip serve runs client tools only. Remove them from the request, "
        "or send it to the provider."
    )


def _stateless(field: str) -> str:
    return (
        f"{field} is not supported: toolslip serve stores no responses or conversations. Send the whole "
        "conversation in input (function_call and function_call_output items included) instead."
    )


async def _event_stream(http: web.Request, frames: list[bytes]) -> web.StreamResponse:
    out = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await out.prepare(http)
    for frame in frames:
        await out.write(frame)
    await out.write_eof()
    return out


def _json(status: int, body: dict[str, Any]) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


async def _models(http: web.Request) -> web.Response:
    name = http.app[_MODEL].name
    # One list readable by both SDKs: OpenAI reads object/created/owned_by, Anthropic type/display_name.
    entry = {
        "id": name,
        "object": "model",
        "created": 0,
        "owned_by": "toolslip",
        "type": "model",
        "display_name": name,
        "created_at": "1970-01-01T00:00:00Z",
    }
    return _json(200, {"object": "list", "data": [entry], "has_more": False, "first_id": name, "last_id": name})


@web.middleware
async def _protocol_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Unknown routes, wrong methods and crashes answer in the caller's protocol, never as HTML."""
    anthropic_caller = request.path.startswith("/v1/messages") or "anthropic-version" in request.headers
    shape: ErrorShape = anthropic_error if anthropic_caller else openai_error
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        known = "POST /v1/chat/completions, POST /v1/messages, POST /v1/responses, GET /v1/models"
        message = f"{request.method} {request.path}: {exc.reason}; this server answers {known}"
        return _json(exc.status, shape(exc.status, message, None))
    except Exception as exc:  # a crash in the model must still answer in the caller's protocol
        log.exception("toolslip serve: %s %s failed", request.method, request.path)
        return _json(500, shape(500, f"internal error: {type(exc).__name__}: {exc}", None))


def create_app(model: Model) -> web.Application:
    """An aiohttp application serving ``model`` over all three protocols (run it with aiohttp's runners)."""
    app = web.Application(client_max_size=MAX_BODY, middlewares=[_protocol_errors])
    app[_MODEL] = model
    app.router.add_post("/v1/chat/completions", _Endpoint(openai_chat, openai_error, openai_frames).handle)
    responses = _Endpoint(openai_responses, openai_error, responses_frames, ("previous_response_id", "conversation"))
    app.router.add_post("/v1/responses", responses.handle)
    app.router.add_post("/v1/messages", _Endpoint(anthropic, anthropic_error, anthropic_frames).handle)
    app.router.add_get("/v1/models", _models)
    return app


@contextlib.asynccontextmanager
async def serve(model: Model, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
    """Serve ``model`` until the block ends; yields the base URL (``http://127.0.0.1:PORT``).

    Port 0 picks a free port. OpenAI clients use ``BASE + "/v1"`` as their base URL, Anthropic clients
    ``BASE`` itself.
    """
    runner = web.AppRunner(create_app(model), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        yield f"http://{shown}:{bound[1]}"
    finally:
        await runner.cleanup()
