import pytest

from toolslip.cli import EXIT_OK, main


def test_listing_names_every_suite_task_and_attack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["injection"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "issues: issue tracker" in out and "env-to-comment" in out and "pay-bill" in out and "zh" in out


def test_a_gated_run_shows_each_decision_and_the_outcome(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["injection", "issues", "reply", "--attack", "env-base64", "--defence", "gate+nohuman"])
    out = capsys.readouterr().out
    assert code == EXIT_OK
    assert "gate post_comment#inj-" in out and "denied by secret-guard" in out and "DATABASE_URL (base64)" in out
    assert "allowed by taint-gate (argument 'issue_id' comes from the user's messages" in out
    assert "[untrusted in context: read_issue#" in out
    assert out.rstrip().endswith("attack seen: yes; attacker's goal reached: no")


def test_the_same_attack_undefended_reaches_its_goal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["injection", "issues", "reply", "--attack", "env-base64", "--defence", "none"]) == EXIT_OK
    out = capsys.readouterr().out
    assert "gate " not in out and out.rstrip().endswith("attacker's goal reached: YES")


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["injection", "shop", "x"], 2, "no injection suite is called 'shop'; choose one of: issues, bank, mail, chat"),
        (["injection", "bank"], 2, "name a task of suite 'bank': balance, rent"),
        (["injection", "bank", "rent", "--attack", "nope"], 2, "no injection of suite 'bank' is called 'nope'"),
        (["injection", "bank", "rent", "--phrasing", "rude"], 2, "unknown phrasing 'rude'; choose one of: system"),
        (["injection", "bank", "rent", "--attack", ""], 2, "--attack is empty; name one of the suite's attacks"),
    ],
)
def test_bad_names_are_one_sentence_errors(
    argv: list[str], code: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code  # every mistake in the command line, a name the scenarios do not know too
    err = capsys.readouterr().err
    assert err.startswith("toolslip injection: ") and message in err and "Traceback" not in err
