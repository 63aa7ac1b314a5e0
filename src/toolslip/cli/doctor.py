"""``toolslip doctor``: what would happen if you ran toolslip here, on one screen.

Which model would be picked and why, which API keys are set (never a character of one: only that it is
set and its length), base URLs, the local model's weights and llama.cpp check, the journal (path, size,
runs by status), the installed extras and the versions that matter. It only looks: it makes no model,
starts no child process and creates no file.

It exits 1 when something ``make run`` needs is broken (the chosen model cannot be made, the journal cannot
be opened or created), printing the command that fixes each problem; otherwise 0.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import os
import platform
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ..core._display import plural
from ..core.errors import ConfigError, ToolslipError
from ..core.version import __version__
from ..durable.journal_store import default_journal_path
from ..durable.stores import default_location, is_postgres_url, open_store
from . import EXIT_ERROR, EXIT_OK
from .runs import human_size

__all__ = ["register"]

KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "AWS_ACCESS_KEY_ID")
VERSIONS = (
    "pydantic",
    "jsonschema",
    "orjson",
    "aiohttp",
    "llama-cpp-python",
    "genai-prices",
    "openai",
    "anthropic",
    "mcp",
)


@dataclass
class _Report:
    lines: list[str] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    """(what is broken, the command that fixes it)."""

    def add(self, label: str, text: str) -> None:
        self.lines.append(f"{label + ':':<13}{text}")

    def broken(self, label: str, what: str, fix: str) -> None:
        self.add(label, f"BROKEN: {what}")
        self.problems.append((what, fix))


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("doctor", help="check this setup: model choice, keys, local model, journal, extras")
    p.add_argument("--journal", metavar="PATH", help=f"the run journal (default {default_journal_path()})")
    p.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    report = _Report()
    report.add("toolslip", f"{__version__} on Python {platform.python_version()} ({sys.executable})")
    _model(report)
    report.add("keys", ", ".join(_key(name) for name in KEYS))
    _urls(report)
    _local(report)
    _journal(report, args.journal or default_location())
    report.add("extras", _extras())
    report.add("versions", ", ".join(f"{name} {_version(name) or '-'}" for name in VERSIONS))
    for line in report.lines:
        print(line)
    if not report.problems:
        print("ok: nothing that `make run` needs is broken")
        return EXIT_OK
    for what, fix in report.problems:
        print(f"fix: {what}: {fix}")
    return EXIT_ERROR


def _model(report: _Report) -> None:
    from ..providers import check_model_string, model_choice

    spec, reason = model_choice(None)
    try:
        check_model_string(spec)
    except ConfigError as exc:
        report.broken("model", f"TOOLSLIP_MODEL={spec!r}: {exc}", "unset TOOLSLIP_MODEL or set it to a model string")
        return
    report.add("model", f"{spec} ({reason})")


def _key(name: str) -> str:
    """Whether a key is set, and its length; never any of its characters."""
    value = os.environ.get(name)
    return f"{name} set ({len(value)} characters)" if value else f"{name} not set"


def _urls(report: _Report) -> None:
    """Each base URL variable, read as the transports read it: one they would refuse is broken here too."""
    from ..providers import BASE_URL_VARIABLES, env_base_url

    shown = []
    for name in BASE_URL_VARIABLES:
        value = os.environ.get(name)
        try:
            env_base_url(name)
        except ConfigError as exc:
            said = str(exc).replace(value or "", _masked(value or ""))  # a user:password part stays hidden
            report.broken("base URL", said, f"export {name}=http://HOST:PORT/PATH, or unset {name}")
            continue
        shown.append(f"{name}={_masked(value)}" if value else f"{name} not set")
    report.add("base URLs", ", ".join(shown))


def _masked(url: str) -> str:
    """``url`` with any user:password part hidden."""
    parts = urlsplit(url)
    if not (parts.username or parts.password):
        return url
    return url.replace(parts.netloc, f"***@{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}")


def _local(report: _Report) -> None:
    from ..providers.local_probe import library_checked
    from ..providers.local_weights import CATALOGUE, DEFAULT_MODEL, cache_dir

    weights = CATALOGUE[DEFAULT_MODEL]
    target = cache_dir() / f"{weights.name}.gguf"
    missing = [p.distribution for p in weights.parts if importlib.util.find_spec(p.module) is None]
    mb = f"{weights.size / 1e6:.0f} MB"
    if target.is_file():
        verified = target.with_name(target.name + ".verified").is_file()
        state = f"assembled at {target} ({mb}{', verified' if verified else ', verified on first use'})"
    elif not missing:
        state = f"not assembled yet: the installed parts are joined into {target} on first use ({mb}, under a minute)"
    else:
        state = f"not installed ({len(missing)} of {len(weights.parts)} parts missing, e.g. {missing[0]})"
    checked = library_checked()
    llama = _version("llama-cpp-python")
    if checked is None:
        report.add("local model", f"llama-cpp-python not installed; weights {DEFAULT_MODEL}: {state}")
    else:
        check = "passed" if checked else "not run yet (runs once, on first use, about 10 s)"
        report.add(
            "local model", f"llama-cpp-python {llama}, llama.cpp check {check}; weights {DEFAULT_MODEL}: {state}"
        )
    from ..providers import model_choice

    chosen = model_choice(None)[0].partition(":")[0]
    if chosen == "scripted" and not os.environ.get("TOOLSLIP_MODEL"):  # nothing real to run `make run` with
        report.problems.append(("no model can run here: no API key and no local model", "make venv"))
    if chosen != "local":
        return
    if checked is None:
        report.problems.append(("the local model is chosen but llama-cpp-python is missing", "make venv"))
    elif missing and not target.is_file():
        report.problems.append(("the local model's weights are not installed", "make venv"))


def _journal(report: _Report, location: str | Path) -> None:
    path, postgres = Path(location), is_postgres_url(location)
    shown = _masked(str(location)) if postgres else str(path)
    if postgres or path.exists():
        try:
            store = open_store(location, existing=True, read_only=True)
            runs = store.runs(limit=1_000_000)
            size = store.file_size()
            store.close()
        except (ToolslipError, OSError) as exc:  # ConfigError, JournalError (damaged, full, read-only)
            fix = "check the server and the URL in TOOLSLIP_JOURNAL" if postgres else f"mv {path} {path}.broken"
            report.broken("journal", _masked(str(exc)) if postgres else str(exc), fix)
            return
        counts = Counter(r.status for r in runs)
        by_status = f" ({', '.join(f'{n} {status}' for status, n in counts.most_common())})" if runs else ""
        report.add("journal", f"{shown}: {human_size(size)}, {plural(len(runs), 'run')}{by_status}")
        return
    folder = next((p for p in path.parents if p.exists()), None)
    if folder is None or not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        what = f"cannot create the journal {path}: {folder} is not a writable folder"
        report.broken("journal", what, "export TOOLSLIP_HOME=~/.toolslip (a folder you can write) or fix that path")
        return
    report.add("journal", f"{path}: none yet (created by the first run)")


def _extras() -> str:
    """Each extra of toolslip: installed when all its packages are."""
    needs: dict[str, list[str]] = {}
    for requirement in importlib.metadata.requires("toolslip") or ():
        marker = re.search(r"""extra\s*==\s*["']([^"']+)""", requirement)
        name = re.match(r"[A-Za-z0-9_.\-]+", requirement)
        if marker and name and name.group(0) != "toolslip":
            needs.setdefault(marker.group(1), []).append(name.group(0))
    shown = []
    for extra, names in sorted(needs.items()):
        missing = [n for n in names if _version(n) is None]
        shown.append(f"{extra} yes" if not missing else f"{extra} no (pip install 'toolslip[{extra}]')")
    return ", ".join(shown)


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
