"""Loading the user's files: a tools file (module-level ``Tool`` objects), or JSON from a file or stdin."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from .._files import import_user_file
from ..errors import ConfigError
from ..tools import Tool, Toolbox
from .interrupts import ctrl_c_held

__all__ = ["load_json", "load_tools_file"]


def load_tools_file(path: str) -> Toolbox:
    """Import ``path`` and collect its ``@tool`` objects, in definition order.

    Every way this can fail ends in one :class:`ConfigError` sentence that names the file and the line.
    """
    with ctrl_c_held():  # the first @tool imports pydantic-core
        module = import_user_file(path, "tools file")
    tools = [v for v in vars(module).values() if isinstance(v, Tool)]
    if not tools:
        raise ConfigError(f"{path} defines no tools; decorate functions with @toolslip.tool")
    return Toolbox(tools)


def load_json(path: str) -> Any:
    """The JSON document in file ``path`` (``-`` reads stdin); a bad file is one ConfigError sentence."""
    name = "stdin" if path == "-" else path
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {name}: {exc.strerror or exc}") from None
    if not text.strip():
        raise ConfigError(f"{name} is empty; give a JSON document")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{name} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
