"""One fleet worker for test_fleet.py: three transfers a run, each a row in the bank's ledger table.

    python _fleet_worker.py URL HOST TTL

The ledger is a PostgreSQL table in the same server as the journal, written by the tool itself on its own
connection: the outside world the journal must not repeat. Each execution writes one row with a token of
its own; when the server restarts under it, the tool writes again only if its row is not there, so the
ledger holds exactly one row per execution and a second row for a reference means the call ran twice.
"""

from __future__ import annotations

import sys
import time
import uuid

import psycopg

from toolslip import Agent, Toolbox, tool
from toolslip.dedup import Dedup
from toolslip.fleet import work
from toolslip.journal import Journal
from toolslip.messages import Request
from toolslip.testing import FunctionModel, Turn, call

url, host, ttl = sys.argv[1], sys.argv[2], float(sys.argv[3])
bank: psycopg.Connection[tuple[object, ...]] | None = None


@tool(effects="side_effect")
def transfer(reference: str) -> str:
    """Move money; the bank records it once per execution."""
    global bank
    token = uuid.uuid4()
    time.sleep(0.03)
    for _ in range(200):  # the bank retries while its server restarts, never writing one execution twice
        try:
            bank = bank if bank is not None and not bank.closed else psycopg.connect(url, autocommit=True)
            if bank.execute("SELECT 1 FROM ledger WHERE token = %s", (token,)).fetchone() is None:
                bank.execute(
                    "INSERT INTO ledger (reference, host, token) VALUES (%s, %s, %s)", (reference, host, token)
                )
            break
        except psycopg.OperationalError:
            bank = None
            time.sleep(0.05)
    else:
        raise RuntimeError("the bank stayed away")
    time.sleep(0.03)
    return f"sent {reference}"


def script(request: Request) -> Turn:
    run = request.messages[0].text.split()[-1]
    turns: list[Turn] = [call("transfer", reference=f"{run}-{leg}") for leg in "abc"]
    return [*turns, "all paid"][sum(m.role == "assistant" for m in request.messages)]


def agent(journal: Journal) -> Agent:
    return Agent(model=FunctionModel(script), tools=Toolbox([transfer]), max_steps=6, hooks=journal.wrap(Dedup()))


print("ready", flush=True)
work(url, agent, host=host, ttl=ttl, rerun_interrupted=lambda request: False, log=lambda line: None)
