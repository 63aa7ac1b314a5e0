"""``toolslip chat`` through a real terminal (pexpect): turns with tool calls, an approval asked inline,
Ctrl-C during an answer, and a SIGKILL followed by ``chat --continue`` with the history intact and no side
effect repeated. The model is a FunctionModel in a file, so every turn is deterministic and instant."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pexpect

TOOLS = '''
import os

from toolslip import tool


@tool(effects="read_only")
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C and cloudy in {city}"


@tool
def send(to: str) -> str:
    """Send a message (a side effect: it is written to $SENT_LOG)."""
    with open(os.environ["SENT_LOG"], "a") as log:
        log.write(to + "\\n")
    return f"sent to {to}"
'''

MODEL = """
import asyncio

from toolslip.testing import FunctionModel, call


async def _answer(request):
    asked = [i for i, m in enumerate(request.messages) if m.role == "user"]
    question = request.messages[asked[-1]].text
    results = [r for m in request.messages[asked[-1]:] for r in m.tool_results]
    if question.startswith("weather"):
        return f"It is {results[-1].text}." if results else call("get_weather", city=question.split()[-1])
    if question.startswith("send"):
        if not results:
            return call("send", to=question.split()[1])
        if "slow" in question:
            open("thinking", "w").close()  # the test kills the session once this exists
            await asyncio.sleep(120)
        return f"Done: {results[-1].text}."
    if question.startswith("slow"):
        open("thinking", "w").close()  # the test presses Ctrl-C once this exists
        await asyncio.sleep(120)
        return "too late"
    sends = [r.text for m in request.messages for r in m.tool_results if r.name == "send"]
    return f"You asked {len(asked)} questions; messages: {sends}."


MODEL = FunctionModel(_answer, name="function")
"""


def _spawn(folder: Path, *args: str) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TOOLSLIP_MODEL"}
    env.update(TOOLSLIP_HOME=str(folder / "home"), SENT_LOG=str(folder / "sent.log"), TERM="dumb")
    return pexpect.spawn(
        sys.executable,
        ["-m", "toolslip.cli", "chat", *args],
        cwd=folder,
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )


def _wait_for(marker: Path) -> None:
    """Until the model has started its slow answer; the marker is removed for the next time."""
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline, "the model never started its slow answer"
        time.sleep(0.05)
    marker.unlink()


def _ask(chat: pexpect.spawn, text: str) -> None:
    chat.expect_exact("> ")
    chat.sendline(text)


def test_a_session_survives_ctrl_c_and_a_kill(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "model.py").write_text(MODEL)
    chat = _spawn(tmp_path, "tools.py", "--model", "model.py:MODEL")
    chat.expect_exact("2 tools: get_weather, send")

    _ask(chat, "weather Paris")
    chat.expect_exact("[step 1] get_weather(city='Paris') → 18 C and cloudy in Paris")
    chat.expect_exact("It is 18 C and cloudy in Paris.")
    chat.expect_exact("[stop: completed after 2 model calls, 1 tool call; run ")

    _ask(chat, "send alice")
    chat.expect_exact("Approve send?")
    chat.expect_exact("Run it? [y/N]")
    chat.sendline("y")
    chat.expect_exact("Done: sent to alice.")

    _ask(chat, "slow question")
    _wait_for(tmp_path / "thinking")
    chat.sendintr()
    chat.expect_exact("[cancelled: the answer was stopped")

    _ask(chat, "weather Rome")  # the session goes on after Ctrl-C
    chat.expect_exact("It is 18 C and cloudy in Rome.")

    _ask(chat, "send bob, then slow")
    chat.expect_exact("Run it? [y/N]")
    chat.sendline("y")
    chat.expect_exact("[step 1] send(to='bob,') → sent to bob,")
    _wait_for(tmp_path / "thinking")
    os.kill(chat.pid, signal.SIGKILL)  # the model is now asleep in its second call
    chat.expect(pexpect.EOF)

    again = _spawn(tmp_path, "--continue")
    again.expect_exact("continuing run ")
    _ask(again, "what did I send?")
    again.expect_exact("You asked 6 questions; messages: ['sent to alice', 'sent to bob,'].")
    _ask(again, "/usage")
    again.expect_exact("1 turn this session: tokens 0 in / 0 out")
    _ask(again, "/exit")
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0
    assert (tmp_path / "sent.log").read_text().splitlines() == ["alice", "bob,"]  # nothing sent twice


COUNTED = """
from pathlib import Path

from toolslip import Message, ModelResponse, ProviderError, Usage
from toolslip.testing import FunctionModel


def _answer(request):
    asked = [m.text for m in request.messages if m.role == "user"]
    if asked[-1] == "fail once" and not Path("failed").exists():
        Path("failed").touch()
        raise ProviderError("openai answered 503 Service Unavailable: overloaded", status=503, retryable=True)
    # Every answer reports 600 tokens, as a provider would: the session's budget is counted from these.
    message = Message.assistant(f"You asked {asked}.")
    return ModelResponse(message=message, stop_reason="end_turn", usage=Usage(input_tokens=500, output_tokens=100))


MODEL = FunctionModel(_answer, name="counted")
"""


def test_a_session_survives_a_provider_error_and_keeps_a_budget_for_all_its_turns(tmp_path: Path) -> None:
    """A 503 ended the whole session (exit 1), and --max-tokens-total capped each turn, not the session."""
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "model.py").write_text(COUNTED)
    chat = _spawn(tmp_path, "tools.py", "--model", "model.py:MODEL", "--max-tokens-total", "1000")
    _ask(chat, "hello")
    chat.expect_exact("You asked ['hello'].")
    _ask(chat, "fail once")
    chat.expect_exact("[error: openai answered 503 Service Unavailable: overloaded]")
    chat.expect_exact("[the conversation is kept: /retry asks again, or go on]")
    _ask(chat, "/retry")  # the question is asked once: the model sees it from the recorded history
    chat.expect_exact("You asked ['hello', 'fail once'].")
    chat.expect_exact("[stop: completed after 1 model call")
    _ask(chat, "and now?")  # 1,200 of the session's 1,000 tokens are used: nothing is sent
    chat.expect_exact("[the session's budget is spent: total tokens 1200 of 1000; nothing was sent. /exit leaves]")
    _ask(chat, "/exit")
    chat.expect(pexpect.EOF)
    chat.close()
    assert chat.exitstatus == 0

    again = _spawn(tmp_path, "--continue")  # the model is the continued run's, and the line says so
    again.expect(r"model: counted \(the model of run [0-9a-f]{32}, which this continues\)")
    _ask(again, "/exit")
    again.expect(pexpect.EOF)
