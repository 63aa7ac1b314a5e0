"""The Vercel AI SDK's own chat client (the ``ai`` npm package's ``AbstractChat``, what ``useChat`` runs)
drives a toolslip agent through ``toolslip console``'s ``POST /api/chat``, one tool approval round included:
approved, the payment runs once; denied, the reason reaches the model. Node runs ``tests/js/chat.mjs``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from _console import console, toolslip
from toolslip.console.uistream import read_approval_id

JS = Path(__file__).parent / "js"
FIXTURE = Path(__file__).parent / "fixtures" / "console" / "agent.py"
pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js (apt-get install nodejs)"),
    pytest.mark.skipif(not (JS / "node_modules" / "ai").is_dir(), reason="run `npm ci` in tests/js (make js-deps)"),
]


def _chat(url: str, token: str, prompt: str, *verdict: str, then: str = "") -> dict[str, Any]:
    env = {**os.environ, "CHAT_THEN": then}
    done = subprocess.run(
        ["node", "chat.mjs", url, token, prompt, *verdict], cwd=JS, capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_use_chat_s_client_approves_a_payment_through_the_ui_message_stream(tmp_path: Path, monkeypatch: Any) -> None:
    journal, payments = str(tmp_path / "runs.sqlite"), tmp_path / "payments.log"
    monkeypatch.setenv("CONSOLE_PAYMENTS", str(payments))
    with console(journal, "--model", f"{FIXTURE}:model", "--tools", str(FIXTURE)) as c:
        chat = _chat(c.url, c.token, "pay bob", "approve")
        denied = _chat(c.url, c.token, "pay bob", "deny", "not this month")
    assert chat["status"] == "ready" and chat["error"] is None
    assert chat["asked"] == [{"tool": "tool-pay", "input": {"to": "bob", "amount": 20}}]
    parts = chat["messages"][1]["parts"]
    [tool_part] = [p for p in parts if p["type"] == "tool-pay"]
    assert tool_part["state"] == "output-available" and tool_part["output"] == "paid 20 EUR to bob"
    assert parts[-1] == {"type": "text", "text": "the tool said: paid 20 EUR to bob", "state": "done"}
    assert payments.read_text() == "bob 20\n"  # once, the denied chat's payment never ran
    [denied_part] = [p for p in denied["messages"][1]["parts"] if p["type"] == "tool-pay"]
    assert denied_part["state"] == "output-denied"
    assert "not this month" in denied["messages"][1]["parts"][-1]["text"]
    bound = read_approval_id(tool_part["approval"]["id"])  # the run, step, call and hash of the arguments
    assert bound is not None and bound[1:3] == (1, tool_part["toolCallId"])
    shown = toolslip("show", bound[0], "--journal", journal)
    assert f"decision: {tool_part['toolCallId']} pay approved by ui-stream" in shown


def test_a_follow_up_turn_sees_the_earlier_turn_s_tool_call_and_result(tmp_path: Path, monkeypatch: Any) -> None:
    """useChat posts the whole history again; the new run's model is sent the earlier call and its result, paired
    by id (the fixture's model answers a "what did you" question from the tool results it was sent, nothing else)."""
    journal, payments = str(tmp_path / "runs.sqlite"), tmp_path / "payments.log"
    monkeypatch.setenv("CONSOLE_PAYMENTS", str(payments))
    with console(journal, "--model", f"{FIXTURE}:model", "--tools", str(FIXTURE)) as c:
        chat = _chat(c.url, c.token, "pay bob", "approve", then="what did you pay?")
    assert chat["status"] == "ready" and chat["error"] is None, chat
    assert [m["role"] for m in chat["messages"]] == ["user", "assistant", "user", "assistant"]
    answer = [p["text"] for p in chat["messages"][3]["parts"] if p["type"] == "text"]
    assert answer == ['earlier: pay {"amount": 20, "to": "bob"} -> paid 20 EUR to bob']
    assert payments.read_text() == "bob 20\n"  # the follow-up ran nothing again


@pytest.mark.slow
def test_use_chat_s_client_drives_the_embedded_model_through_an_approval(tmp_path: Path, monkeypatch: Any) -> None:
    from toolslip.providers.local import available

    if not available():
        pytest.skip("the embedded model needs toolslip[local]")
    journal, payments = str(tmp_path / "runs.sqlite"), tmp_path / "payments.log"
    monkeypatch.setenv("CONSOLE_PAYMENTS", str(payments))
    with console(journal, "--model", "local:qwen2.5-coder-0.5b", "--tools", str(FIXTURE.with_name("payments.py"))) as c:
        chat = _chat(c.url, c.token, "Pay bob 20 EUR.", "approve")
    assert chat["status"] == "ready" and chat["error"] is None, chat
    assert chat["asked"] == [{"tool": "tool-pay", "input": {"to": "bob", "amount": 20}}]
    [tool_part] = [p for p in chat["messages"][1]["parts"] if p["type"] == "tool-pay"]
    assert tool_part["state"] == "output-available" and tool_part["output"] == "paid 20 EUR to bob"
    assert payments.read_text() == "bob 20\n"
