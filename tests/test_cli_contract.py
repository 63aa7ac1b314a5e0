"""The command line keeps its contract: exit codes, one-sentence errors, and output a person can read.

Every usage error the CLI knows is run through the real command in a subprocess (concurrently, to keep
the suite fast): exit 2, one line on stderr naming the command, no traceback. Then what a user notices
at once: ``--version``, plurals, tables aligned by display width with CJK names, the eval table at
``-k 30``, a 10 MB tool argument, an ``eval`` whose every trial failed, and ``--fail-under``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from toolslip import ProviderError, Request
from toolslip._display import width
from toolslip.cli import main
from toolslip.server import serve
from toolslip.testing import FunctionModel

ROOT = Path(__file__).resolve().parents[1]
EXPENSES, WEATHER, SUITE = "examples/expenses.py", "examples/weather.py", "examples/suite_expenses.py"
ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "TOOLSLIP_MODEL"}

# (command line, what the one line must say). Each is a mistake in the command line itself.
USAGE_ERRORS = [
    ([], "the following arguments are required: COMMAND"),
    (["bogus"], "invalid choice: 'bogus'"),
    (["run"], "the following arguments are required: [TOOLS.py] QUESTION"),
    (["run", EXPENSES], "no question: examples/expenses.py looks like the tools file"),
    (["run", EXPENSES, "  "], "the question is empty"),
    (["run", EXPENSES, "a", "b"], "is not a tools file (*.py); quote the question"),
    (["run", "What is 320 USD in CNY?"], "no tools: give a tools file before the question"),
    (["run", EXPENSES, "q", "--max-steps", "0"], "argument --max-steps: must be at least 1, got 0"),
    (["run", EXPENSES, "q", "--max-steps", "many"], "argument --max-steps: expected a whole number, got 'many'"),
    (["run", EXPENSES, "q", "--model", "gpt-4o"], "model string 'gpt-4o' has no provider prefix"),
    (["run", EXPENSES, "q", "--model", "nonsense:x"], "unknown model provider 'nonsense'"),
    (["run", EXPENSES, "q", "--model", "scripted:"], "ends with a colon"),
    (["run", EXPENSES, "q", "--server-tool", "web_search={oops"], "the options after '=' are not JSON"),
    (["run", EXPENSES, "q", "--server-tool", "teleport"], "unknown server tool 'teleport'"),
    (["run", EXPENSES, "q", "--colour"], "unrecognized arguments: --colour"),
    (["eval", SUITE], "the following arguments are required: --model"),
    (["eval", SUITE, "--model", "reference", "-k", "0"], "argument -k: must be at least 1, got 0"),
    (["eval", SUITE, "--model", "reference", "--concurrency", "0"], "argument --concurrency: must be at least 1"),
    (["eval", SUITE, "--model", "reference", "--retries", "-1"], "argument --retries: must be at least 0"),
    (["eval", SUITE, "--model", "reference", "--fail-under", "2"], "argument --fail-under: must be between 0 and 1"),
    (["eval", SUITE, "--model", "reference", "--price", "cheap"], "expected IN,OUT dollars per million tokens"),
    (["eval", SUITE, "--model", "flaky:x"], "bad model 'flaky:x': write flaky:P or flaky:P:E"),
    (["eval", SUITE, "--model", "flaky:2"], "p must be in [0, 1]"),
    (["eval", SUITE, "--model", "gpt-4o"], "model string 'gpt-4o' has no provider prefix"),
    (["eval-report"], "the following arguments are required: results"),
    (["eval-compare", "a.jsonl"], "the following arguments are required: after"),
    (["serve", "--port", "99999"], "argument --port: must be between 0 and 65535, got 99999"),
    (["serve", "--model", "gpt-4o"], "model string 'gpt-4o' has no provider prefix"),
    (["mcp-serve", EXPENSES, "--port", "9000"], "--host and --port only apply to --http"),
    (["mcp-serve", EXPENSES, "--http", "--port", "70000"], "argument --port: must be between 0 and 65535"),
    (["runs", "--limit", "0"], "argument --limit: must be at least 1, got 0"),
    (["resume", "r1", "--max-steps", "0"], "argument --max-steps: must be at least 1, got 0"),
    (["tools"], "give a tools file, --mcp CMD, or both"),
    (["lint"], "give a tools file or JSON list of declarations, --mcp CMD, or both"),
    (["injection", "bank"], "name a task of suite 'bank'"),
    (["injection", "bank", "balance", "--phrasing", "poetry"], "unknown phrasing 'poetry'"),
    (["injection", "nope"], "no injection suite is called 'nope'; choose one of:"),
    (["injection", "bank", "nope"], "no task of suite 'bank' is called 'nope'"),
    (["injection", "bank", "balance", "--attack", "nope"], "no injection of suite 'bank' is called 'nope'"),
    (["resume", "r1", "--no-journal"], "resume reads the run's journal; drop --no-journal"),
    (["resume", "r1", "--decide", "c1"], "--decide 'c1': write CALL_ID=yes or CALL_ID=no"),
    (["convert", "x.json", "--from", "klingon", "--to", "anthropic"], "argument --from: invalid choice"),
    # A value the library cannot use is bad usage too (issue 30), and a typo gets the nearest name.
    (["run", EXPENSES, "q", "--model", "scripted:weathr"], "no scripted demo 'weathr' (did you mean weather?)"),
    (["run", EXPENSES, "q", "--model", "local:typo"], "unknown local model 'local:typo'"),
    (["run", EXPENSES, "q", "--model", "lcoal"], "unknown model provider 'lcoal' in 'lcoal' (did you mean local?)"),
    (["run", EXPENSES, "q", "--model", "lmstudio:qwen"], "write openai:qwen@http://localhost:1234/v1"),
    (["run", "What is 320 USD in CNY?", EXPENSES], f"the tools file comes first: toolslip run {EXPENSES} 'What"),
    (["run", EXPENSES, "q", "--max-repeats", "-3"], "argument --max-repeats: must be at least 0, got -3"),
    (["runs", "--prune"], "--prune needs --before DATE"),
    (["runs", "--prune", "--before", "someday"], "--before 'someday' is not a date"),
    (["serve", "--model", "scripted:weathr"], "no scripted demo 'weathr'"),
    # --output-schema names no type, and lint's --disable names no rule (issue 36): exit 1 before
    (["run", EXPENSES, "q", "--output-schema", f"{EXPENSES}:calc"], "calc is a tool, not a type; types defined"),
    (["run", EXPENSES, "q", "--output-schema", f"{EXPENSES}:EXCHANGE"], "EXCHANGE is a dict, not a type"),
    (["run", EXPENSES, "q", "--output-schema", EXPENSES], "name the type after the file, e.g. examples/expenses"),
    (["lint", EXPENSES, "--disable", "nosuchrule"], "unknown lint rule 'nosuchrule'; rules are: name-invalid"),
    (["lint", EXPENSES, "--disable", "nosuch:overlap"], "disable 'nosuch:overlap': no tool of that name"),
    (["lint", "--output-schema", f"{EXPENSES}:Expense", "--disable", "nosuchrule"], "unknown lint rule 'nosuchrule'"),
]


async def _run(argv: list[str], limit: asyncio.Semaphore, home: Path) -> tuple[int, str, str]:
    async with limit:
        child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "toolslip.cli",
            *argv,
            cwd=ROOT,
            env={**ENV, "TOOLSLIP_HOME": str(home)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(child.communicate(), 120)
    assert child.returncode is not None
    return child.returncode, out.decode(), err.decode()


@pytest.mark.slow  # 37 real processes of ~0.13 s CPU each, four at a time: a few seconds on an idle machine
async def test_every_usage_error_exits_2_with_one_sentence(tmp_path: Path) -> None:
    limit = asyncio.Semaphore(4)
    results = await asyncio.gather(*(_run(argv, limit, tmp_path) for argv, _ in USAGE_ERRORS))
    wrong = []
    for (argv, said), (code, _, err) in zip(USAGE_ERRORS, results, strict=True):
        command = f"toolslip {argv[0]}: " if argv and argv[0] != "bogus" else "toolslip: "
        line = err.strip()
        if code != 2 or "\n" in line or not line.startswith(command) or said not in line or "Traceback" in err:
            wrong.append(f"{argv}: exit {code}, stderr {err!r}")
    assert wrong == [], "\n".join(wrong)
    assert not any(tmp_path.iterdir())  # nothing ran: no journal was created  # noqa: ASYNC240


def test_the_readme_names_every_exit_code() -> None:
    from toolslip import cli

    readme = (ROOT / "README.md").read_text()
    said = " ".join(readme.split("Exit codes: ", 1)[1].split("`toolslip --version`", 1)[0].split())
    codes = {getattr(cli, name) for name in dir(cli) if name.startswith("EXIT_")}
    assert codes == {0, 1, 2, 3, 4, 130, 141}
    assert [code for code in sorted(codes) if f"{code} " not in said] == [], said  # 130 was missing


def test_help_and_version() -> None:
    from toolslip import __version__

    done = subprocess.run([sys.executable, "-m", "toolslip.cli", "--version"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == f"toolslip {__version__}\n"
    helped = subprocess.run([sys.executable, "-m", "toolslip.cli", "run", "--help"], capture_output=True, text=True)
    options = helped.stdout.split("options:", 1)[1]
    model_help = " ".join(options.split("--model MODEL", 1)[1].split("--max-steps")[0].split())
    assert "scripted" in model_help and "openai:gpt-4o-mini" in model_help


def test_a_base_url_without_a_scheme_is_one_sentence(tmp_path: Path) -> None:
    for variable, model in (("OPENAI_BASE_URL", "openai:gpt-4o-mini"), ("ANTHROPIC_BASE_URL", "anthropic:claude-x")):
        done = subprocess.run(
            [sys.executable, "-m", "toolslip.cli", "run", WEATHER, "hi", "--model", model, "--no-journal"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**ENV, variable: "127.0.0.1:8765/v1", "TOOLSLIP_HOME": str(tmp_path)},
        )
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert done.stderr == (
            f"toolslip run: {variable} '127.0.0.1:8765/v1' is not an http(s) URL with a host; write it with its "
            "scheme, e.g. http://127.0.0.1:8765/v1\n"
        )


def test_run_prints_plurals_right(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", str(ROOT / WEATHER), "Weather in Beijing?", "--model", "scripted:weather", "--no-journal"]
    assert main(argv) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("[stop: completed after 2 model calls, 1 tool call; ")


def test_options_may_come_between_the_tools_file_and_the_question(capsys: pytest.CaptureFixture[str]) -> None:
    # as a newcomer writes it: plain argparse took the question for a second tools file, "unrecognized"
    argv = ["run", str(ROOT / WEATHER), "--model", "scripted:weather", "--no-journal", "Weather in Beijing?"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "28" in out and out.splitlines()[-1].startswith("[stop: completed after 2 model calls, 1 tool call; ")


BIG_TOOLS = '''
from toolslip import tool
from toolslip.providers import register_provider
from toolslip.testing import FunctionModel, call


@tool(effects="read_only")
def store(blob: str) -> str:
    """Store a blob and say how long it was."""
    return f"stored {len(blob)} characters"


def model(request):
    if request.messages[-1].role == "tool":
        return "Stored."
    return call("store", blob="x" * 10_000_000)


register_provider("big", lambda name, **options: FunctionModel(model, name="big"))
'''


@pytest.mark.slow  # a real process moves 10 MB through the loop, the screen and the journal: ~2 s idle
def test_a_10_mb_argument_is_cut_on_screen_and_kept_in_the_journal(tmp_path: Path) -> None:
    tools = tmp_path / "big.py"
    tools.write_text(BIG_TOOLS)
    done = subprocess.run(
        [sys.executable, "-m", "toolslip.cli", "run", str(tools), "Store it.", "--model", "big"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**ENV, "TOOLSLIP_HOME": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) < 2_000
    assert "store(blob='xxxxxxxx" in done.stdout and "… (10,000,000 characters)" in done.stdout
    assert "stored 10000000 characters" in done.stdout
    journal = next(tmp_path.rglob("*.sqlite"))
    with sqlite3.connect(journal) as db:
        kept = max(len(row[0]) for row in db.execute("SELECT data FROM entries"))
    assert kept > 10_000_000  # the journal has the whole argument


def test_tables_align_cjk_names_by_display_width(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = tmp_path / "tools.py"
    tools.write_text(
        "from toolslip import tool\n\n"
        "@tool(name='查询天气', effects='read_only')\ndef weather(city: str) -> str:\n"
        '    """Get the weather of a city."""\n    return "sunny"\n\n'
        "@tool(effects='read_only')\ndef fx(amount: float) -> str:\n"
        '    """Convert USD to CNY."""\n    return "7"\n'
    )
    assert main(["tools", str(tools)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("    ")]  # not details
    starts = {width(line[: line.index("read_only" if "read_only" in line else "EFFECTS")]) for line in lines[:3]}
    assert len(starts) == 1, lines  # the EFFECTS column starts at the same screen column on every row
    assert lines[-1].startswith("total: 2 tools, ")


CJK_SUITE = """
from toolslip import tool
from toolslip.evals import Suite, Task
from toolslip.testing import call, reply


@tool(effects="read_only")
def fx(amount: float) -> str:
    \"\"\"Convert USD to CNY.\"\"\"
    return f"{amount * 7.18:.1f} CNY"


def check(o):
    assert "CNY" in o.text


REFERENCE = [call("fx", amount=320), reply("2297.6 CNY")]


suite = Suite(name="cjk", tasks=[
    Task(id="换汇", prompt="320 USD?", tools=[fx], check=check, reference=REFERENCE),
    Task(id="trip-total", prompt="320 USD?", tools=[fx], check=check, reference=REFERENCE),
])
"""


def test_eval_table_reads_at_k_30_and_aligns_cjk_tasks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite_cjk.py"
    suite.write_text(CJK_SUITE)
    assert main(["eval", str(suite), "--model", "flaky:0.7", "-k", "30"]) == 0
    table = capsys.readouterr().out
    lines = table.splitlines()
    assert max(width(line) for line in lines) <= 80, table
    ks = [int(v) for line in lines if line.startswith("  k ") for v in line.split()[1:]]
    assert ks == list(range(1, 31))
    hats = [float(v) for line in lines if line.startswith("  pass^k ") for v in line.split()[1:]]
    assert len(hats) == 30 and hats == sorted(hats, reverse=True)  # pass^k never rises with k
    rows = [line for line in lines if line.lstrip().startswith(("换汇", "trip-total"))]
    assert len(rows) == 2 and len({width(r[: r.index(" 30 ")]) for r in rows}) == 1, rows  # n at one column


def _failing(status: int) -> FunctionModel:
    def answer(request: Request) -> str:
        raise ProviderError("Incorrect API key provided: sk-wrong.", status=status)

    return FunctionModel(answer)


async def test_eval_exits_1_and_names_the_first_error_when_no_trial_could_be_scored(tmp_path: Path) -> None:
    async with serve(_failing(401)) as base:
        code, out, err = await _run(
            ["eval", SUITE, "--model", f"openai:gpt-4o-mini@{base}/v1", "-k", "1", "--retries", "0"],
            asyncio.Semaphore(1),
            tmp_path,
        )
    assert code == 1, err
    assert "provider errors (not scored) 5" in out
    assert err.startswith("toolslip eval: 5 trials of openai:gpt-4o-mini@")
    assert "could not be scored (provider errors after the retries); the first (task weather-beijing, trial 0): " in err
    assert "answered 401 Unauthorized: Incorrect API key provided: sk-wrong." in err and "Traceback" not in err


def test_fail_under_gates_on_pass_hat_k(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", SUITE, "--model", "reference", "-k", "2", "--fail-under", "1"]) == 0
    assert main(["eval", SUITE, "--model", "flaky:0.5", "-k", "4", "--fail-under", "0.9"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("toolslip eval: pass^4 of flaky:0.5 is 0.") and err.rstrip().endswith(
        "under --fail-under 0.9"
    )
    assert main(["eval", SUITE, "--model", "flaky:0.5", "-k", "4", "--fail-under", "0"]) == 0


def test_the_report_explains_pass_hat_k_and_pass_at_k(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "r.html"
    assert main(["eval", SUITE, "--model", "flaky:0.6", "-k", "3", "--report", str(report)]) == 0
    page = report.read_text(encoding="utf-8")
    numbers_end = page.index("</table>", page.index('<table class="num">'))
    meaning = page[numbers_end : page.index("</p>", numbers_end)]
    assert "<b>pass^k</b> is the chance that <i>k</i> runs of the same task <i>all</i> succeed" in meaning
    assert "<b>pass@k</b> is the chance that <i>at least one</i> of <i>k</i> runs succeeds" in meaning


def test_a_time_no_clock_can_show_is_said_so_not_a_traceback() -> None:
    # a journal page damaged on disk gave a run a start time past time_t: `toolslip runs` raised OverflowError
    from toolslip.core._display import local_time

    assert local_time(0.0, "%Y") in ("1970", "1969")
    assert local_time(1e300) == local_time(float("nan")) == "(no readable time)"
