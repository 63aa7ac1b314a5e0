"""``toolslip serve`` on the Gemini, Bedrock Converse and Ollama wires.

Next to the OpenAI and Anthropic routes, the server answers

* ``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` (Google's
  ``generateContent``; SSE with ``?alt=sse``, else one JSON array, as Google answers without it),
* ``POST /model/{modelId}/converse`` and ``/model/{modelId}/converse-stream`` (Bedrock Converse; the
  stream in AWS's binary event-stream framing, :mod:`toolslip.server.eventstream`),
* ``POST /api/chat`` (Ollama; newline-delimited JSON unless ``"stream": false``, Ollama's default being a
  stream),

so programs written for ``google-genai``, ``boto3`` (``bedrock-runtime`` with ``endpoint_url``) and
``ollama`` run against a scripted, local or proxied model offline. The model the client named (in the
URL for Gemini and Bedrock, the body for Ollama) is echoed back, and the served model answers.

Each route reads the body with the format's ``request_from_wire``, asks the model, and writes the answer
with ``response_to_wire``, adding what the real service adds (:class:`_Wire`): ids in its shape (Gemini's
23-character ``responseId``, Bedrock's ``tooluse_…``, Ollama's ``call_…``), the usage sub-fields and
timings its SDK types declare. Errors come back as the service writes them: Google's ``{"error": {"code",
"message", "status"}}`` (with a ``BadRequest`` detail naming the field), AWS's ``{"message"}`` with the
error's name in ``x-amzn-ErrorType`` (``ValidationException``...), Ollama's ``{"error": "..."}``.
A stream is cut into the service's chunks by the format's stream module (``gemini_stream``,
``bedrock_stream``, ``ollama_stream``) and framed here; the local model's text is sent as it is decoded
(:mod:`.live`), the rest when its answer is complete.
"""

from __future__ import annotations

import dataclasses
import functools
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Protocol

import orjson
from aiohttp import web

from ..core.errors import FormatError, ProviderError, ToolslipError
from ..core.messages import Message, ModelResponse, Request, Usage
from ..core.model import Model
from ..formats import bedrock, bedrock_stream, gemini, gemini_stream, ollama, ollama_stream
from ..formats.sse import encode
from . import eventstream
from .cache import PromptCache
from .checks import Check, Rejection
from .echo import Echo
from .live import Live
from .wire_checks import check_converse, check_gemini, check_ollama, not_local

__all__ = ["ROUTES", "add_routes", "error_response"]

ROUTES = (
    "POST /v1beta/models/{model}:generateContent, POST /v1beta/models/{model}:streamGenerateContent (and /v1/...), "
    "POST /model/{modelId}/converse, POST /model/{modelId}/converse-stream, POST /api/chat"
)
_LOWER = "0123456789abcdefghijklmnopqrstuvwxyz"
# Tool entries a format keeps verbatim that the client runs, or that mean no tool at all (a cache marker)
_CLIENT_TOOL_KEYS = frozenset({"functionDeclarations", "function_declarations", "toolSpec", "cachePoint"})
_URLSAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


class Trace(Protocol):
    """The request's log record (the server's ``_Trace``): what was asked, what it cost, what failed."""

    asked: object
    usage: Usage | None
    error: str


class WireFormat(Protocol):
    NAME: str

    def request_from_wire(self, body: object, /) -> Request: ...

    def response_to_wire(self, response: ModelResponse, /) -> dict[str, Any]: ...


@dataclasses.dataclass(frozen=True)
class Clock:
    """When a request began: ``started`` for durations, ``at`` for the timestamps every chunk repeats."""

    started: float = dataclasses.field(default_factory=time.perf_counter)
    at: datetime = dataclasses.field(default_factory=lambda: datetime.now(UTC))


@dataclasses.dataclass(frozen=True)
class _Wire:
    """One service: its format, its ids (``echo``), its error shape, its refusals and what it adds to answers."""

    format: WireFormat
    echo: Echo
    error: Callable[[int, Rejection], web.Response]
    check: Check
    """What the service refuses before any model sees the request."""

    def finish(self, wire: dict[str, Any], model: str, response: ModelResponse, clock: Clock) -> None:
        """Add what the service adds to an answer besides the format's fields."""


class _Gemini(_Wire):
    def finish(self, wire: dict[str, Any], model: str, response: ModelResponse, clock: Clock) -> None:
        wire["modelVersion"] = model
        wire["responseId"] = response.id
        usage = wire.setdefault("usageMetadata", {})
        usage.setdefault("promptTokenCount", response.usage.input_tokens)
        usage.setdefault("candidatesTokenCount", response.usage.output_tokens - response.usage.reasoning_tokens)
        usage.setdefault("totalTokenCount", response.usage.input_tokens + response.usage.output_tokens)
        usage.setdefault("promptTokensDetails", [{"modality": "TEXT", "tokenCount": usage["promptTokenCount"]}])
        for candidate in wire.get("candidates", ()):
            candidate.setdefault("index", 0)


class _Bedrock(_Wire):
    def finish(self, wire: dict[str, Any], model: str, response: ModelResponse, clock: Clock) -> None:
        usage = wire.setdefault("usage", {})
        usage.setdefault("inputTokens", response.usage.input_tokens)
        usage.setdefault("outputTokens", response.usage.output_tokens)
        usage.setdefault("totalTokens", usage["inputTokens"] + usage["outputTokens"])
        wire.setdefault("metrics", {"latencyMs": round((time.perf_counter() - clock.started) * 1000)})


class _Ollama(_Wire):
    def finish(self, wire: dict[str, Any], model: str, response: ModelResponse, clock: Clock) -> None:
        wire["model"] = model
        wire["created_at"] = clock.at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        wire["done"] = True
        wire.setdefault("done_reason", "stop")
        elapsed = round((time.perf_counter() - clock.started) * 1e9)
        wire.setdefault("total_duration", elapsed)
        wire.setdefault("load_duration", 0)
        wire.setdefault("prompt_eval_count", response.usage.input_tokens)
        wire.setdefault("prompt_eval_duration", 0)
        wire.setdefault("eval_count", response.usage.output_tokens)
        wire.setdefault("eval_duration", elapsed)


# --- errors in each service's words -----------------------------------------------------------------

_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    405: "UNIMPLEMENTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_AWS_ERROR = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    405: "UnknownOperationException",
    413: "ValidationException",
    429: "ThrottlingException",
    503: "ServiceUnavailableException",
}


def google_error(status: int, problem: Rejection) -> web.Response:
    """Google's error: ``{"error": {"code", "message", "status", "details"}}``; a field goes in a detail."""
    kind = _GOOGLE_STATUS.get(status, "INTERNAL")
    details: list[dict[str, Any]] = []
    if problem.param:
        violation = {"field": problem.param, "description": problem.message}
        details.append({"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": [violation]})
    body = {"error": {"code": status, "message": problem.message, "status": kind, "details": details}}
    return _json(status, body)


def aws_error(status: int, problem: Rejection) -> web.Response:
    """AWS's error: ``{"message"}``, and the error's name in ``x-amzn-ErrorType``, where botocore reads it."""
    kind = _AWS_ERROR.get(status, "InternalServerException" if status >= 500 else "ValidationException")
    response = _json(status, {"message": problem.message})
    response.headers["x-amzn-ErrorType"] = f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"
    response.headers["x-amzn-RequestId"] = str(uuid.uuid4())
    return response


def ollama_error(status: int, problem: Rejection) -> web.Response:
    """Ollama's error: ``{"error": "..."}``."""
    return _json(status, {"error": problem.message})


def error_response(path: str, status: int, message: str) -> web.Response | None:
    """The error of a request to ``path`` in its service's words, or None when ``path`` is no route of ours."""
    if path.startswith(("/v1beta/", "/v1/models/")):
        return google_error(status, Rejection(message))
    if path.startswith("/model/"):
        return aws_error(status, Rejection(message))
    if path.startswith("/api/"):
        return ollama_error(status, Rejection(message))
    return None


# --- the endpoint -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Endpoint:
    wire: _Wire
    model: Callable[[web.Request], Model]
    trace: Callable[[], Trace]
    streamed: bool | None
    """The route streams (Converse-stream), or not; None: the body says (Ollama's ``stream``, default true)."""
    cache: Callable[[web.Request], PromptCache | None]

    async def handle(self, http: web.Request) -> web.StreamResponse:
        return await self.answer(http, http.match_info.get("model"))

    async def answer(self, http: web.Request, named: str | None) -> web.StreamResponse:
        """Answer ``http``; ``named`` is the model the URL names (Gemini, Bedrock), else the body's."""
        clock = Clock()
        try:
            body = orjson.loads(await http.read())
        except orjson.JSONDecodeError as exc:
            return self._fail(400, Rejection(f"the request body is not valid JSON: {exc}"))
        if not isinstance(body, dict):
            return self._fail(400, Rejection("the request body must be a JSON object"))
        asked = named or body.get("model")
        self.trace().asked = asked
        rejected = self.wire.check(body)
        if rejected is not None:
            return self._fail(400, rejected)
        if not isinstance(asked, str):  # Ollama's body named its model with a number, a list...
            return self._fail(400, Rejection("model must be a string", "model"))
        stream = self.streamed if self.streamed is not None else body.pop("stream", True) is not False
        try:
            request = self.wire.format.request_from_wire(body)
        except FormatError as exc:
            return self._fail(400, Rejection(str(exc), exc.path or None))
        hosted = [key for item in request.extra_tools for key in item if key not in _CLIENT_TOOL_KEYS]
        if hosted:
            return self._fail(400, Rejection(not_local(hosted), "tools"))
        # Google streams one JSON array without alt=sse: nothing of it can be sent before the end
        live = self._live(http, asked, clock) if stream and not self._array(http) else None
        try:
            model, blank = self.model(http), dataclasses.replace(request, model="")
            response = await (live.answer(model, blank) if live is not None else model.complete(blank))
        except ToolslipError as exc:
            if live is not None and live.out is not None:  # the stream had begun: it can only stop short
                self.trace().error = str(exc)
                return await live.cut()
            if isinstance(exc, ProviderError):
                return self._fail(exc.status if 400 <= exc.status < 600 else 502, Rejection(str(exc)))
            return self._fail(500, Rejection(f"the model behind toolslip serve failed: {exc}"))
        if (counted := self.cache(http)) is not None:  # a model with no cache of its own: count the service's
            usage = counted.account(self.wire.format.NAME, body, response.usage)
            response = dataclasses.replace(response, usage=usage)
        response = self.wire.echo.prepare(dataclasses.replace(response, model=asked))
        self.trace().usage = response.usage
        if live is not None:
            return await live.finish(self._framed(response, asked, clock))
        wire = self._wire_body(response, asked, clock)
        return _json(200, self._gemini_chunks(response, wire) if stream else wire)

    def _array(self, http: web.Request) -> bool:
        """The answer is Gemini's stream as one JSON array (``streamGenerateContent`` without ``alt=sse``)."""
        return self.wire.format.NAME == gemini.NAME and http.query.get("alt") != "sse"

    def _live(self, http: web.Request, asked: str, clock: Clock) -> Live:
        """The streamed answer: the model's text is written as it comes (``Live``), framed as the service does."""
        response_id = self.wire.echo.prepare(ModelResponse(message=Message.assistant(""), stop_reason="end_turn")).id
        media = {bedrock.NAME: "application/vnd.amazon.eventstream", ollama.NAME: "application/x-ndjson"}
        encode = functools.partial(self._framed, asked=asked, clock=clock)
        return Live(http, encode, media.get(self.wire.format.NAME, "text/event-stream"), response_id, asked)

    def _wire_body(self, response: ModelResponse, asked: str, clock: Clock) -> dict[str, Any]:
        """The whole answer as the service writes it, with what it adds besides the format's fields."""
        wire = self.wire.format.response_to_wire(response)
        self.wire.finish(wire, asked, response, clock)
        return wire

    def _framed(self, response: ModelResponse, asked: str, clock: Clock) -> list[bytes]:
        """The answer cut as the service streams it (by the format's stream module), with its echoes, framed."""
        wire = self._wire_body(response, asked, clock)
        name = self.wire.format.NAME
        if name == bedrock.NAME:
            events = bedrock_stream.response_to_events(response)
            events[-1] = ("metadata", {key: wire[key] for key in ("usage", "metrics") if key in wire})
            return [eventstream.event(kind, orjson.dumps(data)) for kind, data in events]
        if name == ollama.NAME:
            lines = ollama_stream.response_to_chunks(response)
            head = {"model": wire["model"], "created_at": wire["created_at"]}
            lines = [{**line, **head} for line in lines[:-1]] + [{**wire, "message": lines[-1]["message"]}]
            return [orjson.dumps(line) + b"\n" for line in lines]
        return [encode(orjson.dumps(chunk).decode()) for chunk in self._gemini_chunks(response, wire)]

    @staticmethod
    def _gemini_chunks(response: ModelResponse, wire: dict[str, Any]) -> list[dict[str, Any]]:
        chunks = gemini_stream.response_to_chunks(response)
        ids = {key: wire[key] for key in ("modelVersion", "responseId", "usageMetadata")}
        return [{**chunk, **ids} for chunk in chunks]  # Google repeats them in every chunk

    def _fail(self, status: int, problem: Rejection) -> web.Response:
        self.trace().error = problem.message
        return self.wire.error(status, problem)


def _json(status: int, body: object) -> web.Response:
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


_GEMINI = _Gemini(gemini, Echo(("", _URLSAFE, 23), ("", _LOWER, 8)), google_error, check_gemini)
_BEDROCK = _Bedrock(bedrock, Echo(("", _URLSAFE, 0), ("tooluse_", _URLSAFE, 22)), aws_error, check_converse)
_OLLAMA = _Ollama(ollama, Echo(("", _URLSAFE, 0), ("call_", _LOWER, 8)), ollama_error, check_ollama)


def add_routes(
    app: web.Application,
    model: Callable[[web.Request], Model],
    trace: Callable[[], Trace],
    cache: Callable[[web.Request], PromptCache | None] = lambda http: None,
) -> None:
    """Answer the three wires in ``app``; ``model`` finds the served model, ``trace`` the request's record,
    ``cache`` the prompt cache the server counts (:mod:`.cache`), if any."""

    def route(wire: _Wire, streamed: bool | None) -> Callable[[web.Request], Any]:
        return _Endpoint(wire, model, trace, streamed, cache).handle

    methods = {
        "generateContent": _Endpoint(_GEMINI, model, trace, False, cache),
        "streamGenerateContent": _Endpoint(_GEMINI, model, trace, True, cache),
    }

    async def gemini_route(http: web.Request) -> web.StreamResponse:
        # One route for both methods: a {name} cannot end at the ':' that starts Google's method suffix.
        name, _, method = http.match_info["target"].rpartition(":")
        endpoint = methods.get(method)
        if endpoint is None or not name:
            raise web.HTTPNotFound(reason=f"models/{name}:{method} is not a method this server answers")
        return await endpoint.answer(http, name)

    app.router.add_post("/v1beta/models/{target}", gemini_route)
    app.router.add_post("/v1/models/{target}", gemini_route)  # Gemini's stable API (google-genai with a base_url)
    # {model:.+}: an inference-profile ARN holds a '/' (sent as %2F)
    app.router.add_post("/model/{model:.+}/converse", route(_BEDROCK, False))
    app.router.add_post("/model/{model:.+}/converse-stream", route(_BEDROCK, True))
    app.router.add_post("/api/chat", route(_OLLAMA, None))
