"""Storage faults of the run journal, made for real, each reported in one sentence with a non-zero exit.

* A full disk: the journal on a small tmpfs, filled by the run itself or by a filler file (``mount -t
  tmpfs -o size=...``; CI runs as root).
* Damaged pages: bytes overwritten at random places in a real journal file.
* A read-only folder: the tmpfs remounted read-only, which binds root too (permission bits do not).

And afterwards ``resume`` never runs a side effect twice: the bank writes each transfer to a ledger
outside the journal's file system, the witness of what really happened.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolslip import Agent, Toolbox, tool
from toolslip.cli import main
from toolslip.journal import Journal, SqliteStore
from toolslip.testing import FunctionModel, call

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small file system needs root (CI runs as root)")

TOOLSLIP = str(Path(sys.executable).with_name("toolslip"))
SEED = int(os.environ.get("TOOLSLIP_FAULT_SEED", "0")) or random.randrange(1 << 30)

BANK = '''
import os, time
from pathlib import Path
from toolslip import tool
from toolslip.testing import FunctionModel, call

HERE = Path(__file__).parent


@tool(effects=["side_effect", "destructive"])
def transfer(reference: str) -> str:
    """Send money; the bank writes one ledger line per transfer."""
    with (HERE / "ledger").open("a") as f:
        f.write(reference + "\\n")
    return f"sent {reference}; receipt " + "x" * int(os.environ.get("RECEIPT", "20000"))


@tool(effects="read_only")
def hold() -> str:
    """Wait a long time."""
    (HERE / "holding").touch()
    time.sleep(60)
    return "held"


TURNS = [call("transfer", reference=f"r{i}") for i in range(1, 7)] + ["all paid"]
MODEL = FunctionModel(lambda request: TURNS[sum(m.role == "assistant" for m in request.messages)])
HOLDING = FunctionModel(lambda request: [call("hold"), "done"][sum(m.role == "assistant" for m in request.messages)])
'''


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``disk("256k")``: a fresh tmpfs of that size, unmounted after the test."""
    mounted: list[Path] = []

    def make(size: str) -> Path:
        folder = tmp_path / f"disk{len(mounted)}"
        folder.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)], check=True)
        mounted.append(folder)
        return folder

    yield make
    for folder in mounted:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def remount(folder: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(folder)], check=True)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill ``folder``'s file system up to ``leave`` bytes free, with one filler file (maybe none: full already)."""
    filler = folder / "filler"
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    try:
        with filler.open("wb") as f:
            f.write(b"\0" * max(0, free - leave))
            f.flush()
            while not leave:  # to the last block
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    return filler


def bank(folder: Path) -> Path:
    (folder / "bank.py").write_text(BANK)
    return folder / "bank.py"


def toolslip(folder: Path, *args: str, stdin: int | None = subprocess.DEVNULL) -> tuple[int, str, str]:
    env = {**os.environ, "TOOLSLIP_HOME": str(folder / "home"), "RECEIPT": os.environ.get("RECEIPT", "20000")}
    done = subprocess.run([TOOLSLIP, *args], stdin=stdin, capture_output=True, text=True, env=env, cwd=folder)
    return done.returncode, done.stdout, done.stderr


def one_sentence(code: int, err: str, command: str, journal: Path, says: str) -> None:
    """A non-zero exit and one line on stderr that names the command, the journal and the fault."""
    assert code != 0 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"toolslip {command}: the run journal {str(journal)!r}") and says in lines[0], err


def ledger(folder: Path) -> list[str]:
    file = folder / "ledger"
    return file.read_text().splitlines() if file.exists() else []


def run_ids(journal: Path) -> list[str]:
    store = SqliteStore(journal, read_only=True)
    try:
        return [run.run_id for run in store.runs()]
    finally:
        store.close()


def run_id_of(journal: Path) -> str:
    return run_ids(journal)[0]


def test_a_full_disk_during_run_and_resume_is_one_sentence_and_nothing_runs_twice(
    tmp_path: Path, disk: Callable[[str], Path]
) -> None:
    place = disk("192k")
    journal = place / "runs.sqlite"
    tools = bank(tmp_path)
    pay = ["run", str(tools), "pay", "--model", f"{tools}:MODEL", "--journal", str(journal), "--approve", "yes"]
    code, out, err = toolslip(tmp_path, *pay)
    one_sentence(code, err, "run", journal, "because its disk is full")
    paid = ledger(tmp_path)
    assert 0 < len(paid) < 6
    run_id = run_id_of(journal)
    filler = fill(place)  # not a byte left: resume fails at its first write (the lease)
    code, out, err = toolslip(tmp_path, "resume", run_id, "--journal", str(journal), "--approve", "yes")
    one_sentence(code, err, "resume", journal, "because its disk is full")
    assert "no transaction is active" not in err
    filler.unlink(missing_ok=True)
    remount(place, "size=8m")
    code, out, err = toolslip(tmp_path, "resume", run_id, "--journal", str(journal), "--approve", "yes",
                              "--rerun-interrupted", "no")  # fmt: skip
    assert code == 0 and "Traceback" not in err, err
    assert sorted(set(ledger(tmp_path))) == [f"r{i}" for i in range(1, 7)]
    assert len(ledger(tmp_path)) == 6  # every transfer exactly once


def test_prune_on_a_full_disk_is_one_sentence_and_removes_nothing(tmp_path: Path, disk: Callable[[str], Path]) -> None:
    place = disk("1m")
    journal = place / "runs.sqlite"
    finished(journal, runs=5)
    filler = fill(place)
    code, _, err = toolslip(tmp_path, "runs", "--prune", "--keep", "0", "--journal", str(journal))
    one_sentence(code, err, "runs", journal, "because its disk is full")
    assert "no transaction is active" not in err
    filler.unlink(missing_ok=True)
    store = SqliteStore(journal)
    assert len(store.runs()) == 5
    store.close()


def finished(journal: Path, runs: int) -> list[str]:
    """``runs`` completed runs in ``journal``, made in this process."""

    @tool(effects="read_only")
    def look(n: int) -> str:
        """Look."""
        return "seen " * 200

    ids = []
    for i in range(runs):
        model = FunctionModel(lambda r: [call("look", n=1), "done"][sum(m.role == "assistant" for m in r.messages)])
        store = Journal(journal)
        ids.append(Agent(model=model, tools=Toolbox([look]), hooks=store.wrap()).run(f"task {i}").run_id)
        store.store.close()
    return ids


def test_damaged_pages_are_one_sentence_in_runs_show_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = bank(tmp_path)
    pristine = tmp_path / "pristine.sqlite"
    argv = ["run", str(tools), "pay", "--model", f"{tools}:MODEL", "--journal", str(pristine), "--approve", "yes"]
    monkeypatch.setenv("RECEIPT", "3000")  # several pages of entries, so a damaged page hits entries as well
    assert main([*argv, "--max-steps", "4"]) == 3  # stopped at its step limit: resume has work to do
    db = sqlite3.connect(pristine)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the file that is damaged, none in its WAL
    db.close()
    run_id = run_id_of(pristine)
    rng = random.Random(SEED)
    size = pristine.stat().st_size
    failures = 0
    for trial in range(30):
        damaged = tmp_path / f"damaged{trial}.sqlite"
        shutil.copyfile(pristine, damaged)
        with damaged.open("r+b") as f:
            f.seek(rng.randrange(100 if trial % 3 else 0, size - 64))  # the header page too, sometimes
            f.write(rng.randbytes(rng.choice([8, 64, 512])))
        for command in (["runs"], ["show", run_id], ["resume", run_id, "--approve", "no"]):
            code = main([*command, "--journal", str(damaged)])  # a traceback would fail the test here
            err = capsys.readouterr().err
            if code not in (0, 3, 4):  # a damaged page that a command did not read does it no harm
                failures += 1
                lines = err.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith(f"toolslip {command[0]}: "), (SEED, trial, err)
                assert str(damaged) in lines[0] or f"no run {run_id!r}" in lines[0], (SEED, trial, err)
    assert failures > 0  # the damage was seen (seed in TOOLSLIP_FAULT_SEED reproduces a run)


def test_a_read_only_folder_left_by_a_killed_run_is_read_and_refused_for_writing(
    tmp_path: Path, disk: Callable[[str], Path]
) -> None:
    place = disk("8m")
    journal = place / "runs.sqlite"
    tools = bank(tmp_path)
    env = {**os.environ, "TOOLSLIP_HOME": str(tmp_path / "home")}
    command = [TOOLSLIP, "run", str(tools), "wait", "--model", f"{tools}:HOLDING", "--journal", str(journal)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=env, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not (tmp_path / "holding").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert Path(f"{journal}-wal").exists() and Path(f"{journal}-shm").exists()
    remount(place, "ro")
    run_id = run_id_of(journal)
    code, out, err = toolslip(tmp_path, "runs", "--journal", str(journal))
    assert code == 0 and f"{run_id}  " in out and "interrupted" in out, err
    code, out, err = toolslip(tmp_path, "show", run_id, "--journal", str(journal))
    assert code == 0 and "tool_start: hold" in out, err
    code, _, err = toolslip(tmp_path, "resume", run_id, "--journal", str(journal))
    one_sentence(code, err, "resume", journal, "is read-only")
    code, _, err = toolslip(tmp_path, "run", str(tools), "pay", "--model", f"{tools}:MODEL", "--journal", str(journal))
    one_sentence(code, err, "run", journal, "is read-only")
    assert ledger(tmp_path) == []


def test_the_journal_file_appears_with_the_runs_first_entry(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite"
    seen: list[int] = []

    @tool(effects="read_only")
    def look() -> str:
        """Look."""
        return "seen"

    def answer(request: object) -> object:
        seen.append(len(SqliteStore(path).entries(run)))
        return "done"

    journal = Journal(path)
    agent = Agent(model=FunctionModel(answer), tools=Toolbox([look]), hooks=journal.wrap())
    assert not path.exists()  # the journal and its hooks exist; the file does not, until the run writes
    run = "r1"
    asyncio.run(agent.arun("q", run_id=run))
    assert seen == [1]  # the start entry was there when the model was first asked
    code = main(["runs", "--journal", str(tmp_path / "none.sqlite")])
    assert code == 1 and not (tmp_path / "none.sqlite").exists()  # reading never creates one


def test_fault_injection_full_disk_at_random_points_then_resume_runs_nothing_twice(
    tmp_path: Path, disk: Callable[[str], Path]
) -> None:
    """Random free space before each run: the disk fills at a different append each time."""
    rng = random.Random(SEED)
    place = disk("1m")
    tools = bank(tmp_path)
    outcomes = []
    for trial in range(6):
        folder = tmp_path / f"trial{trial}"
        folder.mkdir()
        shutil.copy(tools, folder / "bank.py")
        journal = place / f"runs{trial}.sqlite"
        filler = fill(place, leave=rng.randrange(20_000, 320_000))
        code, _, err = toolslip(folder, "run", "bank.py", "pay", "--model", "bank.py:MODEL", "--journal",
                                str(journal), "--approve", "yes")  # fmt: skip
        if code == 0:
            outcomes.append("fit")
        else:
            one_sentence(code, err, "run", journal, "because its disk is full")
            filler.unlink(missing_ok=True)
            started = run_ids(journal) if journal.exists() else []
            if not started:  # the disk was full before the run's first entry: nothing ran
                assert ledger(folder) == [], (SEED, trial)
            else:
                code, _, err = toolslip(folder, "resume", started[0], "--journal", str(journal),
                                        "--approve", "yes", "--rerun-interrupted", "no")  # fmt: skip
                assert code == 0 and "Traceback" not in err, (SEED, trial, err)
                outcomes.append("resumed")
        if filler.exists():
            filler.unlink(missing_ok=True)
        paid = ledger(folder)
        assert len(paid) == len(set(paid)), (SEED, trial, paid)  # never twice
        for leftover in place.glob(f"runs{trial}.sqlite*"):
            leftover.unlink()
    assert "resumed" in outcomes, (SEED, outcomes)


def test_a_journal_cut_short_before_its_schema_has_no_runs(tmp_path: Path) -> None:
    """The disk filled after the file was made and before its tables were: readers see an empty journal."""
    journal = tmp_path / "runs.sqlite"
    db = sqlite3.connect(journal)
    db.execute("PRAGMA journal_mode=WAL")  # what the store does first, before its tables
    db.close()
    code, out, err = toolslip(tmp_path, "runs", "--journal", str(journal))
    assert (code, err) == (0, "") and out.startswith("no runs recorded yet")
    assert run_ids(journal) == []
