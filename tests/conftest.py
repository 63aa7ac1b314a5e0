"""Checks that run once, before any test."""

from __future__ import annotations

import pytest


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop with one sentence if llama.cpp would crash here, instead of losing the whole run to a signal.

    A library built for features this machine does not run kills the process that decodes with it (issue
    14: SIGILL on an Intel CPU whose OS withholds AMX), which took pytest down mid-suite without a word.
    The check runs in a child process, once per library build (a marker in the model cache).
    """
    from toolslip.providers.local import available

    if not available():  # the local-model tests say themselves which extra is missing
        return
    from toolslip.providers.local_probe import LibraryCrash, check_library
    from toolslip.providers.local_weights import CATALOGUE, DEFAULT_MODEL, ensure_weights

    try:
        check_library(ensure_weights(CATALOGUE[DEFAULT_MODEL]))
    except LibraryCrash as exc:
        pytest.exit(f"the embedded model cannot run on this machine: {exc}", returncode=1)
