"""The llama.cpp check: a library that dies by a signal stops toolslip with one sentence, never silently.

The crashing library is a stand-in ``llama_cpp`` package put first on the child's ``PYTHONPATH``: it
reports the features a real build reports (AMX among them, as on the Intel machine of issue 14), then
kills its own process with a real signal where the real library would decode. Everything of ours runs
for real: the CLI, the model resolution, the child process, the marker file.
"""

from __future__ import annotations

import importlib.metadata
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli_run import toolslip  # the CLI as a subprocess, with no API keys and its own home
from toolslip.providers.local_probe import LibraryCrash, check_library
from toolslip.providers.local_weights import CATALOGUE, DEFAULT_MODEL, cache_dir, ensure_weights

ROOT = Path(__file__).resolve().parents[2]
VERSION = importlib.metadata.version("llama-cpp-python")
X86 = platform.machine().lower() in ("x86_64", "amd64")

# What llama_print_system_info says for a -march=native build on a Sapphire Rapids Xeon.
SAPPHIRE_RAPIDS_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
)


def crashing_library(root: Path, signal_name: str = "SIGILL") -> Path:
    """A folder holding a ``llama_cpp`` that loads, reports its features, and dies by ``signal_name`` on decode."""
    package = root / "llama_cpp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "import os, signal\n"
        f"def llama_print_system_info():\n    return {SAPPHIRE_RAPIDS_INFO.encode()!r}\n"
        "class Llama:\n"
        "    def __init__(self, **options):\n"
        "        pass\n"
        "    def tokenize(self, text):\n"
        "        return list(range(len(text.split())))\n"
        "    def eval(self, tokens):  # where the real library ran tileloadd\n"
        f"        os.kill(os.getpid(), signal.{signal_name})\n"
    )
    (package / "lib").mkdir()
    (package / "lib" / "libggml-cpu.so").write_bytes(b"\x7fELF stand-in")
    return root


def expected_sentence(library: Path, fault: str) -> str:
    """The start of the message, up to the cause clause (which depends on this machine's CPU)."""
    return f"the llama.cpp library in {library / 'llama_cpp'} crashed with {fault} during a test decode"


def markers() -> set[Path]:
    return set(cache_dir().glob("llama-cpp-checked-*.json"))


def amx_granted_here() -> bool:
    from toolslip.providers.local_probe import _cpu_flags, _os_grants_amx

    return "amx_int8" in _cpu_flags() and _os_grants_amx() is True


@pytest.fixture(scope="module")
def weights() -> Path:
    return ensure_weights(CATALOGUE[DEFAULT_MODEL])


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["run", "examples/weather.py", "What's the weather in Beijing?", "--model", "local"], "run"),
        (["serve", "--model", "local", "--port", "0"], "serve"),
    ],
)
def test_a_library_killed_by_sigill_stops_the_cli_with_the_rebuild_command(
    command: list[str], name: str, tmp_path: Path, weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    library = crashing_library(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(library))  # the CLI's process finds the stand-in, and so does its child
    before = markers()
    done = toolslip(*command, home=tmp_path / "home")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "model:" not in done.stdout and "127.0.0.1" not in done.stdout  # it stopped before working
    lines = [line for line in done.stderr.splitlines() if not line.startswith("toolslip: checking")]
    assert len(lines) == 1, done.stderr  # one sentence, no traceback
    message = lines[0]
    assert message.startswith(f"toolslip {name}: " + expected_sentence(library, "SIGILL (illegal instruction)"))
    assert message.endswith(
        "rebuild it for this machine with: CMAKE_ARGS='-DGGML_NATIVE=ON' "
        + (
            "CFLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' CXXFLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' "
            if X86
            else ""
        )
        + f"{sys.executable} -m pip install --no-cache-dir --force-reinstall --no-deps 'llama-cpp-python=={VERSION}'"
    )
    if not amx_granted_here():  # the AMD machines this suite runs on, and Intel ones whose OS withholds AMX
        assert "(it was built with AMX (AMX_INT8), which the CPU may advertise but this OS does not grant" in message
    assert markers() == before  # a crash is never recorded as a pass


def test_the_test_suite_stops_at_its_start_with_the_sentence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py runs the check before any test: one sentence, not a pytest run lost mid-way."""
    library = crashing_library(tmp_path / "site")
    monkeypatch.setenv("PYTHONPATH", str(library))
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", "tests/test_messages.py"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120, stdin=subprocess.DEVNULL)
    said = done.stdout + done.stderr
    assert done.returncode == 1, said
    sentence = expected_sentence(library, "SIGILL (illegal instruction)")
    assert f"the embedded model cannot run on this machine: {sentence}" in said
    assert "rebuild it for this machine with: CMAKE_ARGS='-DGGML_NATIVE=ON'" in said
    assert "collected" not in said  # it stopped before collecting a test


@pytest.mark.parametrize(
    ("signal_name", "fault"), [("SIGSEGV", "SIGSEGV (segmentation fault)"), ("SIGBUS", "SIGBUS (bus error)")]
)
def test_other_crashes_are_named_too(
    signal_name: str, fault: str, tmp_path: Path, weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process, as a library user meets it: a LibraryCrash (a ConfigError) raised in the calling process."""
    library = crashing_library(tmp_path / "site", signal_name)
    monkeypatch.setenv("PYTHONPATH", str(library))  # only the child sees the stand-in
    monkeypatch.setenv("TOOLSLIP_CACHE", str(tmp_path / "cache"))  # no marker from this suite's own check
    with pytest.raises(LibraryCrash) as crash:
        check_library(weights)
    # This process's own llama_cpp is the real one, so the message names it (the child ran the stand-in).
    assert re.match(r"the llama\.cpp library in \S+llama_cpp crashed with " + re.escape(fault), str(crash.value))
    assert not list((tmp_path / "cache").rglob("llama-cpp-checked-*"))


@pytest.mark.slow
def test_a_passing_check_runs_once_per_build(
    tmp_path: Path, weights: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The real library, a real decode in a child; then a new process finds the marker and runs no child."""
    monkeypatch.setenv("TOOLSLIP_CACHE", str(tmp_path / "cache"))
    check_library(weights)
    assert "checking that llama.cpp runs on this CPU" in capfd.readouterr().err
    (marker,) = (tmp_path / "cache" / "models").glob("llama-cpp-checked-*.json")
    assert "decoded: a batch of 122 tokens, then 4 single tokens" in marker.read_text()
    code = (
        "import pathlib; from toolslip.providers.local_probe import check_library; "
        f"check_library(pathlib.Path({str(weights)!r}))"
    )
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and again.stderr == ""  # no "checking..." line: no child ran
