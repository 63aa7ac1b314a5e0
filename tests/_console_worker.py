"""A run in its own process for the console tests: it pauses on a held call and waits for the inbox.

``python _console_worker.py JOURNAL RUN_ID PROMPT``: runs the console fixture's agent journaled with an
``Approval()`` that has no approver; on a pause it polls the journal until every held call is decided and
resumes (:meth:`Journal.wait_and_resume <toolslip.Journal.wait_and_resume>`); prints the result as one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "console"))

from agent import fetch, model, pay, read_page

from toolslip import Agent, Approval, Dedup, Journal, Toolbox


async def main(location: str, run_id: str, prompt: str) -> None:
    journal = Journal(location)
    agent = Agent(
        model=model, tools=Toolbox([pay, read_page, fetch]), hooks=journal.wrap(Dedup(), Approval()), max_steps=30
    )
    result = await agent.arun(prompt, run_id=run_id)
    result = await journal.wait_and_resume(agent, result, poll=0.1, give_up=120)
    print(json.dumps({"stop_reason": result.stop_reason, "output": result.output}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
