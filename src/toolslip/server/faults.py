"""Injected overloads: ``toolslip serve --faults 0.3`` answers that share of model requests as a busy service does.

A fallback chain, a retry policy or a client's error handling is tested against the real failure, not a
mock: the request is refused before the model sees it, with the status the real service uses when it is
overloaded (Anthropic's ``529 overloaded_error`` on ``/v1/messages``, ``503`` on every other route) in the
caller's own protocol's error body, as any other error of the server is written.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

__all__ = ["fault_middleware"]

ErrorAnswer = Callable[[web.Request, int, str], web.Response]


def fault_middleware(rate: float, answer: ErrorAnswer, seed: int | None = None) -> Middleware:
    """A middleware refusing about ``rate`` of the POSTs (model requests) as overloaded; ``answer`` writes
    the error in the caller's protocol."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the fault rate is a fraction from 0 to 1, got {rate}")
    draw = random.Random(seed).random

    @web.middleware
    async def overloaded(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.method != "POST" or draw() >= rate:
            return await handler(request)
        if request.path.startswith("/v1/messages"):
            return answer(request, 529, "Overloaded (injected by toolslip serve --faults)")
        return answer(request, 503, "The service is temporarily overloaded (injected by toolslip serve --faults)")

    return overloaded
