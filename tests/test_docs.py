"""Every Python example in README.md and docs/*.md runs as written.

Each ```python block runs in a fresh interpreter from the repository root, with no API keys in the
environment and a temporary TOOLSLIP_HOME, so an example that uses a name it never defined, or an API that
does not exist, fails here with its page and line. A block that cannot run offline (it needs an API key or
the embedded model's weights) says so on the line before it, ``<!-- no-test: why -->``; such blocks are
only compiled, and there must stay few of them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NO_TEST = re.compile(r"^<!--\s*no-test:\s*(?P<why>\S.*?)\s*-->$")
MAX_UNTESTED = 3
TIMEOUT = 60


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    """Line of the opening fence, 1-based."""
    source: str
    untested: str | None
    """Why the block is not run (from its ``no-test`` comment), or None."""

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def python_blocks(path: Path) -> list[Block]:
    """The ```python blocks of one Markdown page, indented ones (in a list) included; other fences are skipped."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = re.match(r"^\s*(`{3,})\s*(\S*)", lines[i])
        if not fence:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == fence.group(1)), None)
        assert end is not None, f"{path.name}:{i + 1}: the code block opened here is never closed"
        if fence.group(2) == "python":
            marker = NO_TEST.match(lines[i - 1].strip()) if i else None
            source = textwrap.dedent("\n".join(lines[i + 1 : end]) + "\n")
            page = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
            blocks.append(Block(page, i + 1, source, marker["why"] if marker else None))
        i = end + 1
    return blocks


BLOCKS = [block for page in PAGES for block in python_blocks(page)]
RUN = [block for block in BLOCKS if block.untested is None]
UNTESTED = [block for block in BLOCKS if block.untested is not None]


def clean_env(home: Path) -> dict[str, str]:
    """The environment of a user with no API keys and an empty toolslip home."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL")) and k != "TOOLSLIP_MODEL"}
    # Console scripts of this interpreter's environment (an MCP server the docs start) are on PATH, as in
    # an activated virtualenv.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(TOOLSLIP_HOME=str(home), PYTHONIOENCODING="utf-8")
    return env


@pytest.mark.parametrize("block", RUN, ids=[b.id for b in RUN])
def test_example_runs(block: Block, tmp_path: Path) -> None:
    try:
        done = subprocess.run(
            [sys.executable, "-c", block.source],
            cwd=ROOT,
            env=clean_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.id}: the example did not finish within {TIMEOUT} s")
    assert done.returncode == 0, f"{block.id} failed (exit {done.returncode}):\n{done.stderr[-3000:]}"


def test_untested_examples_are_few_and_compile() -> None:
    assert len(UNTESTED) <= MAX_UNTESTED, "examples not run: " + ", ".join(f"{b.id} ({b.untested})" for b in UNTESTED)
    for block in UNTESTED:
        compile(block.source, block.id, "exec")


def test_extraction(tmp_path: Path) -> None:
    """```python fences (whatever follows the word) are taken with their line and marker; nested ones are not."""
    page = tmp_path / "page.md"
    page.write_text(
        "Intro\n```bash\nmake run\n```\n<!-- no-test: needs a key -->\n```python\nimport os\nos.getcwd()\n```\n"
        "````markdown\n```python\nnot = run\n```\n````\n- a list:\n\n  ```python title\n  print(1)\n  ```\n",
        encoding="utf-8",
    )
    found = [(b.line, b.source, b.untested) for b in python_blocks(page)]
    assert found == [(6, "import os\nos.getcwd()\n", "needs a key"), (17, "print(1)\n", None)]
    page.write_text("```python\nprint(1)\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="never closed"):
        python_blocks(page)
