"""``toolslip convert`` / ``check`` / ``lint`` on hostile or unusual input: one sentence and a non-zero exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolslip.cli import main

CHAT = {"messages": [{"role": "user", "content": "Hi"}]}  # a history without a model: the common case


def run(*argv: str, stdin: str | bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "toolslip.cli", *argv], input=data, capture_output=True, check=False)


def one_sentence(done: subprocess.CompletedProcess[bytes]) -> str:
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def in_process(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The one stderr sentence of a command that must fail (run in this process: no interpreter start)."""
    assert main(list(argv)) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    return err


def test_a_history_without_a_model_converts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "history.json"
    path.write_text(json.dumps(CHAT))
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", str(path)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"max_tokens": 1024, "messages": CHAT["messages"]}
    assert "max_tokens" in err  # the default Anthropic requires is reported


def test_a_file_that_is_not_utf8_is_one_sentence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"model": "café", "messages": []}'.encode("latin-1"))
    for command in (["convert", "--from", "openai-chat", "--to", "anthropic"], ["check"]):
        err = in_process(capsys, *command, str(path))
        assert "is not UTF-8 text (byte 0xe9 at offset 14)" in err
    assert "is not UTF-8" in one_sentence(run("check", "-", stdin=b'{"messages": ["\xff"]}'))


@pytest.mark.parametrize("depth", [300, 5000])
def test_json_nested_too_deeply_is_one_sentence(tmp_path: Path, depth: int, capsys: pytest.CaptureFixture[str]) -> None:
    deep = "[" * depth + "]" * depth
    body = '{"messages": [{"role": "user", "content": "x"}], "metadata": ' + deep + "}"
    path = tmp_path / "deep.json"
    path.write_text(body)
    assert "nests JSON more than 200 levels deep" in in_process(capsys, "check", str(path))
    converted = in_process(capsys, "convert", "--from", "openai-chat", "--to", "anthropic", str(path))
    assert "nests JSON more than 200 levels deep" in converted


def test_lint_of_declarations_nested_too_deeply_is_one_sentence(tmp_path: Path) -> None:
    schema = '{"type": "object", "properties": {"a": ' * 5000 + "{}" + "}}" * 5000
    tools = tmp_path / "tools.json"
    tools.write_text(
        '[{"type": "function", "function": {"name": "f", "description": "F.", "parameters": ' + schema + "}}]"
    )
    assert one_sentence(run("lint", str(tools))).startswith("toolslip lint: ")


def test_a_reader_that_stops_early_ends_the_command_quietly() -> None:
    history = {"messages": [{"role": "user", "content": "word " * 2000}] * 200}
    done = subprocess.run(
        f"{sys.executable} -m toolslip.cli convert --from openai-chat --to openai-responses - | head -c 10",
        shell=True,
        input=json.dumps(history).encode(),
        capture_output=True,
        check=False,
    )
    assert done.stdout.decode() == '{\n  "input'
    assert done.stderr.decode() == ""  # not "cannot use a file: Broken pipe"


@pytest.mark.parametrize(
    ("target", "seed_at"),
    [("gemini", ("generationConfig", "seed")), ("ollama", ("options", "seed")), ("openai-functions", ("seed",))],
)
def test_the_command_speaks_every_format_the_library_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str, seed_at: tuple[str, ...]
) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({**CHAT, "seed": 7}))
    assert main(["convert", "--from", "openai-chat", "--to", target, "--on-loss", "drop", str(path)]) == 0
    body: Any = json.loads(capsys.readouterr().out)
    for key in seed_at:
        body = body[key]
    assert body == 7
    back = tmp_path / "back.json"
    back.write_text(json.dumps({"contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}))
    assert main(["convert", "--from", "gemini", "--to", "openai-chat", str(back)]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == CHAT["messages"]
    assert main(["check", "--format", "gemini", str(back)]) == 0
    assert json.loads(capsys.readouterr().out) == {"format": "gemini", "problems": []}
