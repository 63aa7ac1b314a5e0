"""Follow-ups (``run -c``), a question from stdin, several tools files, ``tools`` showing declarations, and
the scripted model's smoke test of a user's own tools file."""

from __future__ import annotations

import io
import json
import shlex
import sys
from pathlib import Path

import jsonschema
import pytest

from toolslip.cli import main
from toolslip.core.messages import message_from_dict
from toolslip.formats.schema_example import example_arguments

ROOT = Path(__file__).resolve().parents[1]
EXPENSES = str(ROOT / "examples" / "expenses.py")
WEATHER = str(ROOT / "examples" / "weather.py")
BOOKING = '''
from typing import Literal

from toolslip import tool

BOOKED = []


@tool
def book(city: str, nights: int, kind: Literal["hotel", "hostel"], when: str = "") -> str:
    """Book a room."""
    BOOKED.append(city)
    return f"booked a {kind} in {city} for {nights} nights"


@tool(effects="read_only")
def now() -> str:
    """The time."""
    return "12:00"
'''


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOOLSLIP_HOME", str(tmp_path / "home"))
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOOLSLIP_MODEL"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path / "home"


def _entries(run_id: str, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    assert main(["show", run_id, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def _run_id(out: str) -> str:
    return out.rsplit("; run ", 1)[1].split("]")[0]


def test_continue_asks_a_follow_up_with_the_whole_transcript(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", EXPENSES, "320 USD and 15000 JPY, split 4 ways?", "--model", "scripted:expenses"]) == 0
    first = _run_id(capsys.readouterr().out)
    first_messages = _entries(first, capsys)[-1]
    # -c takes an optional run id: here it is the question, and the newest run is continued
    assert main(["run", "-c", "and for 3 people?", "--model", "scripted:expenses"]) == 0
    out = capsys.readouterr().out
    assert f"continuing run {first}" in out and "750.65" in out
    start = _entries(_run_id(out), capsys)[0]
    assert start["data"]["meta"]["continues"] == first
    messages = [message_from_dict(m) for m in start["data"]["messages"]]
    assert [m.role for m in messages] == ["user", *["assistant", "tool"] * 4, "assistant", "user"]
    assert messages[-1].text == "and for 3 people?" and first_messages["data"]["output"] in messages[-2].text
    # a named run, and its tools file and model come from the journal
    assert main(["run", "--continue", first, "once more?"]) == 0
    assert "model: scripted:expenses" in capsys.readouterr().out


def test_show_prints_the_calls_and_results_of_the_earlier_turns(capsys: pytest.CaptureFixture[str]) -> None:
    """The start entry of a follow-up holds the earlier turns; their calls and results printed as empty
    ``assistant:`` and ``tool:`` lines."""
    assert main(["run", EXPENSES, "320 USD in CNY?", "--model", "scripted:expenses"]) == 0
    capsys.readouterr()
    assert main(["run", "-c", "and for 3 people?", "--model", "scripted:expenses"]) == 0
    assert main(["show", _run_id(capsys.readouterr().out)]) == 0
    start = capsys.readouterr().out.split("\n[", 2)[0].splitlines()[1:]  # the start entry's history
    assert start[0] == "  user: 320 USD in CNY?"
    assert start[1].startswith("  assistant: call ") and start[1].endswith(' fx {"amount": 320, "currency": "USD"}')
    assert start[2].startswith("  tool: ") and start[2].endswith(" fx") and start[3] == "    320 USD = 2297.6 CNY"
    assert not [line for line in start if line.rstrip() in ("assistant:", "tool:")]


def test_a_follow_up_of_an_mcp_run_gets_the_same_servers(capsys: pytest.CaptureFixture[str]) -> None:
    """``run -c`` after a run whose tools came from ``--mcp`` exited 2, "no tools"; it asks with the same servers."""
    server = f"{shlex.quote(sys.executable)} -m toolslip.cli mcp-serve {shlex.quote(EXPENSES)}"
    question = "320 USD and 15000 JPY, split 4 ways?"
    assert main(["run", "--mcp", server, question, "--model", "scripted:expenses", "--no-stream"]) == 0
    first = _run_id(capsys.readouterr().out)
    assert main(["run", "-c", "and for 3 people?"]) == 0
    out = capsys.readouterr().out
    assert f"continuing run {first}" in out and "[step 1] fx(" in out  # the servers' tools ran again
    assert f"model: scripted:expenses (the model of run {first}, which this continues" in out


def test_continue_needs_an_earlier_run_and_the_journal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "-c", "why?"]) == 1
    assert "no run journal" in capsys.readouterr().err
    assert main(["run", EXPENSES, "q", "--model", "scripted:expenses", "--no-journal", "-c"]) == 2
    assert "drop --no-journal" in capsys.readouterr().err


def test_the_question_from_stdin_and_two_tools_files(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("What's the weather\nin Beijing?\n"))
    assert main(["run", WEATHER, EXPENSES, "-", "--model", "scripted:weather"]) == 0
    out = capsys.readouterr().out
    assert "get_weather(city='北京'" in out
    start = _entries(_run_id(out), capsys)[0]
    assert start["data"]["messages"][0]["parts"][0]["text"] == "What's the weather\nin Beijing?\n"
    assert start["data"]["meta"]["tools_files"] == [WEATHER, EXPENSES]
    assert main(["run", EXPENSES, EXPENSES, "q", "--model", "scripted"]) == 1
    assert "two tools are named 'calc'" in capsys.readouterr().err
    assert main(["run", EXPENSES, "how", "much?"]) == 2  # an unquoted question
    assert "quote the question" in capsys.readouterr().err


def test_tools_shows_descriptions_parameters_and_the_full_declaration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    booking = tmp_path / "booking.py"
    booking.write_text(BOOKING)
    assert main(["tools", str(booking), EXPENSES]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "    Book a room." in out and '    kind: "hotel" | "hostel" (required)' in out
    assert '    when: string = ""' in out
    assert '    currency: "USD" | "EUR" | "JPY" (required) - ISO code of the foreign currency.' in out
    assert main(["tools", str(booking), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["description"] == "Book a room."
    assert rows[0]["parameters"]["properties"]["kind"]["enum"] == ["hotel", "hostel"]


def test_the_scripted_model_smoke_tests_a_users_tools_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    booking = tmp_path / "booking.py"
    booking.write_text(BOOKING)
    assert main(["run", str(booking), "try them", "--model", "scripted", "--approve", "yes"]) == 0
    out = capsys.readouterr().out
    assert "book(city='example', nights=1, kind='hotel', when='')" in out and "now() → 12:00" in out
    assert "2 of 2 tools called" in out and "- book: ok: booked a hotel in example for 1 nights" in out


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5, "maximum": 9, "multipleOf": 3}}},
        {"type": "object", "properties": {"d": {"type": "string", "format": "date"}}, "required": ["d"]},
        {"type": "object", "properties": {"s": {"type": "string", "minLength": 12, "maxLength": 20}}},
        {"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}, "minItems": 2}}},
        {
            "type": "object",
            "properties": {"o": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/P"}]}},
            "$defs": {"P": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]}},
        },
    ],
)
def test_example_arguments_satisfy_their_schema(schema: dict) -> None:
    arguments = example_arguments(schema)
    assert arguments is not None and set(arguments) == set(schema["properties"])
    jsonschema.validate(arguments, schema)


def test_no_arguments_rather_than_invalid_ones() -> None:
    assert example_arguments({"type": "object", "properties": {"z": {"type": "string", "pattern": "^[0-9]+$"}}}) is None


def test_a_call_cut_off_mid_way_is_marked_as_possibly_done(tmp_path: Path) -> None:
    import asyncio

    from toolslip import Agent, Journal, Toolbox, tool
    from toolslip.durable.transcript import transcript_from_entries
    from toolslip.testing import ScriptedModel, call

    started = asyncio.Event()

    @tool
    async def transfer(to: str) -> str:
        """Send money (a side effect)."""
        started.set()
        await asyncio.sleep(60)
        return "sent"

    journal = Journal(tmp_path / "runs.sqlite")
    agent = Agent(model=ScriptedModel([call("transfer", to="bob")]), tools=Toolbox([transfer]), hooks=journal.wrap())

    async def interrupted() -> None:
        run = asyncio.create_task(agent.arun("pay bob", run_id="r1"))
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(interrupted())
    messages = transcript_from_entries(journal.store.entries("r1"))
    assert messages is not None and [m.role for m in messages] == ["user", "assistant", "tool"]
    (result,) = messages[-1].tool_results
    assert result.is_error and result.text.startswith("unknown outcome: the run was interrupted while this call ran")
