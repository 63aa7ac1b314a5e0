"""When to try a request again, and what an error body says: the official SDKs' retry policy.

Retries follow the official SDKs' policy: 408, 409, 429 and 5xx answers and connection failures are
retried with exponential backoff (0.5 s doubling up to 8 s, minus up to 25 % jitter), and a server's
``retry-after-ms`` / ``retry-after`` (seconds or an HTTP date) is honoured up to two minutes. A server
that sends ``x-should-retry`` decides for itself.

Every transport retries this way, so a provider's rate limit is handled the same whatever the wire.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Mapping

import orjson

__all__ = ["MAX_RETRY_AFTER", "RETRY_STATUSES", "error_message", "retry_delay"]

RETRY_STATUSES = frozenset({408, 409, 429})
INITIAL_DELAY = 0.5
MAX_DELAY = 8.0
MAX_RETRY_AFTER = 120.0


def error_message(body: str, aws_type: str | None = None) -> str:
    """The human sentence inside an error body, with the error's kind in brackets.

    The shapes: OpenAI's and Anthropic's ``{"error": {"message", "type"}}``; Google's ``{"error":
    {"message", "status", "details"}}``, whose ``BadRequest`` detail names the fields at fault; Ollama's
    ``{"error": "..."}``; AWS's ``{"message": ...}`` whose kind (``ValidationException``) comes in the
    ``x-amzn-ErrorType`` header, passed as ``aws_type``.
    """
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type") or error.get("status")
            message = error["message"] + _field_violations(error.get("details"))
            return f"{message} ({kind})" if isinstance(kind, str) and kind else message
        if isinstance(error, str):
            return error
        message = data.get("message", data.get("Message"))
        if isinstance(message, str):
            kind = (aws_type or str(data.get("__type", ""))).split(":", 1)[0].rsplit("#", 1)[-1]
            return f"{message} ({kind})" if kind else message
    text = body.strip()
    return (text[:500] + "...") if len(text) > 500 else (text or "(empty body)")


def _field_violations(details: object) -> str:
    """Google's ``google.rpc.BadRequest`` detail, as ``; FIELD: WHAT`` for each field it names."""
    said = []
    for detail in details if isinstance(details, list) else ():
        for violation in detail.get("fieldViolations", ()) if isinstance(detail, dict) else ():
            if isinstance(violation, dict) and violation.get("field"):
                said.append(f"; {violation['field']}: {violation.get('description', 'invalid')}")
    return "".join(said)


def retry_delay(attempt: int, headers: Mapping[str, str], status: int) -> float | None:
    """Seconds to wait before retry number ``attempt + 1``, or ``None`` when the answer is final."""
    should = headers.get("x-should-retry")
    if should == "false":
        return None
    if should != "true" and status and status not in RETRY_STATUSES and status < 500:
        return None
    asked = _retry_after(headers)
    if asked is not None:
        return asked if asked <= MAX_RETRY_AFTER else None
    return min(INITIAL_DELAY * 2.0**attempt, MAX_DELAY) * (1 - 0.25 * random.random())


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """The delay a server asked for: ``retry-after-ms``, or ``retry-after`` in seconds or as a date."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(email.utils.mktime_tz(parsed) - time.time(), 0.0)
