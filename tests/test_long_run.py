"""The embedded model finishes a 200-step run of large tool outputs with each built-in history processor.

This is ``benchmarks/long_run.py`` as a test (slow: tens of minutes per processor on two cores, so not
part of the suite's budget). ``TOOLSLIP_LONG_RUN=1`` runs every processor; ``TOOLSLIP_LONG_RUN=summarize,
keep_last_turns`` the ones named; ``TOOLSLIP_LONG_RUN_STEPS`` changes the 200. Every request the processor
produced must pass ``toolslip check`` in every wire format (the run stops at the first that does not) and
fit the 8,192-token window by itself, and the run must end with the model's answer at the last step.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROCESSORS = ("keep_last_turns", "clear_tool_results", "trim_to_tokens", "summarize")
WANTED = os.environ.get("TOOLSLIP_LONG_RUN", "")
STEPS = int(os.environ.get("TOOLSLIP_LONG_RUN_STEPS", "200"))


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("long_run_bench", ROOT / "benchmarks" / "long_run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("processor", PROCESSORS)
def test_a_long_run_of_the_embedded_model_fits_its_window_and_passes_check(processor: str) -> None:
    if not (WANTED in ("1", "all") or processor in WANTED.split(",")):
        pytest.skip("the embedded model's 200-step runs take tens of minutes each: TOOLSLIP_LONG_RUN=1 runs them")
    pytest.importorskip("llama_cpp")
    from toolslip.providers.local import available, local_model

    if not available():
        pytest.skip("the embedded model's weights are not installed")
    bench = _bench()
    model = local_model("local:qwen2.5-coder-0.5b")
    assert sorted(bench.PROCESSORS) == sorted(PROCESSORS)  # a new built-in gets its run here too
    row = bench.run_one(processor, STEPS, 2_000, model)
    assert row["error"] == "", row
    assert row["stop_reason"] == "completed" and row["steps"] == STEPS, row
    assert row["requests_checked"] == STEPS  # checked at every step
    assert row["requests_over_window"] == 0 and row["largest_request_tokens"] + 64 <= model.n_ctx, row
    assert row["cli_check_of_last_request"] == "passed", row
    assert row["distinct_pages_called"] >= STEPS // 2, row  # it really worked through the report
