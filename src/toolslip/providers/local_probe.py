"""Does the installed llama.cpp run on this machine? A short batched decode in a child process, once per build.

llama.cpp is compiled for the CPU that built it (``-march=native``), and a library that uses an
instruction this machine cannot run dies by a signal, with no traceback and no word, inside whatever
process called it. The case met in practice (issue 14): an Intel CPU advertises AMX, the build enables
ggml's AMX kernels, the OS grants no AMX tile state, and the first batched decode of a prompt of ~40
tokens or more is killed by SIGILL (a one-token prompt works). So before the first generation in a
process, :func:`check_library` loads the model in a child process and decodes a 122-token prompt in
one batch plus a few generated tokens. If the child dies by a signal, it raises :class:`LibraryCrash`:
one sentence naming what failed, the CPU feature at fault if it can tell, and the command that rebuilds
the library. A passing check leaves a marker in the model cache keyed by the library build (its shared
libraries' names, sizes and modification times) and by this CPU's feature list, so later processes pay
a few ``stat`` calls, not a child.

Only a death by a signal is this module's business: a child that exits with an error (a file that is
not a GGUF, a missing dependency) leaves no marker and lets the caller's own load report the cause.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import ConfigError, ProviderError
from .local_weights import cache_dir

__all__ = ["AMX_OFF_FLAGS", "LibraryCrash", "check_library", "library_checked", "rebuild_command"]

AMX_OFF_FLAGS = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
"""The C/C++ flags that keep ``-march=native`` tuning but leave AMX out (x86-64 compilers only)."""

TIMEOUT = 600.0
"""Seconds the child may take: it loads the model and decodes 126 tokens."""

# 122 tokens of Qwen's tokenizer: past the ~40 at which the AMX crash began, and one batch.
_PROMPT = (
    "The weather service keeps one record per city and per hour. Each record holds the temperature in "
    "degrees Celsius, the relative humidity, the wind speed in metres per second, the wind direction, "
    "the cloud cover in eighths of the sky and a short description such as cloudy, sunny or light rain. "
    "A forecast is a list of such records for the next five days, and a report compares the forecast with "
    "what was measured. Summarise, in one short sentence, what a record of the weather service holds, "
    "and say which of its fields a traveller would look at first before leaving home in the morning."
)
_DECODED = 4

# Synchronous faults: what a library that runs an instruction this machine cannot run dies of.
_FAULTS = {signal.SIGILL: "illegal instruction", signal.SIGSEGV: "segmentation fault", signal.SIGBUS: "bus error"}
# On Windows a crash is an NTSTATUS exit code, not a signal.
_NT_STATUS = {0xC000001D: "illegal instruction", 0xC0000005: "access violation", 0xC0000409: "stack buffer overrun"}

# ggml's feature names (llama_print_system_info) and the /proc/cpuinfo flags they need.
_CPU_FLAGS = {
    "AVX": "avx",
    "AVX2": "avx2",
    "AVX_VNNI": "avx_vnni",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
    "AMX_INT8": "amx_int8",
}
_XFEATURE_XTILEDATA = 1 << 18  # the AMX tile registers' state component in XCR0
_ARCH_GET_XCOMP_SUPP = 0x1021  # arch_prctl: which state components the kernel supports
_SYS_ARCH_PRCTL = 158  # x86-64 Linux

_checked: set[Path] = set()


class LibraryCrash(ConfigError):
    """The installed llama.cpp library crashed this machine's test decode; it must be rebuilt here."""


def check_library(model: Path, *, n_threads: int = 1) -> None:
    """Make sure llama.cpp can decode a batch on this machine before this process relies on it.

    Runs at most one child per library build and machine (see the module docstring). Raises
    :class:`LibraryCrash` when the child dies by a signal and :class:`~toolslip.core.errors.ProviderError`
    when it does not finish within :data:`TIMEOUT`.
    """
    key = _build_key()
    if key is None:
        return
    marker = cache_dir() / f"llama-cpp-checked-{key}.json"
    if marker in _checked or marker.is_file():
        _checked.add(marker)
        return
    print("toolslip: checking that llama.cpp runs on this CPU (once per build)...", file=sys.stderr, flush=True)
    command = [sys.executable, "-m", __name__, str(model), str(n_threads)]
    try:
        child = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ProviderError(
            f"the llama.cpp check (load {model.name}, decode {len(_PROMPT.split())} words) did not finish in "
            f"{TIMEOUT:.0f} s; the machine may be overloaded"
        ) from None
    fault = _fault(child.returncode)
    if fault is not None:
        raise LibraryCrash(_crash_sentence(fault, _built_with(child.stdout)))
    if child.returncode == 0:
        _checked.add(marker)
        _write_marker(marker, child.stdout)


def library_checked() -> bool | None:
    """Whether this llama.cpp build already passed :func:`check_library` on this machine; ``None`` when
    llama-cpp-python is not installed. Cheap: no import, no child process (``toolslip doctor`` asks it)."""
    key = _build_key()
    if key is None:
        return None
    return (cache_dir() / f"llama-cpp-checked-{key}.json").is_file()


def rebuild_command() -> str:
    """The shell command that rebuilds llama-cpp-python in this Python for this machine, AMX off on x86-64."""
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = ""
    env = "CMAKE_ARGS='-DGGML_NATIVE=ON'"
    if platform.machine().lower() in ("x86_64", "amd64"):  # gcc on other machines rejects the AMX flags
        env += f" CFLAGS='{AMX_OFF_FLAGS}' CXXFLAGS='{AMX_OFF_FLAGS}'"
    pin = f"llama-cpp-python=={version}" if version else "llama-cpp-python"
    return f"{env} {shlex.quote(sys.executable)} -m pip install --no-cache-dir --force-reinstall --no-deps '{pin}'"


def _fault(returncode: int) -> str | None:
    """How the child died, if it died by a signal (or a Windows crash status); None if it exited."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"signal {-returncode}"
        what = _FAULTS.get(sig)
        return f"{sig.name} ({what})" if what else sig.name
    status = returncode & 0xFFFFFFFF
    return f"0x{status:08X} ({_NT_STATUS[status]})" if status in _NT_STATUS else None


def _crash_sentence(fault: str, built_with: set[str] | None) -> str:
    library = _library_dir()
    where = f" in {library}" if library else ""
    cause = _cause(built_with)
    return (
        f"the llama.cpp library{where} crashed with {fault} during a test decode in a child process, so this "
        f"process did not load it{cause}; rebuild it for this machine with: {rebuild_command()}"
    )


def _cause(built_with: set[str] | None) -> str:
    """The CPU feature at fault, as a clause, when the library's features and this machine's say it."""
    if built_with is None:  # it died before it could say what it was built with
        return ""
    flags = _cpu_flags()
    if "AMX_INT8" in built_with and (_os_grants_amx() is not True or "amx_int8" not in flags):
        return (
            " (it was built with AMX (AMX_INT8), which the CPU may advertise but this OS does not grant to "
            "processes: no AMX tile state)"
        )
    missing = sorted(f for f in built_with if f in _CPU_FLAGS and _CPU_FLAGS[f] not in flags)
    if flags and missing:
        return f" (it was built for CPU features this machine lacks: {', '.join(missing)})"
    return ""


def _cpu_flags() -> set[str]:
    """This CPU's feature flags as Linux reports them (``flags`` on x86, ``Features`` on Arm); empty elsewhere."""
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return set()
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.MULTILINE)
    return set(match.group(1).split()) if match else set()


def _os_grants_amx() -> bool | None:
    """Whether the kernel supports AMX tile data (``arch_prctl(ARCH_GET_XCOMP_SUPP)``, Linux 5.16+); None: unknown."""
    if sys.platform != "linux" or platform.machine() != "x86_64":
        return None
    mask = ctypes.c_uint64(0)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        # The kernel writes one 64-bit mask into our buffer; a kernel older than 5.16 answers EINVAL.
        if libc.syscall(_SYS_ARCH_PRCTL, _ARCH_GET_XCOMP_SUPP, ctypes.byref(mask)) != 0:
            return False
    except (OSError, AttributeError):
        return None
    return bool(mask.value & _XFEATURE_XTILEDATA)


def _built_with(stdout: str) -> set[str] | None:
    """The features the library was compiled with, from the line the child prints before it decodes."""
    for line in stdout.splitlines():
        if line.startswith("system_info:"):
            return {name for name, value in re.findall(r"(\w+) = (\d+)", line) if value != "0"}
    return None


def _library_dir() -> Path | None:
    """The installed llama_cpp package's folder, found without importing it (importing runs its native code)."""
    spec = importlib.util.find_spec("llama_cpp")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def _build_key() -> str | None:
    """A digest of the library build and this machine: names, sizes and mtimes of the native files, CPU flags."""
    library = _library_dir()
    if library is None:
        return None
    parts = [str(library), platform.machine(), " ".join(sorted(_cpu_flags()))]
    for path in sorted(library.rglob("*")):
        if path.suffix in (".so", ".dylib", ".dll") or ".so." in path.name:
            st = path.stat()
            parts.append(f"{path.relative_to(library)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _write_marker(marker: Path, stdout: str) -> None:
    record = {"library": str(_library_dir()), "python": sys.executable, "system_info": stdout.strip()}
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_name(f".{marker.name}.{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1))
        os.replace(tmp, marker)
    except OSError:  # a read-only cache only costs the check again next time
        pass


def _decode(model: str, n_threads: int) -> None:
    """The child's work: say what the library was compiled with, then decode one batch and a few single tokens."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a crash here is expected news, not a core file
    except (ImportError, ValueError, OSError):
        pass
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode("utf-8", errors="replace")
    print(f"system_info: {' '.join(info.split())}", flush=True)
    llama = llama_cpp.Llama(
        model_path=model, n_ctx=512, n_batch=512, n_threads=n_threads, n_threads_batch=n_threads, verbose=False
    )
    tokens = llama.tokenize(_PROMPT.encode())
    llama.eval(tokens)  # one batch: ggml's batched matrix kernels, where the AMX crash was
    for token in tokens[:_DECODED]:  # one token at a time: the kernels generation uses
        llama.eval([token])
    print(f"decoded: a batch of {len(tokens)} tokens, then {_DECODED} single tokens", flush=True)
    llama.close()


def main(argv: Sequence[str]) -> None:
    _decode(argv[0], int(argv[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
