"""Amazon Bedrock's Converse API over plain HTTP: ``/model/{modelId}/converse`` and ``converse-stream``.

Credentials are found as the AWS SDKs find them. A Bedrock API key (``AWS_BEARER_TOKEN_BEDROCK``, or
``api_key=``) is sent as ``Authorization: Bearer``, as boto3 sends it. Otherwise every request is signed
with Signature Version 4 by botocore (the ``toolslip[bedrock]`` extra), whose credential chain reads
``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``, ``AWS_PROFILE`` and the shared
config files, SSO and instance roles. The region comes from ``region=``, ``AWS_REGION``,
``AWS_DEFAULT_REGION`` or the profile, and names the endpoint ``bedrock-runtime.{region}.amazonaws.com``.

The model id goes in the path percent-encoded (``us.anthropic.claude-sonnet-4-5-v1%3A0``, an ARN's ``/``
as ``%2F``), and the signature covers exactly the bytes sent, so the body is serialised once and signed.

ConverseStream does not answer in SSE but in AWS's binary event-stream framing: length-prefixed
messages with typed headers (``:event-type`` names the event: ``messageStart``, ``contentBlockDelta``...;
``:message-type`` ``exception`` carries an error) and CRC-checked. botocore's own parser
(``botocore.eventstream.EventStreamBuffer``) reads it; each event goes to
:mod:`toolslip.formats.bedrock_stream` as ``(eventType, payload)``, less the ``p`` field the service pads
each payload with to hide token lengths.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import quote

import orjson

from ..core.errors import ConfigError, ProviderError
from ..core.messages import ModelResponse, Request
from ..core.streaming import ResponseDone, StreamEvent
from ..formats import bedrock as bedrock_format
from ..formats import bedrock_stream
from .http import HttpModel, HttpOptions

if TYPE_CHECKING:
    from botocore.credentials import Credentials

__all__ = ["EVENT_STREAM", "BedrockModel", "EventFrames", "endpoint", "find_region"]

EVENT_STREAM = "application/vnd.amazon.eventstream"
_SIGNED = ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
_EXTRA = "pip install 'toolslip[bedrock]'"


def endpoint(region: str) -> str:
    """The Bedrock runtime endpoint of ``region``."""
    return f"https://bedrock-runtime.{region}.amazonaws.com"


def find_region(given: str | None = None, profile: str | None = None) -> str | None:
    """The region as the AWS SDKs choose it: ``given``, ``AWS_REGION``, ``AWS_DEFAULT_REGION``, the profile."""
    found = given or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if found:
        return found
    try:
        import botocore.session
    except ModuleNotFoundError:
        return None
    region = botocore.session.Session(profile=profile).get_config_variable("region")
    return str(region) if region else None


class BedrockModel(HttpModel):
    """A :class:`~toolslip.core.model.Model` that POSTs to ``{base_url}/model/{model_id}/converse``.

    Made by ``resolve_model("bedrock:MODEL_ID")``, which finds the region and the credentials; made
    directly, pass ``region`` and either ``api_key`` (a Bedrock API key) or ``credentials`` (botocore's).
    """

    prefix = "bedrock"
    label = "Amazon Bedrock"
    default_base_url = ""  # per region: endpoint(region)
    path = ""  # per model: see _paths
    wire = bedrock_format

    def __init__(
        self,
        model: str,
        *,
        region: str,
        credentials: Credentials | None = None,
        **options: Unpack[HttpOptions],
    ) -> None:
        self.region = region
        self._credentials = credentials
        self._signer: Callable[[str, bytes], dict[str, str]] | None = None
        self._routes: dict[str, tuple[str, str]] = {}
        if options.get("base_url") is None:
            options["base_url"] = endpoint(region)
        if credentials is None and not options.get("api_key"):
            raise ConfigError(
                "Amazon Bedrock needs credentials: set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key, or "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            )
        super().__init__(model, **options)

    def service_headers(self, api_key: str | None, official: bool) -> dict[str, str]:
        return {"Authorization": f"Bearer {api_key}"} if api_key else {}

    def official_url(self) -> str:
        return endpoint(self.region)

    def caches_by_default(self, official: bool) -> bool:
        """Converse takes cache points only for the models that cache (Claude, Nova); others refuse them."""
        return official and any(family in self.model for family in ("anthropic.claude", "amazon.nova"))

    def _paths(self, model: str) -> tuple[str, str]:
        routes = self._routes.get(model)
        if routes is None:
            base = f"/model/{quote(model, safe='')}"
            routes = self._routes[model] = (f"{base}/converse", f"{base}/converse-stream")
        return routes

    def _prepare(self, request: Request, stream: bool) -> tuple[str, bytes, dict[str, str] | None]:
        """The path, the body's bytes and, with SigV4, the signature headers over exactly those bytes."""
        body = self.wire.request_to_wire(request)
        body.pop("modelId", None)  # the model is the path's
        if self.cache:
            body = self._cached(request, body)
        path = self._paths(request.model or self.model)[stream]
        data = orjson.dumps(body)
        if self._credentials is None:
            return path, data, None
        if self._signer is None:
            self._signer = _sigv4(self._credentials, self.region)
        return path, data, self._signer(self._http.base_url + path, data)

    async def complete(self, request: Request) -> ModelResponse:
        path, data, headers = self._prepare(request, stream=False)
        return self.wire.response_from_wire(await self._http.post_json(path, data, headers))

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The answer as ConverseStream sends it, read from AWS event-stream frames by botocore."""
        path, data, headers = self._prepare(request, stream=True)
        frames, accumulator = EventFrames(self._http.service), bedrock_stream.Accumulator()
        async for raw in self._http.post_stream(path, data, headers, media_type=EVENT_STREAM):
            for kind, payload in frames.feed(raw):
                for delta in accumulator.feed_event(kind, payload):
                    yield delta
        yield ResponseDone(response=accumulator.finish())


class EventFrames:
    """Feed it bytes as they arrive; it answers the ``(event type, payload)`` of the messages they complete.

    An ``exception`` message comes out as ``(exception type, payload)``, which the format's accumulator
    raises as the service's error; an ``error`` message (a failure of the framing service itself) raises
    :class:`ProviderError` here, and so do bytes that are not event-stream framing (a bad checksum...).
    """

    def __init__(self, service: str) -> None:
        try:
            from botocore.eventstream import EventStreamBuffer
        except ModuleNotFoundError:
            raise ConfigError(f"reading a Bedrock stream needs botocore: {_EXTRA}") from None
        self._service = service
        self._buffer = EventStreamBuffer()

    def feed(self, data: bytes) -> list[tuple[str, Any]]:
        from botocore.eventstream import ParserError

        self._buffer.add_data(data)
        try:
            messages = [message.to_response_dict() for message in self._buffer]  # typed, unlike .headers
        except ParserError as exc:
            raise ProviderError(f"{self._service} sent a stream that is not AWS event-stream framing: {exc}") from None
        return [_event(self._service, message["headers"], message["body"]) for message in messages]


def _event(service: str, headers: Mapping[str, Any], payload: bytes) -> tuple[str, Any]:
    kind = headers.get(":message-type")
    if kind not in ("event", "exception"):
        code, message = headers.get(":error-code", "error"), headers.get(":error-message", "")
        raise ProviderError(f"{service} failed mid-stream: {message} ({code})")
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        raise ProviderError(f"{service} streamed an event whose payload is not JSON: {exc}") from None
    if isinstance(data, dict):
        data.pop("p", None)  # padding that hides the length of the text; no meaning
    return str(headers.get(":event-type" if kind == "event" else ":exception-type")), data


def _sigv4(credentials: Credentials, region: str) -> Callable[[str, bytes], dict[str, str]]:
    """A function signing one POST of JSON bytes to a URL: the headers that carry the signature."""
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest

    def sign(url: str, data: bytes) -> dict[str, str]:
        # Frozen per request: refreshable credentials (SSO, roles) renew themselves here when due.
        request = AWSRequest(method="POST", url=url, data=data, headers={"Content-Type": "application/json"})
        SigV4Auth(credentials.get_frozen_credentials(), "bedrock", region).add_auth(request)
        return {name: request.headers[name] for name in _SIGNED if name in request.headers}

    return sign
