"""``toolslip eval --ray``: each trial a run of the fleet on a multi-node Ray cluster, against the fleet's journal.

The report must be the one the plain eval gives for the same seeds (same records, same table, rows in the
suite's order), also when a node is SIGKILLed while it plays a trial: that trial is played again from its
start on another node (its environment died with the node), and the journal says so.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from toolslip.console.index import RunIndex
from toolslip.durable.journal_store import SqliteStore
from toolslip.evals import (
    FlakyModel,
    ReferenceModel,
    TrialRecord,
    evaluate,
    load_suite,
    read_results,
    summarize,
    summary_table,
)
from toolslip.evals.on_fleet import fleet_executor
from toolslip.fleet import Policy

ray = pytest.importorskip("ray")
from ray._private import ray_constants  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from test_fleet import ray_cluster  # noqa: E402

EXAMPLE = str(Path(__file__).parents[1] / "examples" / "suite_expenses.py")
pytestmark = pytest.mark.slow

SHELF = '''
import time
from toolslip import tool
from toolslip.evals import Suite, Task
from toolslip.testing import call, reply


class Shelf:
    """A fresh shelf per trial: the check reads what the trial put on it, in this worker's memory."""

    def __init__(self):
        self.books = []

        @tool(effects="side_effect")
        def shelve(title: str) -> str:
            """Put a book on the shelf."""
            time.sleep(0.4)  # long enough for the test to kill the node inside it
            self.books.append(title)
            return f"shelved {title}"

        self.tools = [shelve]


def check(outcome):
    assert outcome.env.books == ["dune", "emma"], f"the shelf holds {outcome.env.books}"


suite = Suite(name="shelf", max_steps=4, tasks=[
    Task(id=f"shelf-{n}", prompt="Shelve Dune, then Emma.", env=Shelf, check=check,
         reference=[call("shelve", title="dune"), call("shelve", title="emma"), reply("Both shelved.")])
    for n in range(4)
])
'''


def _comparable(record: TrialRecord) -> dict[str, Any]:
    """Everything but timing and tool-call ids (ids come from a per-process counter)."""
    data = record.to_dict()
    del data["seconds"]
    for message in data["messages"]:
        for part in message["parts"]:
            for key in ("id", "call_id"):
                part.pop(key, None)
    return data


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    yield from ray_cluster()


def test_eval_ray_reports_what_the_plain_eval_reports(cluster: Cluster, tmp_path: Path) -> None:
    journal = tmp_path / "runs.sqlite"
    cli = [sys.executable, "-m", "toolslip.cli", "eval", EXAMPLE, "--model", "flaky:0.7", "-k", "3", "--seed", "5"]
    on_ray = subprocess.run(
        [*cli, "--out", str(tmp_path / "ray.jsonl"), "--ray", cluster.address, "--journal", str(journal)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    plain = subprocess.run([*cli, "--out", str(tmp_path / "plain.jsonl")], capture_output=True, text=True, timeout=60)
    assert on_ray.stdout and on_ray.stdout == plain.stdout, on_ray.stderr[-2000:]
    assert on_ray.returncode == plain.returncode
    fleet, here = read_results(tmp_path / "ray.jsonl"), read_results(tmp_path / "plain.jsonl")
    assert len(fleet) == 15
    assert sorted(map(_comparable, fleet), key=str) == sorted(map(_comparable, here), key=str)

    store = SqliteStore(journal)  # every trial a run of the fleet, its start saying which eval, task and trial
    runs = store.runs(100)
    assert len(runs) == 15 and all(r.status == "completed" for r in runs), runs
    starts = [next(e for e in store.entries(r.run_id) if e.kind == "start").data["meta"]["eval"] for r in runs]
    assert sorted((m["task"], m["trial"], m["position"]) for m in starts) == sorted(
        (r.task, r.trial, r.position) for r in fleet
    )
    assert len({m["report"] for m in starts}) == 1 and all(r.run_id.startswith(starts[0]["report"]) for r in runs)
    # the console lists them under that report, as it does a journaled eval run in one process
    index = RunIndex(store)
    index.refresh()
    reports = index.reports()
    assert list(reports) == [starts[0]["report"]] and len(reports[starts[0]["report"]]) == 15


def test_a_node_killed_mid_eval_still_gives_the_whole_report(cluster: Cluster, tmp_path: Path) -> None:
    (tmp_path / "shelf.py").write_text(SHELF)
    suite = load_suite(str(tmp_path / "shelf.py"))
    models = [ReferenceModel(), FlakyModel(0.6)]
    plain = asyncio.run(evaluate(suite, models, k=3, seed=3))
    journal = tmp_path / "runs.sqlite"
    records: list[TrialRecord] = []
    again: list[TrialRecord] = []

    def drive() -> None:
        with fleet_executor(suite, None, str(journal), policy=Policy(backoff=0.1)) as executor:
            records.extend(asyncio.run(evaluate(suite, models, k=3, seed=3, concurrency=6, executor=executor)))
            # The same trials in another evaluate() are played again, not read back from the journal.
            again.extend(asyncio.run(evaluate(suite, models[:1], k=1, seed=3, executor=executor)))

    driver = threading.Thread(target=drive)
    driver.start()
    killed = kill_a_node_inside_a_trial(cluster, SqliteStore(journal), driver)
    driver.join(120)
    assert not driver.is_alive() and killed, "the eval did not end, or no node was killed inside a trial"
    assert len(records) == len(plain) == 24
    assert sorted(map(_comparable, records), key=str) == sorted(map(_comparable, plain), key=str)
    assert summary_table(summarize(records)) == summary_table(summarize(plain))
    assert [t.task for t in summarize(records)[0].tasks] == [f"shelf-{n}" for n in range(4)]
    store = SqliteStore(journal)
    runs = store.runs(100)
    assert len(runs) == 24 + 4 and [r.success for r in again] == [True] * 4
    replayed = [r.run_id for r in runs if any(e.data.get("from_start") for e in store.entries(r.run_id))]
    assert replayed, "no trial was played again from its start after the kill"


def kill_a_node_inside_a_trial(cluster: Cluster, store: SqliteStore, driver: threading.Thread) -> bool:
    """SIGKILL the node whose worker holds a trial's lease (its pid is in the lease); a fresh node replaces it.

    A trial can finish in the moment between reading its journal and the kill landing; then nothing is left
    to play again, so the kill counts only when one of that node's trials still has no ``finish`` entry
    after its node is gone, and otherwise another node is killed."""
    deadline = time.monotonic() + 60
    while driver.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
        held = store.leases.holders().items() if store.path.exists() else ()
        # only a trial still playing: started (a lease is taken a moment before the start entry is written, and
        # a kill in between leaves nothing to play again from its start) and not finished (a lease outlives
        # its run's finish entry for a moment)
        playing = {h.pid: run for run, h in held if h.alive() and _playing([e.kind for e in store.entries(run)])}
        for node in cluster.worker_nodes:
            raylet = psutil.Process(node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid)
            runs = [run for pid, run in playing.items() if pid in {p.pid for p in raylet.children(recursive=True)}]
            if runs:
                cluster.remove_node(node, allow_graceful=False)
                cluster.add_node(num_cpus=1)
                if any(_playing([e.kind for e in store.entries(run)]) for run in runs):
                    return True
                break
    return False


def test_eval_ray_needs_a_journal_the_remote_cluster_shares(tmp_path: Path) -> None:
    cli = [sys.executable, "-m", "toolslip.cli", "eval", EXAMPLE, "--model", "reference", "-k", "1"]
    done = subprocess.run([*cli, "--ray", "ray://nowhere:10001"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pass --journal postgresql://" in done.stderr and "Traceback" not in done.stderr


def _playing(kinds: list[str]) -> bool:
    return "start" in kinds and "finish" not in kinds
