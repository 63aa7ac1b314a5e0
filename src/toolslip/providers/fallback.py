"""FallbackModel: a Model made of Models, so a run outlives one provider's outage (the loop never knows).

``FallbackModel([a, b, c])`` (or the model string ``"a,b,c"``, as in ``--model a,b,c``) asks ``a``; when
``a`` fails in a way another model can cure, the same step goes to ``b``, then ``c``:

- rate limits (429), server errors (5xx, Anthropic's 529 overload), a service that cannot be reached or
  timed out (status 0): the model also *cools down* for ``cooldown`` seconds, so the next steps start
  with one that works instead of waiting on it again;
- a request too long for the model's window (a 400 or 413 that says so): no cooldown, since the next,
  shorter request may fit.

Any other error (a bad request, a missing key) is the caller's to fix and is raised at once. When every
model failed, the chain is tried again after a short pause, ``rounds`` times in all, before the last error
is raised with each model's failure in its message.

Models may speak different wires: the transcript is *carried* to each (:func:`toolslip.formats.conversion.carry`).
What the next provider cannot take (a signature or encrypted reasoning another provider wrote, another
wire's blocks) is dropped before sending, and reported. Every answer names the model that gave it in
``ModelResponse.extra["answered_by"]`` (the journal records it with the step), and a step not answered by
the first choice is a :class:`~toolslip.core.events.ModelSwitched` event naming who failed and what was
dropped. ``toolslip resume`` re-reads the model string, so a resumed run uses the same chain.

A streamed step (``stream``, what the loop uses when someone listens, as ``toolslip run`` does) goes the
same way until the first event arrives: a model that fails before it has sent anything (a refused request,
a dead server, a stream that ends empty) hands the step on exactly as above, the switch reported before
the answering model's first event. Once an event has been passed on, the step is that model's: if its
stream then breaks, the chain does *not* ask the next model, since its answer would begin differently from
the text already shown (and the calls already announced); the step fails with a :class:`ProviderError`
that says the stream broke off, with the broken stream's status. Nothing of the broken answer is in the
transcript, so the step is asked again whole by whoever retries it (``toolslip resume`` of a journaled
run, which uses the chain again).

``route`` is the routing hook on the same seam: ``route(request, models)`` returns the model to try first
for this request (by its tools, its size, its cost), or ``None`` for the given order; the others stay
behind it as fallbacks.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import replace
from typing import Any

from ..core.errors import ConfigError, ProviderError
from ..core.events import ModelSwitched
from ..core.messages import ModelResponse, Request
from ..core.model import CURRENT_RUN, Model
from ..core.streaming import ResponseDone, StreamEvent

__all__ = ["ANSWERED_BY", "FallbackModel", "Router", "falls_over"]

ANSWERED_BY = "answered_by"
"""Key of ``ModelResponse.extra``: the name of the model of the chain that answered."""

Router = Callable[[Request, Sequence[Model]], Model | None]
"""``route(request, models)``: the model to ask first for this request, or ``None`` for the chain's order."""

_TOO_LONG = re.compile(
    r"context.length|context.window|maximum context|too many tokens|prompt is too long|input is too long"
    r"|exceeds the (?:maximum|max)|request too large",
    re.IGNORECASE,
)


def falls_over(error: ProviderError) -> bool:
    """Whether another model may answer where this one failed (see the module doc)."""
    return _transient(error) or _too_long(error)


def _transient(error: ProviderError) -> bool:
    return error.status in (0, 408, 409, 429) or error.status >= 500


def _too_long(error: ProviderError) -> bool:
    return error.status in (400, 413) and _TOO_LONG.search(f"{error} {error.body}") is not None


class FallbackModel:
    """Ask each model in turn until one answers; see the module doc for when a step moves on.

    ``models`` are models; for model strings write the chain as one string, ``resolve_model("a,b,c")``."""

    def __init__(
        self,
        models: Sequence[Model],
        *,
        cooldown: float = 30.0,
        rounds: int = 2,
        pause: float = 0.5,
        route: Router | None = None,
        fall_over: Callable[[ProviderError], bool] = falls_over,
        name: str | None = None,
    ) -> None:
        self.models: tuple[Model, ...] = tuple(models)
        if not self.models:
            raise ConfigError("FallbackModel needs at least one model")
        if rounds < 1 or cooldown < 0 or pause < 0:
            raise ConfigError("FallbackModel needs rounds of at least 1 and a cooldown and pause of 0 or more")
        self.cooldown, self.rounds, self.pause = cooldown, rounds, pause
        self.route, self.fall_over = route, fall_over
        self.name = name or ",".join(m.name for m in self.models)
        self._cool_until: dict[int, float] = {}
        """Model index -> the monotonic time its cooldown ends."""

    async def complete(self, request: Request) -> ModelResponse:
        failed: list[str] = []
        last: ProviderError | None = None
        async for index in self._tries(request):
            model = self.models[index]
            sent, dropped = _carried(request, model)
            try:
                response = await model.complete(sent)
            except ProviderError as exc:
                last = self._failed(index, exc, failed)
                continue
            self._cool_until.pop(index, None)
            return replace(response, extra={**response.extra, **self._answered(model, failed, dropped)})
        raise self._exhausted(failed, last) from last

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        """The step streamed by the first model that answers; see the module doc for a stream that breaks."""
        failed: list[str] = []
        last: ProviderError | None = None
        async for index in self._tries(request):
            model = self.models[index]
            sent, dropped = _carried(request, model)
            extra: dict[str, Any] | None = None  # set at the first event: from then on the step is this model's
            events = _events(model, sent)
            try:
                async for event in events:
                    if extra is None:
                        extra = self._answered(model, failed, dropped)
                    if isinstance(event, ResponseDone):
                        self._cool_until.pop(index, None)
                        response = event.response
                        yield ResponseDone(response=replace(response, extra={**response.extra, **extra}))
                        return
                    yield event
                raise ProviderError(f"the stream of {model.name} ended without its final response", retryable=True)
            except ProviderError as exc:
                if extra is not None:
                    raise _broke_off(model, exc) from exc
                last = self._failed(index, exc, failed)
            finally:
                if isinstance(events, AsyncGenerator):  # a consumer that stopped early stops the model now
                    await events.aclose()
        raise self._exhausted(failed, last) from last

    async def _tries(self, request: Request) -> AsyncIterator[int]:
        """The index of each model to ask in turn: the chain's order, ``rounds`` times, a pause between rounds."""
        for attempt in range(self.rounds):
            if attempt:
                await asyncio.sleep(self.pause * 2 ** (attempt - 1))
            for index in self._order(request):
                yield index

    def _failed(self, index: int, error: ProviderError, failed: list[str]) -> ProviderError:
        """Note a model's failure (and its cooldown) so the step moves on; raise an error no model can cure."""
        if not self.fall_over(error):
            raise error
        if _transient(error):
            self._cool_until[index] = time.monotonic() + self.cooldown
        failed.append(f"{self.models[index].name}: {_short(error)}")
        return error

    def _exhausted(self, failed: list[str], last: ProviderError | None) -> ProviderError:
        assert last is not None
        return ProviderError(
            f"every model of {self.name} failed ({self.rounds} rounds): {'; '.join(failed[-len(self.models) :])}",
            status=last.status,
            body=last.body,
            retryable=last.retryable,
        )

    def _order(self, request: Request) -> list[int]:
        """The chain's order for this request: the routed model first, then those not cooling down, then
        the cooling ones by when they come back (a chain that is all down still tries them)."""
        order = list(range(len(self.models)))
        if self.route is not None and (chosen := self.route(request, self.models)) is not None:
            first = next((i for i, m in enumerate(self.models) if m is chosen), None)
            if first is None:
                raise ConfigError(f"the router chose {getattr(chosen, 'name', chosen)!r}, which is not in {self.name}")
            order.remove(first)
            order.insert(0, first)
        if not self._cool_until:
            return order
        now = time.monotonic()
        ready = [i for i in order if self._cool_until.get(i, 0.0) <= now]
        cooling = sorted((i for i in order if i not in ready), key=lambda i: self._cool_until[i])
        return ready + cooling

    def _answered(self, model: Model, failed: list[str], dropped: list[str]) -> dict[str, Any]:
        """What the answer's ``extra`` says of the chain (who answered, who failed, what was dropped); a
        :class:`ModelSwitched` event for the run when the step was not the first choice's or lost something."""
        extra: dict[str, Any] = {ANSWERED_BY: model.name}
        if failed:
            extra["fell_over"] = list(failed)
        run = CURRENT_RUN.get()
        if run is not None:
            seen: set[tuple[str, str]] = run.state.setdefault("fallback_dropped", set())
            new = [d for d in dropped if (model.name, d) not in seen]
            seen.update((model.name, d) for d in new)
            if new:
                extra["dropped"] = new
            if failed or new:
                run.event(ModelSwitched(step=run.step, model=model.name, failed=tuple(failed), dropped=tuple(new)))
        elif dropped:
            extra["dropped"] = dropped
        return extra

    async def aclose(self) -> None:
        """Close every model of the chain that holds connections."""
        for model in self.models:
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()

    def __repr__(self) -> str:
        return f"FallbackModel({[m.name for m in self.models]!r})"


def _carried(request: Request, model: Model) -> tuple[Request, list[str]]:
    """``request`` as ``model``'s wire can take it, and what was left out (nothing for a model of no wire)."""
    wire = getattr(getattr(model, "wire", None), "NAME", None)
    if not isinstance(wire, str):
        return request, []
    from ..formats.conversion import carry

    messages, lost = carry(request.messages, wire)
    dropped = [str(loss) for loss in lost if loss.handled != "marked"]
    return (request.with_messages(messages) if dropped else request), dropped


def _events(model: Model, request: Request) -> AsyncIterator[StreamEvent]:
    """``model``'s own stream of ``request``, or for a model that cannot stream its whole answer as one event."""
    stream = getattr(model, "stream", None)
    return stream(request) if callable(stream) else _whole(model, request)


async def _whole(model: Model, request: Request) -> AsyncIterator[StreamEvent]:
    yield ResponseDone(response=await model.complete(request))


def _broke_off(model: Model, error: ProviderError) -> ProviderError:
    """The error of a stream that broke after its first event: the chain does not go on (see the module doc)."""
    return ProviderError(
        f"{model.name} broke off its streamed answer ({_short(error)}); the step is not handed to the next "
        "model, whose answer would differ from what was already streamed",
        status=error.status,
        body=error.body,
        retryable=error.retryable,
    )


def _short(error: ProviderError) -> str:
    text = " ".join(str(error).split())
    return f"{error.status} {text[:160]}" if error.status else text[:160]
