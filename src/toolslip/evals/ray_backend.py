"""Trials on a Ray cluster: the same plan and results file, only the executor changes.

Each trial is one Ray task. A worker loads the suite from its file (cached per worker process) rather
than unpickling closures, so a suite can import its tools as plain modules; the model object travels
pickled. ``"local"`` starts a private cluster on this machine; any other address joins that cluster,
whose workers must see the suite file at the same path (ship it with Ray's ``runtime_env``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core.errors import ConfigError
from .runner import Executor, TrialSpec, run_spec
from .suite import Suite, load_suite
from .trial import TrialRecord

__all__ = ["ray_executor"]

_suites: dict[str, Suite] = {}


def _run_remote(suite_path: str, spec: TrialSpec) -> dict[str, Any]:
    """Body of the Ray task; returns a plain dict so the driver needs no custom unpickling."""
    suite = _suites.get(suite_path)
    if suite is None:
        suite = _suites[suite_path] = load_suite(suite_path)
    return asyncio.run(run_spec(suite, spec)).to_dict()


@contextmanager
def ray_executor(suite: Suite, address: str, *, num_cpus: int | None = None) -> Iterator[Executor]:
    """An executor that runs each trial as a Ray task; shuts the cluster connection down on exit."""
    try:
        import ray
    except ImportError:
        raise ConfigError("--ray needs Ray: pip install 'toolslip[ray]'") from None
    if suite.path is None:
        raise ConfigError(f"suite {suite.name!r} was not loaded from a file, and Ray workers load suites by path")
    started = not ray.is_initialized()
    if started:
        if address == "local":
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    remote = ray.remote(num_cpus=1, max_retries=0)(_run_remote)
    path = suite.path

    async def execute(spec: TrialSpec) -> TrialRecord:
        try:
            data: dict[str, Any] = await remote.remote(path, spec)
        except ray.exceptions.RayError as exc:  # a dead worker is a crash to report, not a failed answer
            return TrialRecord(
                suite=suite.name,
                model=spec.model.name,
                task=spec.task,
                trial=spec.trial,
                attempt=spec.attempt,
                seed=spec.seed,
                reason="crash",
                detail=f"Ray: {exc}",
            )
        return TrialRecord.from_dict(data)

    try:
        yield execute
    finally:
        if started:
            ray.shutdown()
