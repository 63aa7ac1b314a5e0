"""MCP servers as tool sources, against real servers started as subprocesses.

Servers used: toolslip's own ``mcp-serve`` of the examples, ``mcp-server-time`` from PyPI (installed by
the dev extra), and tests/mcp_servers/fixture_server.py written with the SDK's MCPServer.
"""

import asyncio
import sys
from pathlib import Path

import psutil
import pytest

import toolslip.mcp as tm
from toolslip import Agent, ConfigError, Image, McpError, Text, Toolbox
from toolslip.cli.files import load_tools_file
from toolslip.effects import Effect
from toolslip.loop import execute_call
from toolslip.testing import ScriptedModel, call

ROOT = Path(__file__).parent.parent
SERVERS = Path(__file__).parent / "mcp_servers"
EXPENSES = str(ROOT / "examples" / "expenses.py")


def serve(path: str, **options):
    """``toolslip mcp-serve PATH`` as a stdio tool source."""
    return tm.stdio(sys.executable, "-m", "toolslip.cli", "mcp-serve", path, **options)


async def run_call(source, name, **arguments):
    c = call(name, **arguments)
    return await execute_call(c, source.get(name), source)


async def until(predicate, seconds=10.0):
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return True
        await asyncio.sleep(0.05)
    return False


async def test_expenses_example_end_to_end_through_mcp():
    model = ScriptedModel(
        [
            call("fx", amount=320, currency="USD"),
            call("fx", amount=15000, currency="JPY"),
            call("calc", expr="2297.6 + 705.0"),
            call("calc", expr="3002.6 / 4"),
            "320 USD is 2297.6 CNY and 15000 JPY is 705.0 CNY: 3002.6 CNY in total, 750.65 CNY each.",
        ]
    )
    async with serve(EXPENSES) as expenses:
        result = await Agent(model=model, tools=expenses).arun("I spent 320 USD and 15000 JPY; split by 4?")
    assert result.ok and result.tool_calls == 4
    contents = [r.content for m in result.messages for r in m.tool_results]
    assert contents == ["320 USD = 2297.6 CNY", "15000 JPY = 705.0 CNY", "3002.6", "750.65"]
    assert not any(r.is_error for m in result.messages for r in m.tool_results)
    assert "3002.6" in result.output and "750.65" in result.output


async def test_served_tools_keep_their_declaration_and_effects():
    local = load_tools_file(EXPENSES)
    async with serve(EXPENSES) as remote:
        assert remote.names == local.names
        for name in local.names:
            assert remote[name].description == local[name].description
            assert remote[name].parameters == local[name].parameters
            assert (remote[name].effects, remote[name].trusted_output) == (
                local[name].effects,
                local[name].trusted_output,
            )
        # Validation happens on both sides; the server's coercion error reaches the model intact.
        bad = await run_call(remote, "fx", amount=1, currency="GBP")
        assert bad.is_error and "currency" in bad.content


async def test_third_party_time_server_with_prefix_filter_and_cache():
    async with tm.stdio(
        sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC", prefix="time_", include=["convert_*"]
    ) as clock:
        assert clock.names == ["time_convert_time"]
        assert clock.remote_names == {"time_convert_time": "convert_time"}
        tool = clock["time_convert_time"]
        assert tool.effects == {Effect.READ_ONLY} and tool.trusted_output  # readOnlyHint, openWorldHint=false
        ok = await run_call(
            clock, "time_convert_time", source_timezone="UTC", time="00:00", target_timezone="Asia/Tokyo"
        )
        assert not ok.is_error and '"time_difference": "+9.0h"' in ok.content and "T09:00:00+09:00" in ok.content
        bad = await run_call(
            clock, "time_convert_time", source_timezone="Mars/Olympus", time="00:00", target_timezone="UTC"
        )
        assert bad.is_error and "Mars/Olympus" in bad.content
        missing = await run_call(clock, "time_convert_time", source_timezone="UTC")
        assert missing.is_error and "'time' is a required property" in missing.content  # checked before sending
        assert clock.list_count == 1  # listed once at connect, not per call or per run
    async with tm.stdio(sys.executable, "-m", "mcp_server_time", exclude=["convert_time"]) as clock:
        assert clock.names == ["get_current_time"]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_content_kinds_annotations_and_list_changed(protocol):
    async with tm.stdio(sys.executable, str(SERVERS / "fixture_server.py"), protocol=protocol) as fixture:
        assert fixture["delete_everything"].effects == {Effect.SIDE_EFFECT, Effect.DESTRUCTIVE, Effect.EGRESS}
        assert not fixture["delete_everything"].trusted_output
        assert fixture["set_flag"].effects == {Effect.IDEMPOTENT} and fixture["set_flag"].trusted_output

        parts = (await run_call(fixture, "everything")).content
        assert parts[0] == Text(text="plain text")
        assert isinstance(parts[1], Image) and parts[1].media_type == "image/png"
        assert parts[2] == Text(text="[resource file:///notes.txt]\nthe notes")
        assert isinstance(parts[3], Image)  # an embedded image blob is still an image
        assert "application/zip" in parts[4].text and "audio/wav" in parts[5].text
        assert "https://example.invalid/report.pdf" in parts[6].text

        refused = await run_call(fixture, "set_flag", value=False)
        assert refused.is_error and refused.content == "refused: the flag can only be set"  # isError, verbatim
        assert (await run_call(fixture, "set_flag", value=True)).content == '{"flag": true}'

        assert "secret" not in fixture
        await run_call(fixture, "unlock")
        assert await until(lambda: "secret" in fixture), f"tool list not refreshed ({protocol})"
        assert fixture.list_count == 2
        assert (await run_call(fixture, "secret")).content == "42"


async def test_timeout_cancels_the_call_on_the_server(tmp_path):
    marks = tmp_path / "marks"
    async with serve(str(SERVERS / "slow_tools.py"), env={"TOOLSLIP_TEST_MARKS": str(marks)}, timeout=0.5) as slow:
        timed_out = await run_call(slow, "slow", seconds=30)
        assert timed_out.is_error and "timed out after 0.5 s" in timed_out.content
        assert await until(lambda: marks.exists() and "cancelled" in marks.read_text()), "server was not told"
        assert (await run_call(slow, "slow", seconds=0)).content == "slept 0.0"  # the session is still usable


async def test_tool_errors_images_and_effects_from_a_toolslip_server():
    async with serve(str(SERVERS / "slow_tools.py")) as tools:
        refused = await run_call(tools, "refuse", city="Atlantis")
        assert refused.is_error and refused.content == "no data for Atlantis; try Beijing"
        assert tools["refuse"].effects == {Effect.IDEMPOTENT, Effect.DESTRUCTIVE}
        assert tools["crash"].effects == {Effect.SIDE_EFFECT, Effect.EGRESS}
        assert (await run_call(tools, "picture")).content == (Image(media_type="image/png", data="iVBORw0KGgo="),)


async def test_a_crashing_server_is_reported_with_its_stderr():
    async with serve(str(SERVERS / "slow_tools.py")) as tools:
        crashed = await run_call(tools, "crash")
        assert crashed.is_error and "disk on fire" in crashed.content
        assert "disk on fire" in tools.stderr


async def test_the_server_is_stopped_when_the_block_raises():
    with pytest.raises(RuntimeError, match="user code failed"):
        async with serve(EXPENSES) as expenses:
            servers = psutil.Process().children(recursive=True)
            assert servers and expenses.names
            raise RuntimeError("user code failed")
    gone, alive = psutil.wait_procs(servers, timeout=10)
    assert not alive


async def test_streamable_http_server_and_client():
    server = await asyncio.create_subprocess_exec(
        *[sys.executable, "-m", "toolslip.cli", "mcp-serve", EXPENSES, "--http", "--port", "0"],
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        line = (await server.stdout.readline()).decode()
        url = line.split(" at ")[1].strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        async with tm.http(url, headers={"X-Test": "1"}, prefix="x_") as remote:
            assert remote.names == ["x_calc", "x_fx"]
            assert (await run_call(remote, "x_calc", expr="(12+8)*3")).content == "60"
    finally:
        server.terminate()
        await server.wait()


async def test_clear_errors_for_misuse():
    with pytest.raises(ConfigError, match="not found on PATH"):
        tm.stdio("no-such-mcp-server-command")
    with pytest.raises(ConfigError, match="must start with http"):
        tm.http("localhost:8000/mcp")
    with pytest.raises(McpError, match="not connected"):
        Toolbox([serve(EXPENSES)])
    async with serve(EXPENSES) as expenses:
        pass
    with pytest.raises(McpError, match="not connected"):
        await Agent(model=ScriptedModel(["never asked"]), tools=expenses).arun("q")
    with pytest.raises(McpError, match="could not connect.*No module named"):
        async with tm.stdio(sys.executable, "-m", "no_such_module_for_mcp"):
            pass
    with pytest.raises(McpError, match="could not connect"):
        async with tm.http("http://127.0.0.1:9/mcp", connect_timeout=5):
            pass
