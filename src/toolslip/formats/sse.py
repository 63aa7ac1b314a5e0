"""Server-sent events (``text/event-stream``), the framing both providers stream in, as pure code.

:class:`SSEDecoder` turns bytes, cut anywhere (mid-line, mid-UTF-8 character, between ``\\r`` and
``\\n``), into events, following the WHATWG parsing rules: lines end in LF, CRLF or CR; a blank line
ends an event; ``data:`` lines of one event are joined with ``\\n``; ``:`` starts a comment (servers
send them as keep-alives); one space after the colon is dropped; a leading byte-order mark is ignored.
An event with no ``data`` line is not dispatched. :func:`encode` writes one event back.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SSEDecoder", "ServerSentEvent", "encode"]

_BOM = "\ufeff"


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerSentEvent:
    """One dispatched event: its ``event:`` name (``None`` when unnamed) and its ``data`` text."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    """Feed it bytes as they arrive; it returns the events they complete."""

    def __init__(self) -> None:
        self._partial = b""  # an unterminated line
        self._skip_lf = False  # the last chunk ended in CR: a LF starting the next one belongs to it
        self._first = True
        self._data: list[str] = []
        self._event: str | None = None
        self._id: str | None = None
        self._retry: int | None = None
        self._started = False  # a field of an undispatched event was read

    @property
    def pending(self) -> bool:
        """True when bytes or fields of an unfinished event are buffered (a cut-off stream)."""
        return bool(self._partial) or self._started

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        if self._skip_lf and chunk[:1] == b"\n":
            chunk = chunk[1:]
        self._skip_lf = False
        if not chunk:
            return []
        buffer = self._partial + chunk if self._partial else chunk
        # bytes.splitlines cuts at exactly the SSE line ends: \r\n, \n and \r.
        lines = buffer.splitlines(keepends=True)
        last = lines[-1]
        if last.endswith(b"\r"):
            self._skip_lf = True
            self._partial = b""
        elif last.endswith(b"\n"):
            self._partial = b""
        else:
            self._partial = lines.pop()
        events: list[ServerSentEvent] = []
        for raw in lines:
            event = self._line(raw.rstrip(b"\r\n").decode("utf-8", "replace"))
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> ServerSentEvent | None:
        if self._first:
            self._first = False
            line = line.removeprefix(_BOM)
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None  # a comment, e.g. a keep-alive
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        self._started = True
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isdigit():
            self._retry = int(value)
        return None  # unknown field names are ignored, as the standard says

    def _dispatch(self) -> ServerSentEvent | None:
        data, event, retry = self._data, self._event, self._retry
        self._data, self._event, self._retry, self._started = [], None, None, False
        if not data:
            return None
        return ServerSentEvent(data="\n".join(data), event=event, id=self._id, retry=retry)


def encode(data: str, event: str | None = None) -> bytes:
    """One event in the wire framing: ``event: NAME`` (if named), ``data:`` line(s), a blank line."""
    head = f"event: {event}\n" if event is not None else ""
    body = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"{head}{body}\n".encode()
