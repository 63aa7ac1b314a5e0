"""The child side of ``@tool(isolate="process")``: import the tool's module, run calls, answer.

Started by :mod:`toolslip.agent.execution` as a fresh interpreter in its own session. Requests and replies are
length-prefixed pickles on the pipes that were stdin and stdout; those two descriptors are then pointed
at ``/dev/null`` and stderr, so a tool that prints (or calls ``input()``) cannot break the protocol.
The child ends when its input closes or when its parent is gone.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import os
import pickle
import struct
import sys
import threading
import time
from types import ModuleType
from typing import IO, Any

_FRAME = struct.Struct(">Q")
_MAIN_ALIAS = "__toolslip_main__"


def main() -> None:
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    _watch_parent(os.getppid())
    while (request := _read(requests)) is not None:
        path, where, kwargs = request
        sys.path[:] = path
        try:  # the arguments are unpickled once the tool's module is loaded: they may be its own classes
            reply: tuple[bool, Any] = (True, _run(where, kwargs))
        except BaseException as exc:  # every failure is the tool's, reported to the parent
            reply = (False, (type(exc).__name__, str(exc), _pickled(exc)))
        body = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        replies.write(_FRAME.pack(len(body)) + body)
        replies.flush()


def _read(stream: IO[bytes]) -> Any:
    header = stream.read(_FRAME.size)
    if len(header) < _FRAME.size:
        return None
    return pickle.loads(stream.read(_FRAME.unpack(header)[0]))


def _run(where: tuple[str, str | None, str], kwargs: bytes) -> Any:
    from .tools import Tool, serialize_output

    module_name, file, qualname = where
    target: Any = _module(module_name, file)
    for part in qualname.split("."):
        target = getattr(target, part)
    if isinstance(target, Tool):  # @tool replaced the function by its Tool
        target = target.fn
    args, keywords = pickle.loads(kwargs)
    value = target(*args, **keywords)
    if inspect.isawaitable(value):
        value = asyncio.run(_awaited(value))
    return serialize_output(value)


async def _awaited(value: Any) -> Any:
    return await value


def _module(name: str, file: str | None) -> ModuleType:
    """The tool's module, imported the way the parent has it: by name, else from its file under that name."""
    if name == "__main__":  # run the script's top level without its `if __name__ == "__main__":` part
        if _MAIN_ALIAS not in sys.modules:
            sys.modules["__main__"] = sys.modules[_MAIN_ALIAS] = _load(_MAIN_ALIAS, file)
        return sys.modules[_MAIN_ALIAS]
    if name in sys.modules:
        return sys.modules[name]
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        if file is None:
            raise
    return _load(name, file)


def _load(name: str, file: str | None) -> ModuleType:
    if file is None:
        raise ModuleNotFoundError(f"cannot find the tool's module {name!r}: it has no file")
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"cannot load the tool's module from {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _pickled(exc: BaseException) -> bytes | None:
    try:
        data = pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(data)  # some exceptions pickle but cannot be rebuilt; the parent gets a stand-in then
    except Exception:
        return None
    return data


def _watch_parent(parent: int) -> None:
    """End when the parent is gone (killed without a chance to stop us): nobody would read the answer."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="toolslip-parent-watch", daemon=True).start()
