"""Frozen slotted dataclasses built cheaply: an ``__init__`` that writes each field through its slot.

The transcript's records (:mod:`toolslip.core.messages`) are made several times per step of the loop;
this is how, kept apart from what the records mean.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

__all__ = ["set_through_slots"]


def set_through_slots(cls: type) -> None:
    """Give frozen slotted dataclass ``cls`` an ``__init__`` that writes each field through its slot.

    The generated ``__init__`` of a frozen dataclass calls ``object.__setattr__`` once per field, which
    looks the name up on the type every time; an agent builds several of these objects per step, so that
    lookup was a measurable part of a step (issue 20). Calling each slot's own ``__set__`` skips it; the
    signature, defaults, default factories, ``__post_init__`` and frozenness are those of the dataclass.
    """
    env: dict[str, Any] = {"_NOTHING": _NOTHING}
    positional: list[str] = []
    keyword: list[str] = []
    lines: list[str] = []
    for f in fields(cls):
        if not f.init or f.name not in cls.__dict__:  # pragma: no cover - no such field in this module
            raise TypeError(f"{cls.__name__}.{f.name}: only init fields of a slotted dataclass")
        env[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        value = f.name
        if f.default is not MISSING:
            env[f"_default_{f.name}"] = f.default
            param = f"{f.name}=_default_{f.name}"
        elif f.default_factory is not MISSING:
            env[f"_factory_{f.name}"] = f.default_factory
            param = f"{f.name}=_NOTHING"
            value = f"_factory_{f.name}() if {f.name} is _NOTHING else {f.name}"
        else:
            param = f.name
        (keyword if f.kw_only else positional).append(param)
        lines.append(f"    _set_{f.name}(self, {value})")
    if hasattr(cls, "__post_init__"):
        lines.append("    self.__post_init__()")
    params = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    exec(f"def __init__({params}):\n" + "\n".join(lines), env)  # as dataclasses itself does
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    cls.__init__ = init  # type: ignore[misc]


class _Factory:
    """The default of a field with a default factory, shown in signatures as dataclasses show it."""

    def __repr__(self) -> str:
        return "<factory>"


_NOTHING = _Factory()
