"""What a results file and its report say about the run that made them: when, by which toolslip, from which
command line, and with which models and settings.

A pass^k read months later, or next to another, means little without these: a different model version, a
different ``-k`` or a changed suite all move it. :func:`evaluate` writes one ``{"type": "run", ...}`` line
to the results file each time it runs (a resumed file gets one per run); readers of trials skip it, and
:func:`read_runs` gives them back for ``toolslip eval-report``.
"""

from __future__ import annotations

import json
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.model import Model
    from .suite import Suite
    from .trial import TrialModel

__all__ = ["SAMPLING", "read_runs", "run_info"]


def run_info(
    suite: Suite,
    models: Sequence[Model | TrialModel],
    *,
    k: int,
    seed: int,
    retries: int,
    command: Sequence[str] | None = None,
    mode: str = "tool",
) -> dict[str, Any]:
    """The ``run`` line of a results file (JSON values only)."""
    from ..core.version import __version__

    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "toolslip": __version__,
        "python": platform.python_version(),
        "command": list(command) if command is not None else None,
        "suite": suite.name,
        "models": [m.name for m in models],
        "k": k,
        "seed": seed,
        "retries": retries,
        "max_steps": suite.max_steps,
        "mode": mode,
        "sampling": SAMPLING,
    }


SAMPLING = "each provider's defaults (trials set no temperature, token limit or tool choice)"
"""What a trial's agent asks of sampling: nothing (``Settings()``), so the provider's defaults apply."""


def read_runs(path: str | Path) -> list[dict[str, Any]]:
    """The ``run`` lines of a results file, in order (none in files written before they were)."""
    runs = []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if line.startswith('{"type": "run"'):
                data = json.loads(line)
                runs.append({k: v for k, v in data.items() if k != "type"})
    return runs
