"""The old home of ``toolslip eval --ray``'s executor, kept so that its import path still works: trials are
now runs of the fleet (:mod:`toolslip.evals.on_fleet`), and ``ray_executor(suite, "local")`` is
:func:`~toolslip.evals.on_fleet.fleet_executor` with its temporary SQLite journal."""

from __future__ import annotations

from .on_fleet import fleet_executor as ray_executor

__all__ = ["ray_executor"]
