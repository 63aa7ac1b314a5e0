"""The same suite on a local Ray cluster gives exactly the results of a local run with the same seeds."""

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray  # a missing extra fails loudly: pip install -e ".[ray]"

from toolslip.evals import FlakyModel, TrialRecord, evaluate, load_suite, read_results
from toolslip.evals.ray_backend import ray_executor

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")
pytestmark = pytest.mark.slow


def _comparable(record: TrialRecord) -> dict[str, Any]:
    """Everything but timing and tool-call ids (ids come from a per-process counter)."""
    data = record.to_dict()
    del data["seconds"]
    text = json.dumps(data["messages"])
    for message in json.loads(text):
        for part in message["parts"]:
            for key in ("id", "call_id"):
                part.pop(key, None)
        data.setdefault("transcript", []).append(message)
    del data["messages"]
    return data


def _key(record: TrialRecord) -> tuple[str, str, int, int]:
    return (record.model, record.task, record.trial, record.attempt)


@pytest.fixture
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_a_ray_run_equals_a_local_run(cluster: None, tmp_path: Path) -> None:
    suite = load_suite(EXAMPLE)
    models = [FlakyModel(0.7, provider_error_rate=0.1), FlakyModel(0.9)]
    local = asyncio.run(evaluate(suite, models, k=8, seed=11, retries=2))
    out = tmp_path / "ray.jsonl"
    with ray_executor(suite, "local") as executor:
        remote = asyncio.run(evaluate(suite, models, k=8, seed=11, retries=2, out=out, executor=executor))
    assert ray.is_initialized()  # the executor left the test's cluster alone
    assert len(local) == len(remote) > 80
    assert {r.reason for r in local} >= {"pass", "provider_error", "wrong_state"}
    assert sorted(map(_comparable, local), key=str) == sorted(map(_comparable, remote), key=str)
    assert sorted(read_results(out), key=_key) == sorted(remote, key=_key)  # streamed to the file


def test_the_cli_runs_on_ray_local(tmp_path: Path) -> None:
    on_ray, here = tmp_path / "ray.jsonl", tmp_path / "local.jsonl"
    cli = [sys.executable, "-m", "toolslip.cli", "eval", EXAMPLE, "--model", "flaky:0.8", "-k", "3"]
    subprocess.run([*cli, "--out", str(on_ray), "--ray", "local"], check=True, capture_output=True, timeout=300)
    subprocess.run([*cli, "--out", str(here)], check=True, capture_output=True, timeout=60)
    ray_records, local_records = read_results(on_ray), read_results(here)
    assert len(ray_records) == 15
    assert sorted(map(_comparable, ray_records), key=str) == sorted(map(_comparable, local_records), key=str)
