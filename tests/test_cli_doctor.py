"""``toolslip doctor`` in the three states the issue names: a fresh setup before the weights are assembled,
after a run, and with a journal that cannot be opened. Tests run as root, for whom ``chmod 000`` stops no
read, so "unreadable" is made the way that fails for root too: a journal folder whose parent is a file, and
a journal file that is not a database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from toolslip.providers import BASE_URL_VARIABLES

ROOT = Path(__file__).resolve().parents[1]


def doctor(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TOOLSLIP_MODEL"}
    clean = {k: v for k, v in clean.items() if k not in ("TOOLSLIP_CACHE", *BASE_URL_VARIABLES)}
    return subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "doctor"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**clean, **env},
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def line(out: str, label: str) -> str:
    return next(x for x in out.splitlines() if x.startswith(label + ":"))


def test_a_fresh_setup_before_the_weights_are_assembled(tmp_path: Path) -> None:
    done = doctor(TOOLSLIP_HOME=str(tmp_path / "home"), TOOLSLIP_CACHE=str(tmp_path / "cache"))
    assert done.returncode == 0, done.stdout
    assert line(done.stdout, "model").split()[1:3] == ["local", "(no"]  # no key: the embedded model
    local = line(done.stdout, "local model")
    assert "llama.cpp check not run yet" in local and "not assembled yet" in local
    assert line(done.stdout, "journal").endswith("runs.sqlite: none yet (created by the first run)")
    assert "prices yes" in line(done.stdout, "extras") and "genai-prices 0.2" in line(done.stdout, "versions")
    assert done.stdout.splitlines()[-1] == "ok: nothing that `make run` needs is broken"
    assert not (tmp_path / "home").exists() and not (tmp_path / "cache").exists()  # it only looks


def test_after_a_run(tmp_path: Path) -> None:
    # the default model cache, where the suite's first check assembled the weights and ran llama.cpp once
    home = str(tmp_path / "home")
    ran = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "run", "examples/weather.py", "Beijing?", "--model", "scripted"],
        cwd=ROOT,
        env={**os.environ, "TOOLSLIP_HOME": home},
        capture_output=True,
        timeout=120,
    )
    assert ran.returncode == 0
    done = doctor(TOOLSLIP_HOME=home)
    assert done.returncode == 0, done.stdout
    local = line(done.stdout, "local model")
    assert "llama.cpp check passed" in local and "assembled at" in local and "verified" in local
    assert "1 run (1 completed)" in line(done.stdout, "journal")


def test_keys_are_never_shown(tmp_path: Path) -> None:
    done = doctor(
        TOOLSLIP_HOME=str(tmp_path),
        OPENAI_API_KEY="sk-test-SECRETSECRET",
        OPENAI_BASE_URL="https://user:hunter2@proxy.example:8443/v1",
    )
    assert "SECRET" not in done.stdout and "hunter2" not in done.stdout
    assert "OPENAI_API_KEY set (20 characters)" in line(done.stdout, "keys")
    assert "OPENAI_BASE_URL=https://***@proxy.example:8443/v1" in line(done.stdout, "base URLs")
    assert line(done.stdout, "model").split()[1] == "openai:gpt-4o-mini"


def test_a_journal_that_cannot_be_opened_is_broken_with_its_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the journal's folder should be\n")
    done = doctor(TOOLSLIP_HOME=str(blocker / "home"))
    assert done.returncode == 1
    assert "BROKEN: cannot create the journal" in line(done.stdout, "journal")
    assert done.stdout.splitlines()[-1].startswith("fix: cannot create the journal") and "TOOLSLIP_HOME" in done.stdout

    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "runs.sqlite").write_bytes(b"not a database, but 100 bytes of it " * 3)
    done = doctor(TOOLSLIP_HOME=str(tmp_path / "home"))
    assert done.returncode == 1
    assert "BROKEN: the run journal" in line(done.stdout, "journal") and "is damaged" in done.stdout
    assert "fix: " in done.stdout and "mv " in done.stdout.splitlines()[-1]


def test_a_base_url_every_run_would_refuse_is_broken(tmp_path: Path) -> None:
    """It said "ok" while every run failed with "not an http(s) URL": the URLs are read as the transports read them."""
    done = doctor(TOOLSLIP_HOME=str(tmp_path), OPENAI_API_KEY="sk-test", OPENAI_BASE_URL="127.0.0.1:9/v1")
    assert done.returncode == 1, done.stdout
    said = "OPENAI_BASE_URL '127.0.0.1:9/v1' is not an http(s) URL with a host; write it with its scheme"
    assert line(done.stdout, "base URL").startswith(f"base URL:    BROKEN: {said}")
    assert done.stdout.splitlines()[-1].endswith(
        "export OPENAI_BASE_URL=http://HOST:PORT/PATH, or unset OPENAI_BASE_URL"
    )
    fine = doctor(TOOLSLIP_HOME=str(tmp_path), OLLAMA_HOST="127.0.0.1", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    assert "ANTHROPIC_BASE_URL=http://127.0.0.1:9" in line(fine.stdout, "base URLs")  # Ollama's bare host is fine
    assert "OLLAMA_HOST=127.0.0.1" in line(fine.stdout, "base URLs")
