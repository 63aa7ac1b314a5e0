"""The local endpoint: any toolslip model behind the OpenAI and Anthropic HTTP protocols.

``toolslip serve`` (or :func:`serve` in a test) answers

* ``POST /v1/chat/completions`` in the OpenAI Chat Completions format,
* ``POST /v1/responses`` in the OpenAI Responses format (stateless: the whole conversation comes in
  ``input``; ``previous_response_id``, ``conversation``, a stored ``prompt`` and ``background: true`` get
  a 400, since nothing is stored),
* ``POST /v1/messages`` in the Anthropic Messages format, message threads included (``thread``: the
  conversation is held in memory under each reply's id, so a ``continue`` sends only the new turn, as the
  SDKs' tool runners do by default; :mod:`.threads`),
* ``GET /v1/models`` listing the one model served (in a shape both official SDKs accept),
* and Gemini's ``generateContent``, Bedrock's Converse and Ollama's ``/api/chat`` (:mod:`.wires`),

so the official ``openai`` and ``anthropic`` SDKs, or any tool built on them, can talk to a scripted,
local or proxied model over loopback. Each request is parsed into the neutral transcript with the
format's ``request_from_wire``, answered by ``model.complete`` and written back with
``response_to_wire``. The answer carries what the real service adds (``_serve_echo``): ids in the
service's shape (``chatcmpl-…``, ``msg_01…``, ``resp_…``; tool ids ``call_…`` / ``toolu_01…``), the model
name the client asked for, and on the Responses API the request's settings echoed back. A Chat answer
made of several text parts (Claude's cited answers) is one string, as Chat Completions has no other
spelling for it; ``"n": 3`` asks the model three times.

Requests the real services refuse are refused the same way (``_serve_checks``): an empty ``messages``, an
Anthropic request without ``max_tokens``, a tool named ``"a b"``, a result with no call... Errors come back
in the protocol's own error JSON with the status a real service would use: 400 with the service's message,
``param`` and ``code``, 404 an unknown route. A request that declares server tools (Anthropic
``web_search_20250305``, OpenAI hosted tools, ``web_search_options``) gets a 400 saying they are not
available locally: only the provider can run them.

Every request is logged on the ``toolslip.server`` logger at INFO, one line each: method, path, status,
the model asked for, tokens in+out and milliseconds (``toolslip serve`` prints them unless ``--quiet``).
Fields the served model received and could not act on (the local model cannot return logprobs or
reason at a chosen effort) are not refused: the line ends ``ignored=logprobs,reasoning`` and the answer
carries the same list in an ``x-toolslip-ignored`` header. A setting the model refuses outright (a key no
service defines) is a 400, never a 500.
Every answer has a request id (``x-request-id`` and ``request-id`` headers), which both SDKs expose.

A request with ``"stream": true`` is answered as the provider streams (``text/event-stream``): OpenAI
``chat.completion.chunk`` events ending in ``data: [DONE]`` (with the usage chunk when
``stream_options.include_usage`` asks for it), the Responses API's numbered ``response.created`` ...
``response.completed`` events, Anthropic's named ``message_start`` ... ``message_stop`` events. The local
model's text is sent as it is decoded (:mod:`.live`); calls, usage and the stop reason follow when its
answer is complete, and any other model's answer is complete before the first event. Text and arguments
are cut into small deltas, so the SDKs' streaming helpers work. When text went out early, the ignored
fields are named in the log line only: the headers were sent before the answer was complete.

The module is longer than most (about 475 lines) because the three protocols' endpoints, error shapes and
stream frames, and the app's options (injected overloads, the counted prompt cache), are one table read
together in :func:`create_app`; the other wires are in :mod:`.wires`.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from ..core.errors import ConfigError, FormatError, ProviderError, ToolslipError
from ..core.messages import Message, ModelResponse, Request, Usage
from ..core.model import IGNORED, Model
from ..formats import (
    anthropic,
    anthropic_stream,
    openai_chat,
    openai_chat_stream,
    openai_responses,
    openai_responses_stream,
)
from ..formats.server_tools import declared_server_tools
from ..formats.sse import encode
from .cache import PromptCache
from .checks import Check, Rejection, check_chat, check_messages, check_responses
from .echo import ECHOES, Echo, request_ids
from .faults import fault_middleware
from .live import HungUp, Live
from .threads import ThreadRefused, Threads, Turn
from .wire_checks import not_local
from .wires import ROUTES as OTHER_ROUTES
from .wires import add_routes, error_response

__all__ = ["create_app", "serve"]

log = logging.getLogger("toolslip.server")

MAX_BODY = 64 * 1024 * 1024  # base64 images make large bodies legitimate
IGNORED_HEADER = "x-toolslip-ignored"
"""Response header naming the request fields the served model ignored (say ``logprobs,reasoning``)."""
ROUTES = f"POST /v1/chat/completions, POST /v1/messages, POST /v1/responses, GET /v1/models, {OTHER_ROUTES}"
_MODEL: web.AppKey[Model] = web.AppKey("model", Model)
_CACHE: web.AppKey[PromptCache | None] = web.AppKey("cache")


@dataclasses.dataclass
class _Trace:
    """What one request did, for its log line and its request id (aiohttp runs each request in a task)."""

    ids: tuple[str, str] = dataclasses.field(default_factory=request_ids)
    """This request's id in OpenAI's shape and in Anthropic's, sent in each SDK's header."""
    asked: object = None
    """The ``model`` the client asked for."""
    usage: Usage | None = None
    ignored: list[str] = dataclasses.field(default_factory=list)
    """Request fields the model received and did not act on (logged, and sent as ``x-toolslip-ignored``)."""
    error: str = ""


_TRACE: contextvars.ContextVar[_Trace] = contextvars.ContextVar("toolslip_serve_trace")


def _trace() -> _Trace:
    trace = _TRACE.get(None)
    if trace is None:  # a handler called without the app's middleware (a unit test of an endpoint)
        trace = _Trace()
        _TRACE.set(trace)
    return trace


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


def openai_error(status: int, problem: Rejection, request_id: str) -> dict[str, Any]:
    """OpenAI's error body: ``{"error": {"message", "type", "param", "code"}}``."""
    kind = "server_error" if status >= 500 else _ERROR_TYPES.get(status, "invalid_request_error")
    return {"error": {"message": problem.message, "type": kind, "param": problem.param, "code": problem.code}}


def anthropic_error(status: int, problem: Rejection, request_id: str) -> dict[str, Any]:
    """Anthropic's error body: ``{"type": "error", "error": {"type", "message"}, "request_id"}``.

    Anthropic has no field slot: the message starts with the field, dotted (``messages.2.content: ...``).
    """
    kind = _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
    message = problem.message
    if problem.param and message.startswith(problem.param):
        message = _dotted(problem.param) + message[len(problem.param) :]
    error: dict[str, Any] = {"type": kind, "message": message}
    if problem.details:
        error["details"] = problem.details
    return {"type": "error", "error": error, "request_id": request_id}


def _dotted(path: str) -> str:
    """``messages[2].content`` as Anthropic spells a field: ``messages.2.content``."""
    return path.replace("[", ".").replace("]", "")


ErrorShape = Callable[[int, Rejection, str], dict[str, Any]]
Frames = Callable[[list[ModelResponse], object], list[tuple[str | None, dict[str, Any]]]]


def openai_frames(responses: list[ModelResponse], options: object) -> list[tuple[str | None, dict[str, Any]]]:
    """The chunks OpenAI streams for ``responses`` (one per choice); ``options`` is ``stream_options``."""
    usage = isinstance(options, Mapping) and options.get("include_usage") is True
    chunks: list[dict[str, Any]] = []
    for index, response in enumerate(responses):
        for chunk in openai_chat_stream.response_to_chunks(response, include_usage=False):
            for choice in chunk["choices"]:
                choice["index"] = index
            chunks.append({**chunk, "usage": None} if usage else chunk)
    if usage:
        total = openai_chat_stream.response_to_chunks(_summed(responses), include_usage=True)[-1]
        chunks.append(total)
    return [(None, c) for c in chunks]


def anthropic_frames(responses: list[ModelResponse], options: object) -> list[tuple[str | None, dict[str, Any]]]:
    """The events Anthropic streams for the one response (it has no stream options)."""
    return list(anthropic_stream.response_to_events(responses[0]))


def responses_frames(responses: list[ModelResponse], options: object) -> list[tuple[str | None, dict[str, Any]]]:
    """The events the Responses API streams for the one response (its one option only pads events)."""
    return list(openai_responses_stream.response_to_events(responses[0]))


def _summed(responses: list[ModelResponse]) -> ModelResponse:
    """The first response carrying the usage of all of them (what ``n`` choices cost together)."""
    total = sum((r.usage for r in responses[1:]), responses[0].usage)
    return dataclasses.replace(responses[0], usage=total)


def _chat_body(responses: list[ModelResponse]) -> dict[str, Any]:
    """One ``chat.completion`` holding a choice per response, usage summed."""
    body = openai_chat.response_to_wire(_summed(responses))
    for index, response in enumerate(responses[1:], 1):
        body["choices"].append({**openai_chat.response_to_wire(response)["choices"][0], "index": index})
    return body


@dataclasses.dataclass(frozen=True)
class _Endpoint:
    wire: ServerFormat
    check: Check
    error: ErrorShape
    frames: Frames
    stateful: tuple[str, ...] = ()
    """Body fields that point at state kept by the provider, which a stateless server cannot honour."""
    choices: bool = False
    """The protocol has ``n`` (Chat Completions): the model is asked once per choice."""
    done: bytes = b""
    """What ends the event stream after the last event (Chat Completions: ``data: [DONE]``)."""
    threads: Threads | None = None
    """Where the protocol's threads are held (Anthropic's ``thread``), for a server that keeps them."""

    @property
    def echo(self) -> Echo:
        return ECHOES[self.wire.NAME]

    async def handle(self, http: web.Request) -> web.StreamResponse:
        try:
            body = orjson.loads(await http.read())
        except orjson.JSONDecodeError as exc:
            return self._fail(400, Rejection(f"the request body is not valid JSON: {exc}"))
        if not isinstance(body, dict):
            return self._fail(400, Rejection("the request body must be a JSON object"))
        _trace().asked = body.get("model")
        try:
            turn = self.threads.begin(body) if self.threads is not None else None
        except ThreadRefused as exc:
            return self._fail(exc.status, exc.rejection)
        try:
            return await self._respond(http, turn.body if turn is not None else body, turn)
        finally:
            if turn is not None:
                turn.release()  # nothing to release once its reply is kept

    async def _respond(self, http: web.Request, body: dict[str, Any], turn: Turn | None) -> web.StreamResponse:
        rejected = self.check(body)
        if rejected is not None:
            return self._fail(400, rejected)
        # Taken out here, so a proxied model is not asked to stream (or for n choices) by Settings.extra.
        stream, options = body.pop("stream", False), body.pop("stream_options", None)
        count = (body.pop("n", None) or 1) if self.choices else 1
        for field in self.stateful:
            if body.get(field) not in (None, False):
                return self._fail(400, Rejection(_stateless(field), field))
        try:
            request = self.wire.request_from_wire(body)
        except FormatError as exc:
            return self._fail(400, Rejection(str(exc), exc.path or None))
        hosted = declared_server_tools(self.wire.NAME, request.extra_tools, body)
        if hosted:
            return self._fail(400, Rejection(not_local(hosted), "tools"))
        live = self._live(http, body, options, request.model) if stream else None
        try:
            responses = [await self._answer(http.app[_MODEL], request, live if count == 1 else None)]
            responses += [await self._answer(http.app[_MODEL], request, None) for _ in range(count - 1)]
        except ToolslipError as exc:
            if live is not None and live.out is not None:  # the stream had begun: it can only stop short
                _trace().error = str(exc)
                return await live.cut()
            return self._refused(exc)
        responses = [dataclasses.replace(r, id=responses[0].id) for r in responses]  # n choices, one id
        if (cache := http.app[_CACHE]) is not None:  # a model with no cache of its own: count the service's
            responses = [dataclasses.replace(r, usage=cache.account(self.wire.NAME, body, r.usage)) for r in responses]
        _trace().usage = _summed(responses).usage
        _trace().ignored = sorted({name for r in responses for name in r.extra.get(IGNORED, ())})
        if turn is not None:
            turn.keep(responses[0].id, self.wire.response_to_wire(responses[0]))
        if live is not None:
            return await live.finish(self._encoded(responses, body, options))
        wire = _chat_body(responses) if self.choices else self.wire.response_to_wire(responses[0])
        self.echo.finish(wire, body, responses[0].id)
        return _json(200, wire)

    def _live(self, http: web.Request, body: dict[str, Any], options: object, model: str) -> Live:
        """The streamed answer: the model's text is written as it comes (``Live``) in this protocol's events."""
        response_id = self.echo.prepare(ModelResponse(message=Message.assistant(""), stop_reason="end_turn")).id
        return Live(http, lambda r: self._encoded([r], body, options), "text/event-stream", response_id, model)

    def _encoded(self, responses: list[ModelResponse], body: dict[str, Any], options: object) -> list[bytes]:
        """The whole event stream for ``responses``, with what the service adds to each event."""
        frames = self.frames(responses, options)
        for _, data in frames:
            self.echo.finish_event(data, body, responses[0].id)
        encoded = [encode(orjson.dumps(data).decode(), name) for name, data in frames]
        return [*encoded, self.done] if self.done else encoded

    async def _answer(self, model: Model, request: Request, live: Live | None) -> ModelResponse:
        # The served model decides which model answers; the client's name is echoed back, as the
        # services echo the model asked for.
        asked = dataclasses.replace(request, model="")
        response = await (live.answer(model, asked) if live is not None else model.complete(asked))
        return self.echo.prepare(dataclasses.replace(response, model=request.model))

    def _refused(self, exc: ToolslipError) -> web.Response:
        """The model's error before anything was sent, as the status a client can act on."""
        if isinstance(exc, ProviderError):
            return self._fail(exc.status if 400 <= exc.status < 600 else 502, Rejection(str(exc)))
        if isinstance(exc, ConfigError):  # a setting the served model refuses: the client's to fix, as a 400 says
            return self._fail(400, Rejection(str(exc)))
        return self._fail(500, Rejection(f"the model behind toolslip serve failed: {exc}"))

    def _fail(self, status: int, problem: Rejection) -> web.Response:
        trace = _trace()
        trace.error = problem.message
        return _json(status, self.error(status, problem, trace.ids[1]))


def _stateless(field: str) -> str:
    return (
        f"{field} is not supported: toolslip serve stores no responses, conversations or prompts. Send the "
        "whole conversation in input (function_call and function_call_output items included), in the "
        "foreground, instead."
    )


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
async def _log_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One line per request on the ``toolslip.server`` logger: what was asked, the answer, tokens, time."""
    trace = _Trace()
    _TRACE.set(trace)
    start = time.perf_counter()
    response = await handler(request)
    if log.isEnabledFor(logging.INFO):
        usage, error = trace.usage, trace.error
        tokens = f"{usage.input_tokens}+{usage.output_tokens}" if usage is not None else "-"
        log.info(
            "%s %s %d model=%s tokens=%s %d ms%s%s",
            request.method,
            request.path,
            response.status,
            trace.asked or "-",
            tokens,
            round((time.perf_counter() - start) * 1000),
            f" ignored={','.join(trace.ignored)}" if trace.ignored else "",
            f": {error}" if error else "",
        )
    return response


@web.middleware
async def _protocol_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Unknown routes, wrong methods and crashes answer in the caller's protocol, never as HTML."""
    try:
        return await handler(request)
    except HungUp as exc:  # nothing to answer: the stream already began and its reader is gone
        _trace().error = str(exc)
        return exc.response
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        status, message = exc.status, f"{request.method} {request.path}: {exc.reason}; this server answers {ROUTES}"
    except Exception as exc:  # a crash in the model must still answer in the caller's protocol
        log.exception("toolslip serve: %s %s failed", request.method, request.path)
        status, message = 500, f"internal error: {type(exc).__name__}: {exc}"
    return _error(request, status, message)


def _error(request: web.Request, status: int, message: str) -> web.Response:
    """An error in the caller's protocol: Gemini, Bedrock and Ollama clients get their own service's error
    (wires.py), Anthropic callers Anthropic's, every other caller OpenAI's."""
    anthropic_caller = request.path.startswith("/v1/messages") or "anthropic-version" in request.headers
    shape: ErrorShape = anthropic_error if anthropic_caller else openai_error
    trace = _trace()
    trace.error = message
    return error_response(request.path, status, message) or _json(
        status, shape(status, Rejection(message), trace.ids[1])
    )


async def _request_id_headers(request: web.Request, response: web.StreamResponse) -> None:
    # OpenAI's SDK reads x-request-id and Anthropic's request-id; each ignores the other's.
    trace = _trace()
    response.headers["x-request-id"], response.headers["request-id"] = trace.ids
    if trace.ignored:
        response.headers[IGNORED_HEADER] = ",".join(trace.ignored)


def create_app(
    model: Model, *, faults: float = 0.0, seed: int | None = None, cache: bool | None = None
) -> web.Application:
    """An aiohttp application serving ``model`` over all three protocols (run it with aiohttp's runners).

    ``faults``: the share of model requests refused as overloaded (:mod:`.faults`), drawn from ``seed``.
    ``cache``: count prompt-cache reads and writes as the services do (:mod:`.cache`); ``None``: for the
    scripted and local models, which have no cache of their own."""
    middlewares: list[Middleware] = [_log_requests, _protocol_errors]
    if faults:
        middlewares.append(fault_middleware(faults, _error, seed))
    app = web.Application(client_max_size=MAX_BODY, middlewares=middlewares)
    app[_MODEL] = model
    if cache is None:
        cache = model.name.split(":")[0] in ("scripted", "local")
    app[_CACHE] = PromptCache() if cache else None
    app.on_response_prepare.append(_request_id_headers)
    chat = _Endpoint(openai_chat, check_chat, openai_error, openai_frames, choices=True, done=encode("[DONE]"))
    app.router.add_post("/v1/chat/completions", chat.handle)
    responses = _Endpoint(
        openai_responses,
        check_responses,
        openai_error,
        responses_frames,
        ("previous_response_id", "conversation", "prompt", "background"),
    )
    app.router.add_post("/v1/responses", responses.handle)
    messages = _Endpoint(anthropic, check_messages, anthropic_error, anthropic_frames, threads=Threads())
    app.router.add_post("/v1/messages", messages.handle)
    app.router.add_get("/v1/models", _models)
    add_routes(app, lambda http: http.app[_MODEL], _trace, lambda http: http.app[_CACHE])
    return app


@contextlib.asynccontextmanager
async def serve(
    model: Model,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    faults: float = 0.0,
    seed: int | None = None,
    cache: bool | None = None,
) -> AsyncIterator[str]:
    """Serve ``model`` until the block ends; yields the base URL (``http://127.0.0.1:PORT``).

    Port 0 picks a free port. OpenAI clients use ``BASE + "/v1"`` as their base URL, Anthropic clients
    ``BASE`` itself.
    """
    runner = web.AppRunner(create_app(model, faults=faults, seed=seed, cache=cache), access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        yield f"http://{shown}:{bound[1]}"
    finally:
        await runner.cleanup()
