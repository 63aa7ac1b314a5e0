"""Importing a user's Python file (tools, suites) with errors that name the file and the line."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from .errors import ConfigError

__all__ = ["import_user_file", "require_file"]


def require_file(path: str, kind: str) -> Path:
    """``path`` as a Path if it is a regular file; else one sentence telling a folder from a missing file."""
    file = Path(path)
    if file.is_dir():
        raise ConfigError(f"{kind} {path!r} is a directory; give a file inside it")
    if not file.is_file():
        raise ConfigError(f"{kind} {path!r} does not exist")
    return file


def import_user_file(path: str, kind: str) -> ModuleType:
    """Import ``path`` as a fresh module; every failure is one :class:`ConfigError` naming the file.

    ``kind`` says what the file is for ("tools file", "suite file") so the sentence tells the user which
    argument is wrong. An exception raised while the file runs is reported with its line number.

    The file's folder goes on ``sys.path`` first, as ``python FILE`` does, so the file can import a module
    beside it (``from helpers import ...``) in every command that loads it; a tool that runs in a child
    process finds it there too (the child is given the parent's path).
    """
    file = require_file(path, kind)
    if file.suffix != ".py":
        raise ConfigError(f"{kind} {path!r} is not a Python file (.py)")
    folder = str(file.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = f"_toolslip_{kind.split()[0]}_{file.stem}_{abs(hash(file.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    except Exception as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == file.resolve()]
        where = f" (line {frames[-1].lineno})" if frames else ""
        raise ConfigError(f"{path}{where}: {type(exc).__name__}: {exc}") from None
    return module
