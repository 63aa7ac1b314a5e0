"""Exactly once inside a program, under SIGKILL: code mode's calls are journaled like direct ones.

The child (``_bank_run.py ... code``) pays three people from one program (a repeated transfer and gathered
reads in it) under a real SQLite journal, and kills itself at a random point: just before or after a
journal append, or inside a transfer before or after it reaches the bank's ledger (a file outside the
process). Then the run is resumed, in half the trials by two processes started at once. A resume runs the
same program again: finished calls are answered from the journal, a transfer cut off mid-way is asked
about (the approver checks the ledger), never silently run again. At the end each transfer is in the
ledger exactly once.
"""

from __future__ import annotations

import collections
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from test_journal_kill import SEED, assert_journal_readable

CHILD = Path(__file__).with_name("_bank_run.py")


def launch(journal: Path, ledger: Path, kill: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(CHILD), str(journal), "run", str(ledger), kill, "code"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.slow
def test_sigkill_inside_programs_then_resume_pays_each_transfer_once(tmp_path: Path) -> None:
    pytest.importorskip("pydantic_monty")
    rng = random.Random(SEED)
    trials = raced = 0
    while trials < 20:
        where = f"seed {SEED}, trial {trials}"
        journal, ledger = tmp_path / f"j{trials}.sqlite", tmp_path / f"ledger{trials}"
        kind = rng.choice(["pre", "post", "midpre", "mid"])
        kill = f"{kind}:{rng.randint(1, 3) if kind.startswith('mid') else rng.randint(2, 9)}"
        first = launch(journal, ledger, kill)
        first.communicate(timeout=60)
        if first.returncode != -signal.SIGKILL:
            continue  # the kill point lay past the end of the run
        assert_journal_readable(str(journal), "run")
        if trials % 2:  # two resumes at once: the lease lets one run it; the other says who holds it
            a, b = launch(journal, ledger, "none"), launch(journal, ledger, "none")
            outs = [p.communicate(timeout=60) for p in (a, b)]
            raced += sum("being executed" in err or "RunBusy" in err for _, err in outs)
        out, err = launch(journal, ledger, "none").communicate(timeout=60)
        assert out.split()[-1:] == ["completed"], f"{where}: {out} {err}"
        paid = ledger.read_text().split() if ledger.exists() else []
        twice = [r for r, n in collections.Counter(paid).items() if n > 1]
        assert not twice, f"{where} ({kill}): {twice} ran twice: {paid}"
        assert sorted(paid) == ["r1", "r2", "r3"], f"{where} ({kill}): {paid}"
        trials += 1
    print(f"seed {SEED}: 20 programs killed and resumed; {raced} resumes found the run held by the other")
