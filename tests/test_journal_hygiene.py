"""The journal: private to its owner, each big value stored once, finished runs prunable (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from _journals import refused_change
from toolslip import Agent, Toolbox, tool
from toolslip.approval import Approval
from toolslip.cli import main
from toolslip.dedup import Dedup
from toolslip.errors import ProviderError
from toolslip.journal import Journal
from toolslip.messages import Request
from toolslip.testing import FunctionModel, ScriptedModel, Turn, call

MB = 1_000_000


@tool(effects="side_effect")
def save(text: str) -> str:
    """Save a document."""
    return f"saved {len(text)} characters"


@tool(effects="side_effect")
def export(n: int) -> str:
    """Export n characters."""
    return "z" * n


TOOLS = Toolbox([save, export])


def run(journal: Journal, *turns: Turn, run_id: str | None = None) -> None:
    Agent(model=ScriptedModel(list(turns)), tools=TOOLS, hooks=journal.wrap(Dedup())).run("q", run_id=run_id)


def on_disk(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.iterdir())


def test_the_journal_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    folder = tmp_path / "home" / "toolslip"
    journal = Journal(folder / "runs.sqlite")
    run(journal, call("save", text="a secret argument"), "ok")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    modes = {f.name: stat.S_IMODE(f.stat().st_mode) for f in folder.iterdir()}
    assert modes == {"runs.sqlite": 0o600, "runs.sqlite-wal": 0o600, "runs.sqlite-shm": 0o600}


def stored(journal: Journal, run_id: str) -> int:
    """Bytes of entry data the store holds for the run (PostgreSQL compresses them on disk: this is before)."""
    return next(r.size for r in journal.store.runs() if r.run_id == run_id)


def test_a_10_mb_argument_and_a_10_mb_output_are_each_stored_once(journal_at: str, tmp_path: Path) -> None:
    sqlite = journal_at.endswith(".sqlite")
    journal = Journal(journal_at)
    document = "y" * (10 * MB)
    run(journal, call("save", text=document), "ok", run_id="warm-up")  # the write-ahead log grows once
    before = on_disk(tmp_path)
    run(journal, call("save", text=document), "ok", run_id="doc")
    assert 10 * MB <= stored(journal, "doc") < 10.5 * MB
    grew = on_disk(tmp_path) - before
    assert not sqlite or 10 * MB <= grew < 10.5 * MB, f"a 10 MB argument grew the journal by {grew / MB:.1f} MB"

    before = on_disk(tmp_path)
    run(journal, call("export", n=10 * MB), call("export", n=10 * MB), "ok", run_id="out")  # the second: a duplicate
    assert 10 * MB <= stored(journal, "out") < 10.5 * MB
    grew = on_disk(tmp_path) - before
    assert not sqlite or 10 * MB <= grew < 10.5 * MB, f"an output and its duplicate grew it by {grew / MB:.1f} MB"

    # What is stored once is replayed in full: the same argument, the same duplicate answer.
    def never(request: Request) -> Turn:
        raise AssertionError("a finished run is replayed, not asked again")

    resumed = Agent(model=FunctionModel(never), tools=TOOLS, hooks=journal.wrap(Dedup()))
    replayed = asyncio.run(journal.resume(resumed, "doc")).messages
    assert replayed[1].tool_calls[0].arguments == {"text": document}
    replayed = asyncio.run(journal.resume(resumed, "out")).messages
    first, second = (m.tool_results[0].text for m in replayed if m.tool_results)
    assert first == "z" * (10 * MB) and second.startswith("[duplicate:") and second.endswith("\n" + first)


def test_prune_removes_finished_runs_only_and_gives_the_space_back(journal_at: str) -> None:
    path = journal_at
    journal = Journal(path)
    for name in ("old", "older-but-big", "newer"):
        run(journal, call("export", n=2 * MB if name == "older-but-big" else 10), "ok", run_id=name)
        time.sleep(0.01)
    cut = time.time()
    run(journal, call("save", text="kept"), "ok", run_id="newest")
    paused = Agent(model=ScriptedModel([call("save", text="x"), "ok"]), tools=TOOLS, hooks=journal.wrap(Approval()))
    assert paused.run("q", run_id="paused").stop_reason == "paused"
    with pytest.raises(ProviderError):
        Agent(model=FunctionModel(_down), tools=TOOLS, hooks=journal.wrap()).run("q", run_id="failed")
    live = Journal(path)
    live.lease("running")  # another process is executing this one
    live.store.append("running", "start", {"messages": []}, lease=live._leases["running"])

    report = journal.store.prune(before=cut, keep=1)  # finished before the cut, beyond the newest finished one
    assert set(report.removed) == {"old", "older-but-big", "newer"}
    if path.endswith(".sqlite"):  # PostgreSQL keeps the space for new entries (VACUUM, not VACUUM FULL)
        assert report.bytes_after < report.bytes_before - 1.5 * MB
    assert {r.run_id for r in journal.store.runs()} == {"newest", "paused", "failed", "running"}
    assert [e.kind for e in journal.store.entries("newest")] == [
        "start",
        "model",
        "tool_start",
        "tool_end",
        "model",
        "finish",
    ]
    assert "append-only" in refused_change(path, "DELETE FROM entries")  # still append-only after the prune
    if path.endswith(".sqlite"):
        db = sqlite3.connect(path)
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
    run(journal, call("save", text="after"), "ok", run_id="later")  # and it takes new runs
    assert journal.store.prune(keep=5).removed == ()


def _down(request: Request) -> Turn:
    raise ProviderError("down")


def test_runs_prune_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "runs.sqlite"
    journal = Journal(path)
    for name in ("a", "b", "c"):
        run(journal, call("save", text=name), "ok", run_id=name)
    journal.store.close()
    assert main(["runs", "--journal", str(path), "--prune", "--keep", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"removed 2 finished runs from {path} (") and " kB -> " in out
    assert main(["runs", "--journal", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("c ")
    assert main(["runs", "--journal", str(path), "--prune", "--before", "last tuesday"]) == 2  # bad usage
    assert "--before 'last tuesday' is not a date; write 2026-01-31" in capsys.readouterr().err
    assert main(["runs", "--journal", str(path), "--keep", "3"]) == 2
    assert "add --prune" in capsys.readouterr().err
