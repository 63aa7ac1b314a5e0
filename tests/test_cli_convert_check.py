"""``toolslip convert`` and ``toolslip check``: JSON in, JSON out, one clear sentence per error on stderr."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolslip.cli import main

FIXTURES = Path(__file__).parent / "fixtures"


def write(tmp_path: Path, data: object) -> str:
    path = tmp_path / "in.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_convert_a_request_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.loads((FIXTURES / "openai_chat" / "weather.json").read_text())["followup"]
    assert main(["convert", "--from", "openai-chat", "--to", "anthropic", write(tmp_path, body)]) == 0
    out, err = capsys.readouterr()
    converted = json.loads(out)
    assert converted["tools"][0]["input_schema"] == body["tools"][0]["function"]["parameters"]
    assert converted["messages"][2]["content"][0]["type"] == "tool_result"
    assert err == "toolslip convert: lost settings.max_tokens: no max_tokens, which Anthropic requires (set to 1024)\n"


def test_convert_reports_losses_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.loads((FIXTURES / "anthropic" / "thinking_images.json").read_text())["response"]
    path = write(tmp_path, body)
    assert main(["convert", "--from", "anthropic", "--to", "openai-responses", path]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "toolslip convert: message.parts[0].signature: the reasoning's signature (only its text is carried) cannot "
        "be expressed in openai-responses; convert with on_loss='drop' (--on-loss drop) to leave it out, or 'mark' "
        "to leave a visible trace\n"
    )
    assert main(["convert", "--from", "anthropic", "--to", "openai-responses", "--on-loss", "drop", path]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["object"] == "response"
    assert json.loads(out)["output"][0]["type"] == "reasoning"  # the thinking text travels; its signature cannot
    assert err.splitlines()[0] == (
        "toolslip convert: lost message.parts[0].signature: the reasoning's signature (only its text is carried) "
        "(dropped)"
    )


def test_check_lists_problems_and_fixes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {
        "model": "m",
        "tools": [{"type": "function", "function": {"name": "fx", "parameters": {}}}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "fx", "arguments": "{}"}}],
            },
        ],
    }
    path = write(tmp_path, body)
    assert main(["check", path]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["problems"][0]["code"] == "missing_result"
    assert err == (
        "toolslip check: messages[1].tool_calls[0]: call 'c1' has no result. "
        'Fix: add an is_error result saying "not executed"\n'
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(body)))
    assert main(["check", "--fix", "--format", "openai-chat", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["messages"][2]["role"] == "tool"
    assert err.startswith("toolslip check: fixed messages[1].tool_calls[0]: add an is_error result")


@pytest.mark.parametrize(
    ("argv", "stdin", "message"),
    [
        (["check", "missing.json"], "", "toolslip check: cannot read missing.json: No such file or directory\n"),
        (
            ["check", "-"],
            "{",
            "toolslip check: stdin is not JSON: Expecting property name enclosed in double quotes at line 1 column 2\n",
        ),
        (
            ["convert", "--from", "openai-chat", "--to", "anthropic", "-"],
            '{"model": "m", "messages": [{"role": "robot"}]}',
            "toolslip convert: messages[0]: unknown role 'robot'; "
            "expected system, developer, user, assistant or tool\n",
        ),
        (
            ["convert", "--from", "anthropic", "--to", "openai-chat", "-"],
            '{"model": "m", "messages": [{"role": "user", "content": 3}]}',
            "toolslip convert: messages[0].content: expected an array, got int\n",
        ),
    ],
)
def test_bad_input_is_one_sentence_with_the_path(
    argv: list[str], stdin: str, message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", message)


def test_the_installed_command_reads_stdin() -> None:
    body = json.loads((FIXTURES / "openai_responses" / "weather.json").read_text())["followup"]
    argv = ["convert", "--from", "openai-responses", "--to", "openai-functions", "--on-loss", "drop", "-"]
    command = [sys.executable, "-m", "toolslip.cli", *argv]
    done = subprocess.run(command, input=json.dumps(body), capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    legacy = json.loads(done.stdout)
    assert legacy["messages"][1]["function_call"]["name"] == "get_weather"
    assert legacy["messages"][2] == {"role": "function", "name": "get_weather", "content": "14°C, light rain"}
    assert done.stderr.splitlines() == [
        "toolslip convert: lost messages[1]: call ids (legacy functions have none; re-created when read back) (marked)",
        "toolslip convert: lost tools[0].strict: strict mode (dropped)",
    ]
