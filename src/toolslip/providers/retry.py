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


def error_message(body: str) -> str:
    """The human sentence inside an error body (``{"error": {"message": ...}}`` for both services)."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            kind = error.get("type")
            return f"{error['message']} ({kind})" if isinstance(kind, str) and kind else error["message"]
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return str(data["message"])
    text = body.strip()
    return (text[:500] + "...") if len(text) > 500 else (text or "(empty body)")


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
