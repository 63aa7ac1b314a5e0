"""A DBOS application whose one step pays an invoice, for test_fleet_dbos.py.

    python _dbos_app.py JOURNAL_URL SYSTEM_DB_URL MODE WORKFLOW_ID start|recover

MODE ``toolslip``: the step runs the transfer through ``call_once`` (journaled, keyed by the workflow and
step ids, cut-off calls not run again); ``plain``: the step calls the tool itself, as a DBOS step would.
``start`` starts the workflow, and the transfer hangs after writing its ledger row (the test SIGKILLs
the process there); ``recover`` launches DBOS, which recovers the pending workflow, and prints its result.
"""

from __future__ import annotations

import sys
import time
import uuid

import psycopg
from dbos import DBOS, DBOSConfig, SetWorkflowID

from toolslip import RunContext, tool
from toolslip.durable.journal import Journal
from toolslip.fleet.once import call_once

url, system_url, mode, workflow_id, phase = sys.argv[1:6]
journal = Journal(url, approver=lambda request: False)  # a cut-off transfer is never run again


def pay_at_the_bank(invoice: str, key: str) -> str:
    """One execution: one ledger row; in the ``start`` phase the process is killed right after it."""
    with psycopg.connect(url, autocommit=True) as bank:
        bank.execute("INSERT INTO ledger (reference, key, token) VALUES (%s, %s, %s)", (invoice, key, uuid.uuid4()))
    if phase == "start":
        print("inside the tool", flush=True)
        time.sleep(600)  # killed here
    return f"paid {invoice}"


@tool(effects="side_effect")
def transfer(ctx: RunContext, invoice: str) -> str:
    """Pay an invoice, handing the bank the call's idempotency key."""
    return pay_at_the_bank(invoice, ctx.idempotency_key)


@DBOS.step()
def pay(invoice: str) -> str:
    if mode == "toolslip":
        return call_once(journal, transfer, {"invoice": invoice}, workflow_id=DBOS.workflow_id or "", step_id="pay")
    return pay_at_the_bank(invoice, "-")  # what a DBOS step around the tool does


@DBOS.workflow()
def settle(invoice: str) -> str:
    return pay(invoice)


config: DBOSConfig = {"name": "toolslip-dbos-test", "system_database_url": system_url, "application_version": "1"}
DBOS(config=config)
DBOS.launch()  # recovers this executor's pending workflows
if phase == "start":
    with SetWorkflowID(workflow_id):
        DBOS.start_workflow(settle, f"invoice-{mode}")
    time.sleep(600)
else:
    print(DBOS.retrieve_workflow(workflow_id).get_result(), flush=True)
    DBOS.destroy()
