"""A child process for the kill tests: a bank run that can SIGKILL itself at a chosen point.

    python _bank_run.py JOURNAL RUN_ID LEDGER KILL [code]

JOURNAL is a SQLite file or a ``postgresql://`` URL.
KILL is ``none``, ``pre:N`` / ``post:N`` (just before / after the N-th journal append of this process),
``midpre:N`` / ``mid:N`` (inside the N-th transfer this process runs, before / after it writes the ledger).
The ledger file is the bank's own record: one line per executed transfer, outside the process.
With ``code`` the agent is in code mode and the model pays everyone from one program (the same transfers).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolslip import Agent, Toolbox, tool
from toolslip.approval import ApprovalRequest, Decision
from toolslip.dedup import Dedup
from toolslip.durable.stores import LeasedStore, open_store
from toolslip.journal import Journal
from toolslip.messages import Request
from toolslip.testing import FunctionModel, Turn, call

journal_path, run_id, ledger_path, kill = sys.argv[1:5]
code_mode = sys.argv[5:] == ["code"]
kill_kind, _, kill_at = kill.partition(":")
ledger = Path(ledger_path)


def die_if(kind: str, count: int) -> None:
    if kill_kind == kind and int(kill_at) == count:
        os.kill(os.getpid(), signal.SIGKILL)


class KillingStore:
    """The journal's store (SQLite or PostgreSQL), dying just before or after a chosen append."""

    appends = 0

    def __init__(self, store: LeasedStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def append(
        self, run_id: str, kind: str, data: Mapping[str, Any], *, step: int = 0, key: str = "", **kw: Any
    ) -> None:
        self.appends += 1
        die_if("pre", self.appends)
        self.store.append(run_id, kind, data, step=step, key=key, **kw)
        die_if("post", self.appends)


transfers_run = 0


def record(reference: str) -> None:
    with ledger.open("a") as f:
        f.write(f"{reference}\n")


@tool(effects=["side_effect", "destructive"], idempotency_key=lambda a: str(a["reference"]))
async def transfer(to: str, amount: int, reference: str) -> str:
    """Move money to someone."""
    global transfers_run
    transfers_run += 1
    die_if("midpre", transfers_run)
    await asyncio.sleep(0.003)
    record(reference)
    die_if("mid", transfers_run)
    await asyncio.sleep(0.003)
    return f"sent {amount} to {to} ({reference})"


@tool(effects="read_only")
def balance() -> int:
    """The account balance."""
    return 1000 - len(ledger.read_text().split()) if ledger.exists() else 1000


SCRIPT: list[Turn] = [
    [
        call("transfer", to="alice", amount=10, reference="r1"),
        call("transfer", to="alice", amount=10, reference="r1"),
        call("balance"),
    ],
    call("transfer", to="bob", amount=5, reference="r2"),
    call("transfer", to="alice", amount=10, reference="r1"),  # the model retries a transfer that already went out
    [call("transfer", to="carol", amount=7, reference="r3"), call("balance")],
    "all paid",
]


PROGRAM = """import asyncio
transfer("alice", 10, "r1")
transfer(to="alice", amount=10, reference="r1")
start = balance()
for who, amount, reference in [("bob", 5, "r2"), ("alice", 10, "r1"), ("carol", 7, "r3")]:
    transfer(who, amount, reference)
a, b = await asyncio.gather(balance(), balance())
print("paid", start - a)
"""
CODE_SCRIPT: list[Turn] = [call("run_python", code=PROGRAM), "all paid"]


def script(request: Request) -> Turn:
    return (CODE_SCRIPT if code_mode else SCRIPT)[sum(m.role == "assistant" for m in request.messages)]


def reconcile(request: ApprovalRequest) -> Decision:
    """Asked only for a transfer that started before a crash: check the bank's own record."""
    with open(f"{ledger_path}.asked", "a") as f:
        f.write(f"{request.arguments['reference']}\n")
    done = ledger.exists() and str(request.arguments["reference"]) in ledger.read_text().split()
    return Decision(approved=not done, note="the bank shows it went through" if done else "")


async def main() -> int:
    journal = Journal(KillingStore(open_store(journal_path)), approver=reconcile)  # type: ignore[arg-type]
    agent = Agent(
        model=FunctionModel(script),
        tools=Toolbox([transfer, balance]),
        max_steps=10,
        hooks=journal.wrap(Dedup()),
        mode="code" if code_mode else "tool",
    )
    print("ready", flush=True)
    if journal.recording(run_id) is None:
        result = await agent.arun("pay alice, bob and carol", run_id=run_id)
    else:
        result = await journal.resume(agent, run_id)
    print(result.stop_reason, flush=True)
    return 0 if result.ok else 1


sys.exit(asyncio.run(main()))
