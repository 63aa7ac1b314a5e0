"""The agent the fleet tests run on Ray workers: three transfers a run, each a row in a bank's ledger table.

The ledger is a PostgreSQL table in the same server as the journal, outside it, written by the tool on
its own connection: the outside world the journal must not repeat. Each execution writes one row with a
token of its own (a retry after a dropped connection writes it only if its row is not there), so a second
row for a reference means the call ran twice. Prompts are ``pay RUN_ID``; a run whose id ends in ``-fail``
has a model that always errors. The transfer named by ``$TOOLSLIP_HANG_IN`` hangs after writing its row,
so that a test can kill the node inside that tool.
"""

from __future__ import annotations

import os
import time
import uuid

import psycopg

from toolslip import Agent, Dedup, RunContext, Toolbox, tool
from toolslip.core.errors import ProviderError
from toolslip.core.messages import Request
from toolslip.durable.journal import Journal
from toolslip.testing import FunctionModel, Turn, call

LEDGER = """CREATE TABLE IF NOT EXISTS ledger (
    reference text NOT NULL, host text NOT NULL, token uuid NOT NULL, key text NOT NULL DEFAULT '')"""


def bank_transfer(url: str, reference: str, key: str = "") -> None:
    """One execution: one ledger row, written exactly once even if the server restarts meanwhile."""
    token = uuid.uuid4()
    for _ in range(400):
        try:
            with psycopg.connect(url, autocommit=True, connect_timeout=3) as bank:
                if bank.execute("SELECT 1 FROM ledger WHERE token = %s", (token,)).fetchone() is None:
                    bank.execute(
                        "INSERT INTO ledger (reference, host, token, key) VALUES (%s, %s, %s, %s)",
                        (reference, f"pid-{os.getpid()}", token, key),
                    )
            return
        except psycopg.OperationalError:
            time.sleep(0.05)
    raise RuntimeError("the bank stayed away")


def script(request: Request) -> Turn:
    run = request.messages[0].text.split()[-1]
    if run.endswith("-fail"):
        raise ProviderError(f"the model is down for {run}")
    turns: list[Turn] = [call("transfer", reference=f"{run}-{leg}") for leg in "abc"]
    return [*turns, "all paid"][sum(m.role == "assistant" for m in request.messages)]


def make_agent(journal: Journal) -> Agent:
    url = journal.store.url  # type: ignore[attr-defined]
    hang_in = os.environ.get("TOOLSLIP_HANG_IN", "")

    @tool(effects="side_effect")
    def transfer(ctx: RunContext, reference: str) -> str:
        """Move money; the bank records it once per execution, with the call's idempotency key."""
        time.sleep(0.05)
        bank_transfer(url, reference, ctx.idempotency_key)
        if reference == hang_in:
            time.sleep(120)  # the test kills this node now
        time.sleep(0.05)
        return f"sent {reference}"

    return Agent(model=FunctionModel(script), tools=Toolbox([transfer]), max_steps=6, hooks=journal.wrap(Dedup()))
