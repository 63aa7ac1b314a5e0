"""Loading the user's tools file: a Python file whose module-level ``Tool`` objects are its tools."""

from __future__ import annotations

from .._files import import_user_file
from ..errors import ConfigError
from ..tools import Tool, Toolbox

__all__ = ["load_tools_file"]


def load_tools_file(path: str) -> Toolbox:
    """Import ``path`` and collect its ``@tool`` objects, in definition order.

    Every way this can fail ends in one :class:`ConfigError` sentence that names the file and the line.
    """
    module = import_user_file(path, "tools file")
    tools = [v for v in vars(module).values() if isinstance(v, Tool)]
    if not tools:
        raise ConfigError(f"{path} defines no tools; decorate functions with @toolslip.tool")
    return Toolbox(tools)
