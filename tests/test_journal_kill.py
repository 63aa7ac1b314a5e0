"""Exactly once under SIGKILL: real processes, a real journal (SQLite, PostgreSQL), the bank's ledger in a file.

Each scenario kills a run several times at random points (just before or after any journal append,
inside a transfer before or after it reaches the bank, or at a random moment from outside) and then
lets it finish. After every kill the journal must open and read cleanly; at the end each distinct
transfer must appear in the ledger exactly once.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolslip.durable.stores import open_store

CHILD = Path(__file__).with_name("_bank_run.py")
SEED = int(os.environ.get("TOOLSLIP_KILL_SEED", "0")) or random.randrange(1 << 30)


def launch(journal: str, run_id: str, ledger: Path, kill: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), journal, run_id, str(ledger), kill],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def kill_from_outside(process: subprocess.Popen[str], delay: float) -> None:
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"  # imports done: the run itself is what gets hit
    time.sleep(delay)
    process.send_signal(signal.SIGKILL)
    process.communicate()


def assert_journal_readable(journal: str, run_id: str) -> int:
    if journal.endswith(".sqlite"):
        db = sqlite3.connect(journal)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
    store = open_store(journal)
    try:
        entries = store.entries(run_id)
        store.runs()
    finally:
        store.close()
    assert [e.seq for e in entries] == sorted(e.seq for e in entries)
    return len(entries)


def random_kill(rng: random.Random) -> str:
    kind = rng.choice(["pre", "post", "pre", "post", "midpre", "mid", "mid", "outside"])
    if kind == "outside":
        return kind
    return f"{kind}:{rng.randint(1, 2) if kind.startswith('mid') else rng.randint(1, 8)}"


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_runs_each_transfer_once(journal_at: str, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    kills = scenarios = 0
    while kills < 20:  # scenarios until 20 kills have landed
        assert scenarios < 10, f"seed {SEED}: only {kills} kills landed in 10 scenarios"
        journal = journal_at.replace("runs.sqlite", f"j{scenarios}.sqlite")  # a URL: one journal, a run each
        ledger, run_id = tmp_path / f"ledger{scenarios}", f"run{scenarios}"
        for _ in range(4):
            kill = random_kill(rng)
            process = launch(journal, run_id, ledger, "none" if kill == "outside" else kill)
            if kill == "outside":
                kill_from_outside(process, rng.uniform(0.0, 0.04))
            else:
                process.communicate(timeout=30)
            if process.returncode != -signal.SIGKILL:
                break  # the kill point lay past the end of the run: it completed
            kills += 1
            if not journal.endswith(".sqlite") or Path(journal).exists():
                assert_journal_readable(journal, run_id)
        out, err = launch(journal, run_id, ledger, "none").communicate(timeout=30)
        where = f"seed {SEED}, scenario {scenarios}"
        assert out.split()[-1:] == ["completed"], f"{where}: {out} {err}"
        assert sorted(ledger.read_text().split()) == ["r1", "r2", "r3"], where
        assert assert_journal_readable(journal, run_id) > 0
        scenarios += 1
    print(f"seed {SEED}: {kills} kills in {scenarios} scenarios; each ledger shows r1, r2, r3 once")
