"""A streamed answer written while the model writes it, in any wire protocol, from whole-answer encoders.

Each protocol's stream is produced by a function of a *finished* response (``response_to_chunks`` and
friends, framed by the route). To send the text as it is decoded, this module asks that same function
about drafts: the answer so far as a response (its text, no calls, no usage), and the same draft with
more text after it. The frames the two drafts share at their start (the opening events, every text delta
already complete) cannot change whatever the model writes next, so they are written at once; when the
model is done, the frames of the real response are written from where the drafts stopped. One encoder
per protocol stays the single source of its stream's shape.

That needs the streamed text to be the answer's first part, whole: a model says so with a true
``streams_text_first`` attribute (the local model, whose grammar makes an answer either text or calls).
Any other model is asked with ``complete`` and its stream written at the end: a proxied service may begin
with a thinking block, or cut its text into several parts (Claude's citations), which a draft cannot know.

The drafts carry the answer's final response id (fixed before the model starts), so the ids derived from
it are the same in early and late frames. What only the finished answer knows (usage, the stop reason,
``x-toolslip-ignored``) arrives in the closing frames or the log line, as it does from the real services.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncGenerator, Callable, Sequence

from aiohttp import web

from ..core.errors import ProviderError
from ..core.messages import Message, ModelResponse, Request
from ..core.model import Model, StreamingModel
from ..core.streaming import ResponseDone, TextChunk

__all__ = ["HungUp", "Live"]

# Longer than any chunk a format cuts text into: a draft followed by it shares no partial text delta.
_MORE = "\x00" * 64


class HungUp(Exception):
    """The client closed the connection during a streamed answer; ``response`` is the stream that was begun.

    Not an error of ours or of the model: the generation is stopped, the request's log line says so, and
    nothing more is written.
    """

    def __init__(self, response: web.StreamResponse) -> None:
        super().__init__("the client closed the connection before the answer was complete")
        self.response = response


@dataclasses.dataclass
class Live:
    """One streamed HTTP answer: frames written as soon as the model's text settles them.

    ``encode`` gives the framed bytes of a response (the route's whole stream for it). The answer's id is
    ``response_id`` and its model name ``model``, in drafts and in the response :meth:`answer` returns.
    Call :meth:`answer` (or the model's ``complete``), then :meth:`finish` with the final frames.
    """

    http: web.Request
    encode: Callable[[ModelResponse], Sequence[bytes]]
    media: str
    response_id: str = ""
    model: str = ""
    out: web.StreamResponse | None = None
    """The HTTP response, once the first frame was written; until then an error can still be a status."""
    sent: int = 0

    async def answer(self, model: Model, request: Request) -> ModelResponse:
        """The model's response to ``request``, its text sent on the way when its stream begins with it."""
        if not (isinstance(model, StreamingModel) and getattr(model, "streams_text_first", False)):
            return dataclasses.replace(await model.complete(request), id=self.response_id)
        text = ""
        events = model.stream(request)
        try:
            async for event in events:
                if isinstance(event, TextChunk) and event.text:
                    text += event.text
                    await self._write(_shared(self._draft(text), self._draft(text + _MORE)))
                elif isinstance(event, ResponseDone):
                    if not event.response.message.text.startswith(text):  # the frames sent cannot be taken back
                        raise ProviderError(f"{model.name} streamed text that its answer does not begin with")
                    return dataclasses.replace(event.response, id=self.response_id)
        finally:  # a client that hung up (a failed write) ends the generation now, not when it is collected
            if isinstance(events, AsyncGenerator):
                await events.aclose()
        raise ProviderError(f"the stream of {model.name} ended without its final response")

    async def finish(self, frames: Sequence[bytes]) -> web.StreamResponse:
        """Write what ``frames`` (the final response's whole stream) holds beyond what was sent, and end."""
        out = await self._prepared()
        await self._write(frames)
        try:
            await out.write_eof()
        except ConnectionResetError as exc:
            raise HungUp(out) from exc
        return out

    async def cut(self) -> web.StreamResponse:
        """End a stream that had begun when the model failed: the client sees it cut short (no final event)."""
        assert self.out is not None
        with contextlib.suppress(ConnectionResetError):  # a reader that left too has nothing more to read
            await self.out.write_eof()
        return self.out

    def _draft(self, text: str) -> Sequence[bytes]:
        """The frames of the answer so far taken as a whole answer: ``text``, no calls, no usage."""
        answer = Message.assistant(text)
        return self.encode(ModelResponse(message=answer, stop_reason="end_turn", model=self.model, id=self.response_id))

    async def _prepared(self) -> web.StreamResponse:
        if self.out is None:
            self.out = web.StreamResponse(headers={"Content-Type": self.media, "Cache-Control": "no-cache"})
            await self.out.prepare(self.http)
        return self.out

    async def _write(self, frames: Sequence[bytes]) -> None:
        if len(frames) <= self.sent:
            return
        out = await self._prepared()
        try:
            for frame in frames[self.sent :]:
                await out.write(frame)
        except ConnectionResetError as exc:
            raise HungUp(out) from exc
        self.sent = len(frames)


def _shared(first: Sequence[bytes], second: Sequence[bytes]) -> Sequence[bytes]:
    """The frames both sequences start with."""
    count = 0
    for a, b in zip(first, second, strict=False):
        if a != b:
            break
        count += 1
    return first[:count]
