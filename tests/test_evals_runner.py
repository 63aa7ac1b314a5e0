"""The runner end to end on the example suite: p^k, retries, resume and extend, the progress bar."""

import asyncio
import io
import json
from math import comb, sqrt
from pathlib import Path

import pytest

from toolslip import ConfigError
from toolslip.evals import (
    FlakyModel,
    Progress,
    ReferenceModel,
    evaluate,
    load_suite,
    read_results,
    summarize,
    summary_table,
)
from toolslip.evals.about import read_runs

SUITE = load_suite(str(Path(__file__).parents[1] / "examples" / "suite_expenses.py"))


def _binomial(n: int, c: int, p: float) -> float:
    return comb(n, c) * p**c * (1 - p) ** (n - c)


def _standard_error(tasks: int, n: int, p: float, k: int) -> float:
    """Exact sampling error of the suite's pass^k when every trial succeeds independently with p."""
    second_moment = sum(_binomial(n, c, p) * (comb(c, k) / comb(n, k)) ** 2 for c in range(n + 1))
    return sqrt((second_moment - p ** (2 * k)) / tasks)


@pytest.mark.parametrize("p", [0.9, 0.6])
def test_pass_hat_k_matches_p_to_the_k_within_sampling_error(p: float) -> None:
    n = 60
    records = asyncio.run(evaluate(SUITE, [FlakyModel(p)], k=n, concurrency=16, seed=7))
    (summary,) = summarize(records)
    assert [t.n for t in summary.tasks] == [n] * len(SUITE.tasks)
    for k in (1, 2, 4, 8):
        error = _standard_error(len(SUITE.tasks), n, p, k)
        assert abs(summary.pass_hat(k) - p**k) <= 4 * error, (k, summary.pass_hat(k), p**k, error)
    # the failures the flaky model plays come back as the three reasons
    assert set(summary.reasons()) == {"wrong_state", "step_limit", "tool_errors"}


def test_same_seeds_give_the_same_results() -> None:
    def outcomes(seed: int) -> list[tuple[str, int, str, int]]:
        records = asyncio.run(evaluate(SUITE, [FlakyModel(0.5)], k=6, concurrency=4, seed=seed))
        return sorted((r.task, r.trial, r.reason, r.steps) for r in records)

    assert outcomes(3) == outcomes(3)
    assert outcomes(3) != outcomes(4)


def test_provider_errors_are_retried_and_never_scored() -> None:
    model = FlakyModel(1.0, provider_error_rate=0.3)
    records = asyncio.run(evaluate(SUITE, [model], k=6, retries=5))
    (summary,) = summarize(records)
    unscored = [r for r in records if not r.scored]
    assert unscored and {r.reason for r in unscored} == {"provider_error"}
    assert [t.n for t in summary.tasks] == [6] * len(SUITE.tasks)  # every trial was eventually scored
    assert summary.pass_hat(6) == 1.0  # outages did not count as failures
    assert summary.reasons() == {"provider_error": len(unscored)}
    retried = {(r.task, r.trial) for r in unscored}
    assert all(any(s.attempt > 0 for s in records if (s.task, s.trial) == key and s.scored) for key in retried)

    no_retry = asyncio.run(evaluate(SUITE, [model], k=6, retries=0))
    (summary,) = summarize(no_retry)
    assert sum(t.n for t in summary.tasks) == len(SUITE.tasks) * 6 - sum(not r.scored for r in no_retry)


def test_crashes_are_retried_then_reported_never_counted(tmp_path: Path) -> None:
    file = tmp_path / "crashy.py"
    file.write_text(
        "from toolslip.evals import Task\n"
        "from toolslip.testing import reply\n"
        "ok = Task(id='ok', prompt='q', check=lambda o: True, reference=[reply('fine')])\n"
        "bad = Task(id='bad', prompt='q', check=lambda o: 1 / 0, reference=[reply('fine')])\n"
    )
    suite = load_suite(str(file))
    records = asyncio.run(evaluate(suite, [ReferenceModel()], k=2, retries=1))
    crashed = [r for r in records if r.task == "bad"]
    assert [(r.trial, r.attempt, r.reason) for r in sorted(crashed, key=lambda r: (r.trial, r.attempt))] == [
        (0, 0, "crash"), (0, 1, "crash"), (1, 0, "crash"), (1, 1, "crash")
    ]  # fmt: skip
    assert "ZeroDivisionError" in crashed[0].detail
    (summary,) = summarize(records)
    assert [(t.task, t.n) for t in summary.tasks] == [("ok", 2), ("bad", 0)]
    assert summary.pass_hat(2) == 1.0  # the crashed task is left out of the score, not counted as passing
    table = summary_table([summary])
    assert "4 scored trials" not in table and "2 scored trials, 4 unscored (2 never completed)" in table
    assert "crashed (not scored) 4" in table
    assert "  bad    0   0       -  " in table


def test_resume_runs_only_what_is_missing_and_extends(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    model = FlakyModel(0.7, provider_error_rate=0.2)
    first = asyncio.run(evaluate(SUITE, [model], k=3, out=out, retries=0))
    assert len(out.read_text().splitlines()) == 1 + len(first)  # the run line, then one line per trial
    with pytest.raises(ConfigError, match="already exists; pass --resume"):
        asyncio.run(evaluate(SUITE, [model], k=3, out=out))
    extended = asyncio.run(evaluate(SUITE, [model], k=5, out=out, resume=True, retries=3))
    lines = [line for line in out.read_text().splitlines() if not line.startswith('{"type": "run"')]
    assert lines[: len(first)] == [json.dumps(r.to_dict(), ensure_ascii=False) for r in first]  # kept as is
    assert [run["k"] for run in read_runs(out)] == [3, 5]  # each run says how it was made
    assert read_results(out) == extended
    (summary,) = summarize(extended)
    assert [t.n for t in summary.tasks] == [5] * len(SUITE.tasks)
    # trial i keeps its seed: the scored trials match a fresh run that went straight to k=5
    fresh = asyncio.run(evaluate(SUITE, [model], k=5, retries=3))
    key = lambda r: (r.task, r.trial, r.attempt, r.reason, r.seed)  # noqa: E731
    assert sorted(map(key, fresh)) == sorted(map(key, extended))


def test_bad_results_file_and_arguments(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "trial", "suite": "expenses"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl:1: not a toolslip results line"):
        read_results(bad)
    with pytest.raises(ConfigError, match="k and concurrency must be at least 1"):
        asyncio.run(evaluate(SUITE, [ReferenceModel()], k=0))
    with pytest.raises(ConfigError, match="two models share a name"):
        asyncio.run(evaluate(SUITE, [ReferenceModel(), ReferenceModel()], k=1))
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"type": "trial", "suite": "else", "model": "m", "task": "t", "trial": 0}) + "\n")
    with pytest.raises(ConfigError, match="holds results of suite 'else', not 'expenses'"):
        asyncio.run(evaluate(SUITE, [ReferenceModel()], k=1, out=other, resume=True))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_only() -> None:
    terminal, pipe = _Terminal(), io.StringIO()
    records = asyncio.run(evaluate(SUITE, [FlakyModel(0.5)], k=4, progress=Progress(20, terminal)))
    frames = terminal.getvalue().split("\r")[1:]
    assert len(frames) == len(records) == 20
    passed = sum(r.success for r in records)
    assert frames[-1].startswith(f"[{'#' * 24}] 20/20 trials  pass^1 {passed / 20:.3f}  ETA 0:00")
    assert "[" + "#" * 12 + "." * 12 + "] 10/20" in frames[9]
    asyncio.run(evaluate(SUITE, [FlakyModel(0.5)], k=1, progress=Progress(5, pipe)))
    assert pipe.getvalue() == ""


def test_journaled_trials_are_runs_tagged_with_their_trial_and_verdict_even_when_retried(journal_at: str) -> None:
    """Each attempt is a run of its own; the verdict comes just before the finish, so the run still reads as over."""
    from toolslip.durable.stores import open_store
    from toolslip.evals.journaled import EvalJournal, trial_run_id

    where = EvalJournal(journal_at, "eval-test")  # a SQLite file, and a PostgreSQL journal
    model = FlakyModel(0.5, provider_error_rate=0.3)
    records = asyncio.run(evaluate(SUITE, [model], k=3, seed=3, retries=5, journal=where))
    store = open_store(where.location, read_only=True)
    status = {r.run_id: r.status for r in store.runs(1000)}
    assert set(status) == {trial_run_id("eval-test", r) for r in records}  # retries included, none shared
    for record in records:
        entries = store.entries(trial_run_id("eval-test", record))
        tag = entries[0].data["meta"]["eval"]
        assert (tag["report"], tag["task"], tag["trial"], tag["attempt"]) == (
            "eval-test", record.task, record.trial, record.attempt
        )  # fmt: skip
        verdicts = [e.data for e in entries if e.kind == "eval"]
        if record.reason == "provider_error":
            assert verdicts == [] and status[entries[0].run_id] == "failed"
        else:
            assert verdicts == [{"reward": record.reward, "reason": record.reason, "detail": record.detail}]
            assert [e.kind for e in entries[-2:]] == ["eval", "finish"] and status[entries[0].run_id] != "interrupted"
    assert any(r.reason == "provider_error" for r in records) and any(r.success for r in records)
    store.close()
