"""Offline models for suites: replay a task's reference answer, always or with a known probability.

``reference`` checks the suite itself (every check must pass a right answer). In code mode both write each
turn of the reference's calls as one program (:class:`~toolslip.testing.ProgramWriter`). ``flaky:P`` succeeds with
probability P per trial, decided by the trial's seed alone, so the same seeds give the same results on
any machine or Ray worker; its pass^k must come out near P**k, which tests the whole pipeline.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.errors import ConfigError, ProviderError
from ..core.messages import ModelResponse, Part, Request, Text, ToolCall, ToolResult, Usage
from ..core.model import Model
from ..testing import ScriptedModel, Turn, call, reply, to_response
from ..testing.programs import ProgramWriter
from .suite import Task
from .trial import TrialModel

__all__ = ["FlakyModel", "ModelString", "ReferenceModel", "resolve_eval_model"]


def _reference(task: Task) -> Sequence[Turn]:
    if not task.reference:
        raise ConfigError(f"task {task.id!r} has no reference turns, so an offline model cannot play it")
    return task.reference


@dataclass(frozen=True)
class ReferenceModel:
    """Plays each task's ``reference`` turns."""

    name: str = "reference"

    def for_trial(self, task: Task, seed: int) -> Model:
        return _Metered(ProgramWriter(ScriptedModel(list(_reference(task)), name=self.name)))


@dataclass(frozen=True)
class FlakyModel:
    """Plays the reference with probability ``p``, else one of three typical failures.

    The failures are: answering without acting (wrong final state), repeating the first call until the
    step limit, and calling a tool that does not exist. With ``provider_error_rate`` the model service
    "fails" first, which the evaluation must exclude from the score.
    """

    p: float
    provider_error_rate: float = 0.0
    name: str = ""

    def __post_init__(self) -> None:
        if not 0.0 <= self.p <= 1.0 or not 0.0 <= self.provider_error_rate < 1.0:
            raise ConfigError(f"flaky model: p must be in [0, 1] and the error rate in [0, 1), got {self.p}")
        if not self.name:
            rate = f":{self.provider_error_rate:g}" if self.provider_error_rate else ""
            object.__setattr__(self, "name", f"flaky:{self.p:g}{rate}")

    def for_trial(self, task: Task, seed: int) -> Model:
        rng = random.Random(seed)
        if rng.random() < self.provider_error_rate:
            return _Unavailable(self.name)
        reference = _reference(task)
        if rng.random() < self.p:
            turns = list(reference)
        else:
            first = next((t for t in reference if not isinstance(t, str)), None)
            failures: list[list[Turn]] = [[reply("Done, everything is taken care of.")]]
            failures.append([call("no_such_tool"), reply("I could not finish this.")])
            if first is not None:
                failures.append([first] * 64)
            turns = rng.choice(failures)
        return _Metered(ProgramWriter(ScriptedModel(turns, name=self.name)))


@dataclass
class _Metered:
    """Adds a token estimate (4 characters per token) so offline reports show token columns at work."""

    inner: Model

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, request: Request) -> ModelResponse:
        response = await self.inner.complete(request)
        sent = sum(_chars(p) for m in request.messages for p in m.parts)
        written = sum(_chars(p) for p in response.message.parts)
        usage = Usage(input_tokens=sent // 4, output_tokens=written // 4)
        return to_response(response.message, usage)


def _chars(part: Part) -> int:
    """Characters the model would read or write; call ids are left out so estimates never depend on them."""
    if isinstance(part, Text):
        return len(part.text)
    if isinstance(part, ToolCall):
        return len(part.name) + len(part.raw_arguments or "")
    if isinstance(part, ToolResult):
        return len(part.text)
    return 0


@dataclass
class _Unavailable:
    name: str

    async def complete(self, request: Request) -> ModelResponse:
        raise ProviderError("simulated outage: 503 Service Unavailable", status=503, retryable=True)


def resolve_eval_model(spec: str) -> TrialModel:
    """``reference``, ``flaky:P[:E]`` (E = provider error rate), or any string ``resolve_model`` knows.

    A provider model is resolved once per process and shared by that process's trials, so it must be
    stateless between requests (provider transports are).
    """
    if spec == "reference":
        return ReferenceModel()
    if spec.startswith("flaky:"):
        parts = spec.split(":")[1:]
        try:
            p, rate = float(parts[0]), float(parts[1]) if len(parts) > 1 else 0.0
        except (ValueError, IndexError):
            raise ConfigError(f"bad model {spec!r}: write flaky:P or flaky:P:E, e.g. flaky:0.8") from None
        return FlakyModel(p, rate)
    _provider_model(spec)  # fail now, once, on a bad string or a missing key: not in every trial
    return ModelString(spec)


@dataclass(frozen=True)
class ModelString:
    """A provider model kept as its string: it pickles to any Ray worker and resolves there once."""

    spec: str

    @property
    def name(self) -> str:
        return self.spec

    def for_trial(self, task: Task, seed: int) -> Model:
        return _provider_model(self.spec)


@functools.cache
def _provider_model(spec: str) -> Model:
    from ..providers import resolve_model

    return resolve_model(spec)
