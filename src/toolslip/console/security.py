"""Who may use the console: the access token on every route, and no decision from another site.

The console shows every argument and output of every run and can approve side effects, so it is guarded
as a real service would be:

* **A token on every route.** A random one is made at start and printed once, in a URL to open (as
  Jupyter does); bound to a non-loopback address, a configured one is required. The browser trades
  ``?token=`` for an ``HttpOnly``, ``SameSite=Strict`` cookie; an application sends ``Authorization: Bearer``.
* **No cross-site decisions.** A POST authenticated by the cookie must come from the console's own origin
  (``Origin`` checked) and carry the form's CSRF token (an HMAC of the access token); ``SameSite=Strict``
  keeps the cookie off other sites' requests in the first place.
* **No DNS rebinding.** On loopback, the ``Host`` header must name loopback: a page on ``evil.example``
  resolving to 127.0.0.1 reaches the port but not the console.
* **Inert pages.** A Content-Security-Policy allows the console's own script and style only, so even a
  value that escaped escaping could not run; every value is escaped anyway (:mod:`toolslip.console.html`).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from aiohttp import web

__all__ = ["COOKIE", "HEADERS", "Guard", "cookie_name", "new_token"]

COOKIE = "toolslip_console"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # no-referrer would make a form's Origin "null"
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Guard:
    """The aiohttp middleware that checks the token, the origin of writes and the Host header."""

    def __init__(self, token: str, *, loopback: bool) -> None:
        self.token = token
        self.loopback = loopback
        self.csrf = hmac.new(token.encode(), b"csrf", hashlib.sha256).hexdigest()
        """Put in every form; a cross-site page cannot read it."""

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        response = await self._checked(request, handler)
        if not response.prepared:  # a live stream set them before it started
            for name, value in HEADERS.items():
                response.headers.setdefault(name, value)  # a route's stricter policy stays
        return response

    async def _checked(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        host = request.host.rsplit(":", 1)[0] if not request.host.endswith("]") else request.host
        if self.loopback and host not in _LOOPBACK:
            return _refuse(request, 421, f"this console answers on loopback only, not for host {host!r}")
        given = request.query.get("token")
        if given is not None and request.method == "GET" and self._ok(given):
            # Trade the URL's token for a cookie and drop it from the address bar (and from history).
            rest = {k: v for k, v in request.query.items() if k != "token"}
            target = request.path + ("?" + urlencode(rest) if rest else "")
            response = web.Response(status=303, headers={"Location": target})
            response.set_cookie(cookie_name(request), self.token, httponly=True, samesite="Strict", path="/")
            return response
        bearer = request.headers.get("Authorization", "")
        by_header = bearer.startswith("Bearer ") and self._ok(bearer.removeprefix("Bearer "))
        by_cookie = self._ok(request.cookies.get(cookie_name(request), ""))
        if not (by_header or by_cookie):
            return _refuse(request, 401, "this console needs its access token: open the URL it printed at start")
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            origin = request.headers.get("Origin")
            if origin is not None and origin != f"{request.scheme}://{request.host}":
                return _refuse(request, 403, f"a request from {origin} may not change anything here")
            if not by_header:  # the cookie rides along on any request the browser makes: ask for proof
                if origin is None:
                    return _refuse(request, 403, "a form sent without its Origin header is refused")
                form = await request.post()
                if not hmac.compare_digest(str(form.get("csrf", "")), self.csrf):
                    return _refuse(request, 403, "the form's CSRF token is missing or wrong; reload the page")
        return await handler(request)

    def _ok(self, given: str) -> bool:
        return hmac.compare_digest(given.encode(), self.token.encode())


def cookie_name(request: web.Request) -> str:
    """``toolslip_console_PORT``: cookies are shared by every port of a host, and two consoles (two tokens)
    on one machine must not overwrite each other's."""
    port = request.host.rpartition(":")[2] if not request.host.endswith("]") else ""
    return f"{COOKIE}_{port}" if port.isdigit() else COOKIE


def _refuse(request: web.Request, status: int, why: str) -> web.Response:
    """The refusal as one sentence: JSON for the API, plain text for a page."""
    if request.path.startswith("/api/"):
        return web.json_response({"error": why}, status=status)
    return web.Response(status=status, text=why + "\n")
