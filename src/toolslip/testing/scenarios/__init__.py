"""Prompt-injection scenario suites: small worlds with benign tasks and attacks planted in their data.

Used by the tests, ``benchmarks/injection.py`` and ``toolslip injection``; see ``docs/injection.md``.
"""

from __future__ import annotations

from .harness import Suite

__all__ = ["SUITES", "suite"]


def _load() -> dict[str, Suite]:
    from . import bank, chat, issues, mail

    return {s.name: s for s in (issues.SUITE, bank.SUITE, mail.SUITE, chat.SUITE)}


SUITES: dict[str, Suite] = _load()


def suite(name: str) -> Suite:
    """The suite called ``name``; a :class:`~toolslip.core.errors.ConfigError` names the choices otherwise."""
    from ...core.errors import ConfigError

    if name not in SUITES:
        raise ConfigError(f"no injection suite is called {name!r}; choose one of: {', '.join(SUITES)}")
    return SUITES[name]
