"""Loading the user's tools file: a Python file whose module-level ``Tool`` objects are its tools."""

from __future__ import annotations

import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

from ..errors import ConfigError
from ..tools import Tool, Toolbox

__all__ = ["load_python_file", "load_tools_file"]


def load_tools_file(path: str) -> Toolbox:
    """Import ``path`` and collect its ``@tool`` objects, in definition order.

    Every way this can fail ends in one :class:`ConfigError` sentence that names the file and the line.
    """
    tools = [v for v in vars(load_python_file(path)).values() if isinstance(v, Tool)]
    if not tools:
        raise ConfigError(f"{path} defines no tools; decorate functions with @toolslip.tool")
    return Toolbox(tools)


def load_python_file(path: str) -> ModuleType:
    """Import a user's Python file as a module; failures are one :class:`ConfigError` naming file and line."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"tools file {path!r} does not exist")
    if file.suffix != ".py":
        raise ConfigError(f"tools file {path!r} is not a Python file (.py)")
    name = f"_toolslip_tools_{abs(hash(file.resolve()))}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ConfigError(f"cannot load {path!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == file.resolve()]
        where = f" (line {frames[-1].lineno})" if frames else ""
        raise ConfigError(f"{path}{where}: {type(exc).__name__}: {exc}") from None
    return module
