"""pass^k and pass@k: how often k runs of the same task *all* succeed, and how often *any* does.

Both use the unbiased estimators over n trials with c successes (the same definitions as tau-bench and
tau2-bench): pass^k = C(c, k) / C(n, k) and pass@k = 1 - C(n - c, k) / C(n, k). For a suite they are
averaged over tasks, so every task weighs the same however many trials it has.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb

__all__ = ["SUCCESS_TOLERANCE", "is_success", "pass_at_k", "pass_hat_k", "suite_pass_at_k", "suite_pass_hat_k"]

SUCCESS_TOLERANCE = 1e-6
"""A trial succeeds when its reward is within this of 1 (tau-bench's rule)."""


def is_success(reward: float) -> bool:
    return abs(reward - 1.0) <= SUCCESS_TOLERANCE


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"successes must be between 0 and the number of trials ({n}), got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and the number of trials ({n}), got {k}")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that k trials drawn without replacement from the n run all succeeded."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k trials drawn from the n run succeeded."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def suite_pass_hat_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean over tasks of pass^k; ``counts`` holds one ``(n, c)`` per task, each with n >= k."""
    values = [pass_hat_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("no task has trials to score")
    return sum(values) / len(values)


def suite_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean over tasks of pass@k."""
    values = [pass_at_k(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("no task has trials to score")
    return sum(values) / len(values)
