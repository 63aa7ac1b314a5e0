"""A fleet driver in a process of its own, so that the chaos test can SIGKILL it mid-batch and start another.

``python _fleet_driver.py URL ADDRESS POLICY_JSON RUN_ID...`` joins the Ray cluster at ADDRESS, runs the
batch with test_fleet's agent and the given policy, and prints each outcome as one JSON line as it is known
(the runs the journal already shows over come first, with ``from_journal``).
"""

from __future__ import annotations

import json
import sys

import _fleet_tools
from toolslip.fleet import Fleet, Policy


def main(url: str, address: str, policy: str, run_ids: list[str]) -> None:
    with Fleet(
        url,
        _fleet_tools.make_agent,
        address=address,
        concurrency=6,
        policy=Policy(**json.loads(policy)),
        rerun_interrupted=lambda request: False,
    ) as fleet:
        for outcome in fleet.run((run_id, f"pay {run_id}") for run_id in run_ids):
            print(json.dumps(outcome.to_dict(), default=str), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
