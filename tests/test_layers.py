"""The package's layers: no import circle, no upward import, and every old module path still working.

The contracts live in ``pyproject.toml`` (``[tool.importlinter]``) and ``make check`` runs them. These
tests check the same promise independently (their own reading of the imports, including those inside
functions and under ``TYPE_CHECKING``), that the contracts really fail on an upward import, and that the
move into folders changed no import path a program may use.
"""

from __future__ import annotations

import ast
import importlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolslip
from toolslip._moved import MOVED, SPLIT

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BEFORE = json.loads((ROOT / "tests/data/module_paths_before_layers.json").read_text())["modules"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


FILES = {_module_name(p): p for p in (SRC / "toolslip").rglob("*.py")}


def _targets(name: str) -> set[str]:
    """Every dotted name an import statement of module ``name`` asks for (``from X import y``: X and X.y)."""
    path = FILES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            # ``from PKG import mod`` imports the submodule; ``from MOD import name``, the module itself
            found |= {f"{module}.{a.name}" if f"{module}.{a.name}" in FILES else module for a in node.names}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {t for t in found if t == "toolslip" or t.startswith("toolslip.")}


def _imports() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, by every import statement in its file."""
    graph: dict[str, set[str]] = {}
    for name in FILES:
        found = set()
        for target in _targets(name):
            while target and target not in FILES:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
        graph[name] = found
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), and modules importing themselves."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circle_by_an_independent_reading_of_the_imports() -> None:
    graph = _imports()
    assert len(graph) > 100  # the whole package was read
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


LONG = 450
"""Issue 29: a module longer than this says why in its docstring, in the words "(about N lines) because"."""


def _stated_length(source: str) -> int | None:
    """N of "(about N lines) because" in the module docstring of ``source``, the lines wrapped or not."""
    doc = " ".join((ast.get_docstring(ast.parse(source)) or "").split())
    found = re.search(r"\(about (\d+) lines\) because", doc)
    return int(found.group(1)) if found else None


def test_every_long_module_says_why_in_its_docstring() -> None:
    sources = {name: path.read_text(encoding="utf-8") for name, path in FILES.items()}
    long = {name: len(text.splitlines()) for name, text in sources.items() if len(text.splitlines()) > LONG}
    stated = {name: _stated_length(sources[name]) for name in long}
    assert sorted(name for name in long if stated[name] is None) == []
    # the stated length stays true: a module grown a tenth past it says again why it is not split
    assert {name: (n, stated[name]) for name, n in long.items() if n > (stated[name] or n) * 1.1} == {}


def test_a_reason_is_found_only_in_the_agreed_words() -> None:
    assert _stated_length('"""Reads best whole.\n\nOne module (about\n480 lines) because..."""') == 480
    assert _stated_length('"""Long because it grew (480 lines)."""') is None
    assert _stated_length('x = "(about 480 lines) because"') is None  # a string, not the docstring


def test_the_core_imports_nothing_above_it() -> None:
    graph = _imports()
    core = {m for m in graph if m.startswith("toolslip.core")}
    assert core
    assert {m: graph[m] - core for m in core if graph[m] - core} == {}


def _lint_imports(src: Path) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(tool), str(ROOT / "pyproject.toml")],
        cwd=src.parent,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_the_contracts_hold_and_fail_on_an_upward_import(tmp_path: Path) -> None:
    kept = _lint_imports(SRC)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    copy = tmp_path / "src"
    shutil.copytree(SRC / "toolslip", copy / "toolslip", ignore=shutil.ignore_patterns("__pycache__"))
    formats = copy / "toolslip/formats/sse.py"
    formats.write_text(formats.read_text() + "\nfrom ..agent.loop import Agent  # upward: a format needs no loop\n")
    broken = _lint_imports(copy)
    assert broken.returncode != 0
    assert "toolslip.formats is not allowed to import toolslip.agent" in broken.stdout


@pytest.mark.parametrize("old", sorted(BEFORE))
def test_every_module_path_from_before_the_layers_still_imports_with_its_names(old: str) -> None:
    module = importlib.import_module(old)
    missing = [name for name in BEFORE[old] or () if not hasattr(module, name)]
    assert missing == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_same_module_as_its_new_home(old: str) -> None:
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert module.__spec__ is not None and module.__spec__.name == MOVED[old]  # its own spec, not the alias's
    assert sys.modules[old] is module


def test_a_submodule_of_a_moved_package_is_not_loaded_twice() -> None:
    old = importlib.import_module("toolslip.scenarios.harness")
    assert old is importlib.import_module("toolslip.testing.scenarios.harness")
    from toolslip.scenarios.harness import Suite
    from toolslip.testing.scenarios.harness import Suite as Same

    assert Suite is Same


def test_monkeypatching_an_old_path_reaches_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolslip.tokens as old
    from toolslip.quality import tokens

    monkeypatch.setattr(old, "_COUNTER", "patched")
    assert tokens._COUNTER == "patched"


@pytest.mark.parametrize("old", sorted(SPLIT))
def test_a_split_module_keeps_every_name_of_both_halves(old: str) -> None:
    module = importlib.import_module(old)
    for part in SPLIT[old]:
        home = importlib.import_module(part)
        assert all(getattr(module, name) is getattr(home, name) for name in home.__all__)
    assert sorted(module.__all__) == sorted(BEFORE[old])


ADDED_SINCE_THE_LAYERS = {"Limits", "Context", "FallbackModel"}
"""Public names that later issues added (issue 28's budgets, issue 38's run context under its short name and
its fallback chain); each addition is a decision, listed here."""


def test_the_public_names_are_kept_and_every_addition_is_listed() -> None:
    assert sorted(toolslip.__all__) == sorted({*BEFORE["toolslip"], *ADDED_SINCE_THE_LAYERS})
    assert all(getattr(toolslip, name) is not None for name in toolslip.__all__)


def test_nothing_inside_the_package_imports_an_old_path() -> None:
    old = set(MOVED) | set(SPLIT)
    wrong = {m: sorted(t for t in _targets(m) if t in old) for m in FILES if _targets(m) & old}
    assert wrong == {}


def test_a_pickled_record_unpickles_under_the_new_path() -> None:
    import pickle

    from toolslip.messages import Message

    data = pickle.dumps(Message.user("hi"))
    assert b"toolslip.core.messages" in data
    assert pickle.loads(data) == Message.user("hi")
