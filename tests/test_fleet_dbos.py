"""toolslip inside a DBOS step: a workflow killed inside its tool and recovered by DBOS pays once.

DBOS promises a step at least once: a workflow whose process died is recovered and the unfinished step
runs again from its start. The same application (``_dbos_app.py``) is run twice on one real PostgreSQL
server (DBOS's system database and the journal and the ledger side by side): started, SIGKILLed inside
the transfer after the bank wrote its row, then launched again so that DBOS recovers the workflow. With
the step going through ``call_once`` the ledger has one row (the journal knows the call was cut off and
the policy does not run it again); with a plain DBOS step around the same tool it has two.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from conftest import fresh_postgres
from toolslip.testing.postgres import PostgresServer

pytest.importorskip("dbos")

APP = Path(__file__).with_name("_dbos_app.py")


def settle_killed_and_recovered(url: str, system_url: str, mode: str) -> tuple[str, list[tuple[str, str]]]:
    """Start the workflow, SIGKILL it inside the tool, recover it: the recovered result and the ledger rows."""
    workflow_id = f"settle-{mode}"
    argv = [sys.executable, str(APP), url, system_url, mode, workflow_id]
    with subprocess.Popen([*argv, "start"], stdout=subprocess.PIPE, text=True) as started:
        try:
            assert started.stdout is not None
            assert started.stdout.readline().strip() == "inside the tool"
        finally:
            started.kill()  # SIGKILL, inside the tool (or wherever it got to)
    recovered = subprocess.run([*argv, "recover"], capture_output=True, text=True, timeout=120)
    assert recovered.returncode == 0, recovered.stderr[-2000:]
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT reference, key FROM ledger WHERE reference = %s", (f"invoice-{mode}",)).fetchall()
    return recovered.stdout.strip().splitlines()[-1], rows


@pytest.mark.slow
def test_a_dbos_step_through_call_once_pays_once_and_a_plain_step_twice(postgres: PostgresServer) -> None:
    url = fresh_postgres(postgres)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE ledger (reference text NOT NULL, key text NOT NULL, token uuid NOT NULL)")
        conn.execute("DROP DATABASE IF EXISTS dbos_system WITH (FORCE)")
    system_url = postgres.url("dbos_system")

    answer, rows = settle_killed_and_recovered(url, system_url, "toolslip")
    assert len(rows) == 1, f"the journaled step paid {len(rows)} times: {rows}"
    assert len(rows[0][1]) == 32  # the idempotency key the tool received
    assert "not run again" in answer, answer  # the model-facing text says it may have happened

    answer, rows = settle_killed_and_recovered(url, system_url, "plain")
    assert answer == "paid invoice-plain"
    assert len(rows) == 2, f"a plain DBOS step was expected to pay twice after the kill, not {len(rows)} times"
