"""Old module paths keep working: ``toolslip.journal`` *is* ``toolslip.durable.journal``.

Every module used to sit side by side in ``toolslip/``; now each lives in the folder of its layer
(``docs/architecture.md``). Programs, pickles and tests written against the old paths must not notice, so
an old path is answered with the very module object of its new home, not with a copy that re-exports its
names: identity, ``isinstance``, pickling, private names and ``monkeypatch.setattr(module, ...)`` behave as
before. One finder, first on ``sys.meta_path``, does it for every old path in :data:`MOVED` and for the
submodules of a moved package (``toolslip.scenarios.harness``), which must not be found again under the old
name by the path finder: that would load a second copy of the module.

Type checkers read files, not finders, so they see only the new paths; typed code imports the names from
``toolslip`` (or from the new modules). Nothing inside the package imports an old path (``mypy`` would fail).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "SPLIT", "install", "moved_to"]

MOVED: dict[str, str] = {
    "toolslip._check_scan": "toolslip.formats._check_scan",
    "toolslip._display": "toolslip.core._display",
    "toolslip._files": "toolslip.core._files",
    "toolslip._isolated": "toolslip.agent._isolated",
    "toolslip._lint_rules": "toolslip.quality.lint_rules",
    "toolslip._prose": "toolslip.testing.prose",
    "toolslip._serve_checks": "toolslip.server.checks",
    "toolslip._serve_echo": "toolslip.server.echo",
    "toolslip._sync": "toolslip.agent._sync",
    "toolslip._text": "toolslip.quality.text",
    "toolslip.approval": "toolslip.durable.approval",
    "toolslip.conversion": "toolslip.formats.conversion",
    "toolslip.dedup": "toolslip.durable.dedup",
    "toolslip.docstrings": "toolslip.agent.docstrings",
    "toolslip.effects": "toolslip.core.effects",
    "toolslip.embedding": "toolslip.quality.embedding",
    "toolslip.errors": "toolslip.core.errors",
    "toolslip.events": "toolslip.core.events",
    "toolslip.execution": "toolslip.agent.execution",
    "toolslip.hooks": "toolslip.agent.hooks",
    "toolslip.journal": "toolslip.durable.journal",
    "toolslip.journal_store": "toolslip.durable.journal_store",
    "toolslip.lease": "toolslip.durable.lease",
    "toolslip.lint": "toolslip.quality.lint",
    "toolslip.loop": "toolslip.agent.loop",
    "toolslip.messages": "toolslip.core.messages",
    "toolslip.model": "toolslip.core.model",
    "toolslip.policy": "toolslip.guard.policy",
    "toolslip.process": "toolslip.agent.process",
    "toolslip.provenance": "toolslip.guard.provenance",
    "toolslip.repeats": "toolslip.durable.repeats",
    "toolslip.replay": "toolslip.durable.replay",
    "toolslip.scenarios": "toolslip.testing.scenarios",
    "toolslip.schema": "toolslip.formats.schema",
    "toolslip.search": "toolslip.quality.search",
    "toolslip.secrets": "toolslip.guard.secrets",
    "toolslip.serial": "toolslip.durable.serial",
    "toolslip.spotlight": "toolslip.guard.spotlight",
    "toolslip.streaming": "toolslip.core.streaming",
    "toolslip.tokens": "toolslip.quality.tokens",
    "toolslip.tools": "toolslip.agent.tools",
    "toolslip.tracing": "toolslip.agent.tracing",
}
"""Old module path -> where the module lives now."""

SPLIT: dict[str, tuple[str, ...]] = {
    "toolslip.checker": ("toolslip.formats.checker", "toolslip.agent.debug"),
    "toolslip.server_tools": ("toolslip.formats.server_tools", "toolslip.formats.server_calls"),
}
"""Old modules whose contents now live in two layers (the check and its hook; server-tool declarations,
which the formats need, and their description, which needs a format). The old path is a module of its own
holding everything of the first and the public names of the others: the same objects, but setting an
attribute on it does not reach them."""


def moved_to(name: str) -> str | None:
    """The new path of ``name`` (a moved module or a submodule of a moved package), else ``None``."""
    if name in MOVED:
        return MOVED[name]
    package, _, rest = name.rpartition(".")
    while package:
        if package in MOVED:
            return f"{MOVED[package]}.{name[len(package) + 1 :]}"
        package, _, _ = package.rpartition(".")
    return None


class _SameModule(importlib.abc.Loader):
    """Loads an old path as the already imported module of its new home."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.own: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.new)
        self.own = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system has just set ``__spec__`` to the old path's spec on the module create_module
        # returned; it gets its own back, so its relative imports and ``__spec__.name`` name its real place.
        module.__spec__ = self.own


class _Union(importlib.abc.Loader):
    """Loads an old path whose module was split: one module with the names of all its parts."""

    def __init__(self, parts: tuple[str, ...]) -> None:
        self.parts = parts

    def exec_module(self, module: ModuleType) -> None:
        first, *rest = (importlib.import_module(part) for part in self.parts)
        names = {k: v for k, v in vars(first).items() if not k.startswith("__")}
        for part in rest:
            names.update({name: getattr(part, name) for name in part.__all__})
        public = [*first.__all__, *(name for part in rest for name in part.__all__)]
        vars(module).update(names, __doc__=first.__doc__, __all__=sorted(public))


class _OldPaths(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in SPLIT:
            return importlib.machinery.ModuleSpec(fullname, _Union(SPLIT[fullname]))
        new = moved_to(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _SameModule(new))


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())
