"""``toolslip tools`` and ``toolslip mcp-serve`` from the command line."""

import json
import subprocess
import sys
from pathlib import Path

from toolslip.cli import main

EXPENSES = str(Path(__file__).parent.parent / "examples" / "expenses.py")


def test_tools_lists_a_file_and_an_mcp_server(capsys):
    time_server = f"{sys.executable} -m mcp_server_time --local-timezone UTC"
    assert main(["tools", EXPENSES, "--mcp", time_server, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["source"]) for r in rows] == [
        ("calc", EXPENSES),
        ("fx", EXPENSES),
        ("get_current_time", f"mcp: {time_server}"),
        ("convert_time", f"mcp: {time_server}"),
    ]
    assert all(r["effects"] == ["read_only"] and r["trusted_output"] for r in rows)
    assert rows[3]["tokens"] > rows[2]["tokens"] > 20  # convert_time has three described parameters


def test_tools_table_and_its_errors(capsys):
    assert main(["tools", EXPENSES]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAME", "EFFECTS", "OUTPUT", "TOKENS", "SOURCE"]  # exact: toktok-rs is installed
    assert out[1].split()[:3] == ["calc", "read_only", "trusted"] and out[-1].startswith("total: 2 tools")
    assert main(["tools"]) == 2  # bad usage
    assert "give a tools file, --mcp CMD, or both" in capsys.readouterr().err
    assert main(["tools", "--mcp", "'unbalanced"]) == 1
    assert "cannot be split into words" in capsys.readouterr().err
    assert main(["tools", "--mcp", f"{sys.executable} -c 'raise SystemExit(\"no API key set\")'"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("toolslip tools: MCP server") and "could not connect" in err and "no API key set" in err


def test_mcp_serve_reports_a_bad_tools_file_in_one_sentence(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "mcp-serve", str(bad)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.strip() == f"toolslip mcp-serve: {bad} defines no tools; decorate functions with @toolslip.tool"
