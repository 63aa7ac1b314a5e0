"""Shared by the console tests: a `toolslip console` process, runs in processes of their own, a journal."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
SRC = HERE.parent / "src"


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(SRC), "PYTHONUNBUFFERED": "1", **extra}


@dataclass
class Running:
    url: str
    """The base URL, no token."""
    token: str
    proc: subprocess.Popen[str]


@contextmanager
def console(journal: str, *extra: str) -> Iterator[Running]:
    """``toolslip console`` on a free loopback port; its printed URL read for the base and the token."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolslip.cli", "console", "--journal", journal, "--port", "0", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r"open (http://[^/]+)/\?token=(\S+)", line)
        if not found:
            proc.kill()
            raise AssertionError(f"the console printed {line!r}; stderr: {proc.stderr.read() if proc.stderr else ''}")
        yield Running(url=found.group(1), token=found.group(2), proc=proc)
    finally:
        proc.terminate()
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def worker(journal: str, run_id: str, prompt: str, **extra_env: str) -> subprocess.Popen[str]:
    """A run in a process of its own that pauses on a held call and waits for the inbox to decide it."""
    return subprocess.Popen(
        [sys.executable, str(HERE / "_console_worker.py"), journal, run_id, prompt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(**extra_env),
    )


def finished(proc: subprocess.Popen[str], seconds: float = 60) -> dict[str, str]:
    out, err = proc.communicate(timeout=seconds)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def toolslip(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "toolslip.cli", *args], capture_output=True, text=True, env=env())
    assert done.returncode == 0, done.stderr
    return done.stdout


def wait_until(check: object, seconds: float, what: str) -> float:
    """Poll ``check()`` until true; the time it took. Fails naming ``what``."""
    start = time.monotonic()
    while not check():  # type: ignore[operator]
        if time.monotonic() - start > seconds:
            raise AssertionError(f"{what}: not within {seconds} s")
        time.sleep(0.02)
    return time.monotonic() - start


def seed(journal: str) -> None:
    """A journal with one finished run, so the console has a journal to open."""
    proc = worker(journal, "seed", "read 1 pages", CONSOLE_STEP_SECONDS="0")
    assert finished(proc)["stop_reason"] == "completed"


def states(journal: str) -> dict[str, str]:
    from toolslip.durable.stores import open_store

    store = open_store(journal, read_only=True)
    try:
        return {r.run_id: r.status for r in store.runs(1000)}
    finally:
        store.close()


__all__: Sequence[str] = ["Running", "console", "finished", "seed", "states", "toolslip", "wait_until", "worker"]
