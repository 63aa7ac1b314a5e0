"""The thin HTTP layer every hosted provider shares: POST a JSON body, get a JSON body, retry wisely.

Why not the official SDKs: they cost several milliseconds of CPU per call (the OpenAI SDK re-walks the
whole typed request on every call), while a POST of pre-built JSON over a kept-alive aiohttp session
costs a fraction of a millisecond (see ``benchmarks/loop_overhead.py``; ``benchmarks/http_clients.py``
compares aiohttp with the other maintained async clients). aiohttp is imported when the first request is
sent, so ``import toolslip`` stays cheap.

Connections are pooled per event loop, not per model: every transport in a loop shares one connector,
so a model made for one call (``toolslip.run("openai:...")``) reuses the connection the previous call
left open in the same loop. The pool is closed when its loop shuts down.

Retries follow the official SDKs' policy (:mod:`toolslip.providers.retry`).

Streaming (``post_stream``, ``HttpModel.stream``) retries the same way until the first bytes of the
answer arrive; a connection that breaks after that is a retryable :class:`ProviderError` for the caller,
because text already shown cannot be taken back by a silent second attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict

import orjson

from ..core.errors import ConfigError, ProviderError
from ..core.events import CacheBusted
from ..core.messages import ModelResponse, Request
from ..core.model import CURRENT_RUN
from ..core.streaming import ResponseDone, StreamEvent
from ..formats import WireFormat
from ..formats.sse import ServerSentEvent, SSEDecoder
from .deadlines import Deadlines
from .retry import RETRY_STATUSES, error_message, retry_delay

if TYPE_CHECKING:
    import aiohttp
    from yarl import URL

__all__ = ["HttpModel", "HttpOptions", "HttpTransport", "check_base_url", "error_message", "retry_delay"]


class HttpTransport:
    """One provider's connection: a base URL, fixed headers, and one lazily made ``ClientSession``.

    The session belongs to the event loop that first sends a request; when a later request runs in
    another loop a new session is made for it. Its connections come from the loop's shared pool.
    """

    def __init__(
        self,
        *,
        service: str,
        base_url: str,
        headers: Mapping[str, str],
        timeout: float = 600.0,
        connect_timeout: float = 5.0,
        max_retries: int = 2,
        secrets: tuple[str, ...] = (),
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.service = service
        self.base_url = base_url.rstrip("/")
        self.headers = dict(headers)
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_retries = max_retries
        self._secrets = tuple(s for s in secrets if s)
        self._session: aiohttp.ClientSession | None = None
        self._deadlines: Deadlines | None = None
        self._timeouts: tuple[aiohttp.ClientTimeout, aiohttp.ClientTimeout] | None = None
        """aiohttp's timeouts for a whole answer (connect only: see _send) and for a stream (total too)."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closer: AsyncGenerator[None, None] | None = None
        self._urls: dict[str, URL] = {}

    async def post_json(
        self, path: str, body: Mapping[str, Any] | bytes, headers: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """POST ``body`` to ``base_url + path``; the decoded JSON answer, or :class:`ProviderError`.

        ``path`` is sent as written (already percent-encoded: a Bedrock model id's ``:`` must stay ``%3A``,
        the form its signature was computed over). ``body`` may be JSON already serialised (the bytes a
        signature covers). ``headers`` add to (or replace) the fixed headers for this call only.
        """
        response, raw = await self._send(path, body, whole=True, headers=headers)
        response.release()  # the body is read: the connection goes back to the pool
        return _decode_object(raw, self.service, response.status)

    async def post_stream(
        self,
        path: str,
        body: Mapping[str, Any] | bytes,
        headers: Mapping[str, str] | None = None,
        media_type: str = "text/event-stream",
    ) -> AsyncIterator[bytes]:
        """POST ``body`` and yield the stream that answers it, chunk by chunk as it arrives.

        ``media_type`` is the stream's framing, asked for in ``Accept`` and required of the answer: SSE,
        Ollama's ``application/x-ndjson``, Bedrock's ``application/vnd.amazon.eventstream``.
        """
        import aiohttp

        response, first = await self._send(path, body, whole=False, headers={**(headers or {}), "Accept": media_type})
        try:
            if response.content_type != media_type:
                raise ProviderError(
                    f"{self.service} answered a streaming request with {response.content_type}, not "
                    f"{media_type}; it may not support streaming: use Agent(stream=False) "
                    "or toolslip run --no-stream",
                    status=response.status,
                )
            yield first
            try:
                async for chunk in response.content.iter_any():
                    yield chunk
            except (aiohttp.ClientPayloadError, aiohttp.ClientConnectionError, TimeoutError) as exc:
                raise ProviderError(
                    f"the connection to {self.service} broke mid-stream: {_describe(exc)}", retryable=True
                ) from None
        finally:
            response.release()

    async def _send(
        self, path: str, body: Mapping[str, Any] | bytes, whole: bool, headers: Mapping[str, str] | None
    ) -> tuple[aiohttp.ClientResponse, bytes]:
        """POST with retries until a 2xx answer arrives: the response and its body (``whole``) or first bytes.

        The caller releases the response. A plain coroutine, not a context manager: this is the hot path.
        """
        from aiohttp import ClientConnectionError, ClientPayloadError

        session = self._session
        if session is None or self._loop is not asyncio.get_running_loop() or session.closed:
            session = await self._open_session()
        url = self._urls.get(path)
        if url is None:  # parsed once: aiohttp would parse a str URL on every request
            from yarl import URL

            url = self._urls[path] = URL(str(URL(self.base_url)) + path, encoded=True)
        data = body if isinstance(body, bytes) else orjson.dumps(body)
        # A whole answer's time limit is kept by the transport's deadlines, cheaper than aiohttp's timer; a
        # stream's by aiohttp, since the stream is read after this returns.
        assert self._timeouts is not None  # set with the session
        deadlines, timeout = (self._deadlines, self._timeouts[0]) if whole else (None, self._timeouts[1])
        attempt = 0
        while True:
            task = deadlines.enter() if deadlines is not None else None
            try:
                response = await session.post(url, data=data, headers=headers, timeout=timeout)
                try:
                    status = response.status
                    raw = await (response.read() if whole or status >= 300 else response.content.readany())
                except BaseException:
                    response.release()
                    raise
                if status < 300:
                    break
                response.release()
                error = self._error(status, response.reason, raw, response.headers.get("x-amzn-ErrorType"))
                wait = retry_delay(attempt, response.headers, status)
            except (ClientConnectionError, ClientPayloadError, TimeoutError, asyncio.CancelledError) as exc:
                if isinstance(exc, asyncio.CancelledError) and not (deadlines and deadlines.timed_out(task)):
                    raise  # cancelled by someone else: Ctrl-C, the caller's own timeout
                how = "was cut off before its answer" if isinstance(exc, ClientPayloadError) else "failed"
                error = ProviderError(
                    f"could not reach {self.service}: POST {url} {how}: {_describe(exc)}", status=0, retryable=True
                )
                wait = retry_delay(attempt, {}, 0)
            finally:
                if deadlines is not None:
                    deadlines.leave(task)
            if wait is None or attempt >= self.max_retries:
                if attempt:
                    error.args = (
                        f"{error.args[0]} (gave up after {attempt} {'retry' if attempt == 1 else 'retries'})",
                    )
                raise error
            attempt += 1
            await asyncio.sleep(wait)
        return response, raw

    async def aclose(self) -> None:
        """Close the session (its connections stay in the loop's pool); a new one is opened if used again."""
        closer, self._closer, self._session, self._loop = self._closer, None, None, None
        if closer is not None:
            await closer.aclose()

    async def _open_session(self) -> aiohttp.ClientSession:
        import aiohttp

        loop = asyncio.get_running_loop()
        self._deadlines = Deadlines(loop, self.timeout)
        total = aiohttp.ClientTimeout(total=self.timeout, connect=self.connect_timeout)
        self._timeouts = (aiohttp.ClientTimeout(total=None, connect=self.connect_timeout), total)
        self._session = aiohttp.ClientSession(
            headers=self.headers,
            timeout=total,
            connector=await _pool(loop),
            connector_owner=False,
            cookie_jar=aiohttp.DummyCookieJar(),  # an API client carries no cookies between calls
            # No skip_auto_headers: aiohttp adds its User-Agent only when the headers have none, and any
            # skip list (even an empty one) costs a header copy on every request.
        )
        self._loop = loop
        # A session cannot be closed once its loop is gone, and asyncio.run() closes the async generators
        # of its loop before closing the loop, so this one closes the session there.
        self._closer = _close_at_loop_end(self._session)
        await anext(self._closer)
        return self._session

    def _error(self, status: int, reason: str | None, raw: bytes, aws_type: str | None = None) -> ProviderError:
        """The error of a non-2xx answer; ``aws_type`` is AWS's error name, sent in a header, not the body."""
        text = raw.decode("utf-8", "replace")
        for secret in self._secrets:  # some services echo the credential back; never show it
            text = text.replace(secret, "***")
        retryable = status in RETRY_STATUSES or status >= 500
        answer = f"{status} {reason}" if reason else str(status)
        return ProviderError(
            f"{self.service} answered {answer}: {error_message(text, aws_type)}",
            status=status,
            body=text,
            retryable=retryable,
        )


def check_base_url(url: str, source: str = "base_url") -> str:
    """``url`` if it is an http(s) URL with a host; else a :class:`ConfigError` naming ``source``.

    Checked once, when a model is made: aiohttp's own error for ``127.0.0.1:8765/v1`` (no scheme) comes
    at the first request, as a traceback about an unsupported URL.
    """
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises ValueError for a port that is not a number
    except ValueError as exc:
        raise ConfigError(f"{source} {url!r} is not a valid URL ({exc}); write it as http://HOST:PORT/PATH") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = url.split("://", 1)[-1]
        raise ConfigError(
            f"{source} {url!r} is not an http(s) URL with a host; write it with its scheme, e.g. http://{shown}"
        )
    return url


class _Closable(Protocol):
    async def close(self) -> None: ...


async def _close_at_loop_end(
    resource: _Closable, pool_of: asyncio.AbstractEventLoop | None = None
) -> AsyncGenerator[None]:
    """Suspended at once; closes ``resource`` when its loop shuts down its async generators (or on aclose)."""
    try:
        yield
    finally:
        if pool_of is not None:
            _pools.pop(pool_of, None)
        await resource.close()


_pools: dict[asyncio.AbstractEventLoop, tuple[aiohttp.TCPConnector, AsyncGenerator[None]]] = {}
"""One connection pool per event loop, shared by every transport running in it."""


async def _pool(loop: asyncio.AbstractEventLoop) -> aiohttp.TCPConnector:
    found = _pools.get(loop)
    if found is not None and not found[0].closed:
        return found[0]
    import aiohttp

    for old in [other for other in _pools if other.is_closed()]:  # closed without shutting down its generators
        _pools.pop(old, None)
    connector = aiohttp.TCPConnector(limit=0)
    closer = _close_at_loop_end(connector, loop)
    await anext(closer)
    _pools[loop] = (connector, closer)
    return connector


def _decode_object(raw: bytes, service: str, status: int) -> dict[str, Any]:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        snippet = raw[:200].decode("utf-8", "replace")
        raise ProviderError(
            f"{service} answered {status} with a body that is not JSON ({exc}): {snippet!r}",
            status=status,
            body=raw.decode("utf-8", "replace"),
        ) from None
    if not isinstance(data, dict):
        raise ProviderError(f"{service} answered {status} with JSON that is not an object", status=status)
    return data


def _describe(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError | asyncio.CancelledError):  # a cancellation here is a deadline (see _send)
        return "the request timed out"
    return str(exc) or type(exc).__name__


class Accumulator(Protocol):
    def feed(self, event: ServerSentEvent) -> list[StreamEvent]: ...

    def finish(self) -> ModelResponse: ...


class StreamFormat(Protocol):
    """What a transport needs of a stream module (``formats.openai_chat_stream``, ``anthropic_stream``)."""

    def stream_body(self, body: Mapping[str, Any]) -> dict[str, Any]: ...

    def Accumulator(self) -> Accumulator: ...  # the module's class, called to make one


class HttpOptions(TypedDict, total=False):
    """The constructor options every :class:`HttpModel` takes; a subclass adds its own next to them."""

    base_url: str
    api_key: str | None
    headers: Mapping[str, str] | None
    timeout: float
    max_retries: int
    name: str | None
    cache: bool | None


class HttpModel:
    """A :class:`~toolslip.core.model.Model` made of a wire format and an :class:`HttpTransport`.

    A subclass names its service in the class attributes below and adds the service's own headers
    (credential, version) in :meth:`service_headers`; the JSON content headers and the ``User-Agent``
    are added here, and ``headers`` (the caller's) win over both. ``api_key`` is masked in error
    messages. The request's ``model`` is filled in from ``model`` when the loop left it empty.
    """

    prefix: ClassVar[str]
    """The provider's name in ``prefix:model``, the model's default ``name``."""
    label: ClassVar[str]
    """The service's name in error messages (``"OpenAI"``); elsewhere "the LABEL-compatible server at URL"."""
    default_base_url: ClassVar[str]
    path: ClassVar[str]
    """The endpoint, appended to the base URL."""
    wire: WireFormat  # the format modules, set in the subclass body (mypy rejects a module for a ClassVar)
    stream_format: StreamFormat

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 600.0,
        max_retries: int = 2,
        name: str | None = None,
        cache: bool | None = None,
    ) -> None:
        from ..core.version import __version__

        if base_url is None:
            base_url = self.default_base_url
        check_base_url(base_url)
        official = base_url.rstrip("/") == self.official_url()
        self.model = model
        self.name = name or f"{self.prefix}:{model}"
        self.cache = self.caches_by_default(official) if cache is None else cache
        """Mark prompt-cache breakpoints (``prompt_cache_key`` on OpenAI) and warn when a step's prefix changed
        (:mod:`toolslip.formats.caching`); ``None`` leaves it to the service (:meth:`caches_by_default`)."""
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": f"toolslip/{__version__}",
        }
        self._http = HttpTransport(
            service=self.label if official else f"the {self.label}-compatible server at {base_url}",
            base_url=base_url,
            headers={**sent, **self.service_headers(api_key, official), **(headers or {})},
            timeout=timeout,
            max_retries=max_retries,
            secrets=(api_key or "", *(headers or {}).values()),  # extra headers may carry a key (Azure)
        )

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        """The service's own fixed headers; ``official`` says ``base_url`` is the service itself."""
        raise NotImplementedError

    def official_url(self) -> str:
        """The service's own base URL (Bedrock's depends on the region, set before this is asked)."""
        return self.default_base_url

    @property
    def base_url(self) -> str:
        return self._http.base_url

    def caches_by_default(self, official: bool) -> bool:
        """Whether requests get cache breakpoints when the caller did not say (none by default)."""
        return False

    def _body(self, request: Request) -> dict[str, Any]:
        body = self.wire.request_to_wire(request)
        if not request.model:
            body["model"] = self.model  # cheaper than copying the request: "model" is top-level in every format
        return self._cached(request, body) if self.cache else body

    def _cached(self, request: Request, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with its cache breakpoints; a run whose prefix changed since its last request is told."""
        from ..formats.caching import cache_key, prefix_change, with_breakpoints

        run = CURRENT_RUN.get()
        if run is not None:
            key = f"cache_prefix:{self.name}"
            previous: Request | None = run.state.get(key)
            if previous is not None and (why := prefix_change(previous, request)) is not None:
                run.event(CacheBusted(step=run.step, model=self.name, reason=why))
            run.state[key] = request
        if self.wire.NAME in ("openai-chat", "openai-responses"):
            body.setdefault("prompt_cache_key", cache_key(request))  # the top level is this call's own dict
            return body
        return with_breakpoints(self.wire.NAME, body)

    async def complete(self, request: Request) -> ModelResponse:
        answer = await self._http.post_json(self.path, self._body(request), self.headers_for(request))
        return self.wire.response_from_wire(answer)

    def headers_for(self, request: Request) -> Mapping[str, str] | None:
        """Headers this one request needs beyond the fixed ones (none here; Anthropic betas, for one)."""
        return None

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The answer as it is written; ends with the response :meth:`complete` would have returned."""
        body = self.stream_format.stream_body(self._body(request))
        decoder, accumulator = SSEDecoder(), self.stream_format.Accumulator()
        async for chunk in self._http.post_stream(self.path, body, self.headers_for(request)):
            for event in decoder.feed(chunk):
                for delta in accumulator.feed(event):
                    yield delta
        yield ResponseDone(response=accumulator.finish())

    async def aclose(self) -> None:
        """Close the HTTP session (a new one is opened if the model is used again)."""
        await self._http.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r}, base_url={self.base_url!r})"
