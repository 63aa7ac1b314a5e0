"""Exactly once inside another engine's step: DBOS, Temporal, Prefect retry a step; the journal keeps its effects.

Durable-execution engines promise a step *at least* once: a step whose process died is run again from
its start (DBOS recovers the workflow, Temporal retries the activity). A step that runs an agent would
then ask the model again and run its tools again, a payment included. Inside such a step, run the agent
(or one tool call) through :func:`run_once` / :func:`call_once`, keyed by the engine's workflow id and step
id: the journal run ``WORKFLOW/STEP`` is started the first time, and every later attempt resumes it —
a finished call returns its recorded result, a side-effecting call that was cut off runs again only if the
journal's ``rerun_interrupted`` policy says so, and a run already over returns its recorded answer with
no model or tool call. An attempt that starts while the dead one's lease still binds waits for it to
expire (judged by the database's clock).

DBOS::

    @DBOS.step()
    def pay(invoice: str) -> str:
        wf = DBOS.workflow_id
        return call_once(journal, transfer, {"invoice": invoice}, workflow_id=wf, step_id="pay")

Temporal (the activity's ids survive its retries)::

    @activity.defn
    async def pay(invoice: str) -> str:
        info = activity.info()
        return await acall_once(journal, transfer, {"invoice": invoice},
                                workflow_id=info.workflow_id, step_id=info.activity_id)

The tool reads ``ctx.idempotency_key`` (the same for every attempt) and hands it to the outside system.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..agent.loop import Agent
from ..agent.tools import Tool, Toolbox
from ..core.errors import RunBusy, ToolslipError
from ..core.messages import Message, ModelResponse, Request, ToolCall, Usage
from ..core.result import RunResult
from ..durable.dedup import Dedup
from ..durable.journal import Journal

__all__ = ["StepStopped", "acall_once", "arun_once", "call_once", "run_once", "step_run_id"]


class StepStopped(ToolslipError):
    """A one-call step did not complete: it waits for a decision on a call an earlier attempt cut off."""


def step_run_id(workflow_id: str, step_id: str | int) -> str:
    """The journal run of one step of one workflow: the same on every attempt of the step."""
    return f"{workflow_id}/{step_id}"


async def arun_once(
    journal: Journal,
    agent: Agent,
    prompt: str | Sequence[Message],
    *,
    workflow_id: str,
    step_id: str | int,
    lease_wait: float = 70.0,
    deps: Any = None,
) -> RunResult:
    """Run ``agent`` on ``prompt`` as the step's journal run: started once, resumed by every later attempt.

    ``agent`` carries ``journal.wrap(...)`` as its hooks. ``lease_wait``: seconds to wait for a killed
    attempt's lease to expire (the journal's ttl, 30 s by default, plus margin). ``deps`` reach the run's
    tools on every attempt (the journal never holds them, so each attempt passes its own).
    """
    run_id = step_run_id(workflow_id, step_id)
    await _lease(journal, run_id, lease_wait)
    try:
        entries = journal.store.entries(run_id)
        if any(e.kind == "start" for e in entries):  # an earlier attempt began it; a finished one just replays
            return await journal.resume(agent, run_id, deps=deps)
        return await agent.arun(prompt, run_id=run_id, deps=deps)
    finally:
        journal.release(run_id)


def run_once(
    journal: Journal,
    agent: Agent,
    prompt: str | Sequence[Message],
    *,
    workflow_id: str,
    step_id: str | int,
    lease_wait: float = 70.0,
    deps: Any = None,
) -> RunResult:
    """:func:`arun_once` for a synchronous step."""
    return asyncio.run(
        arun_once(journal, agent, prompt, workflow_id=workflow_id, step_id=step_id, lease_wait=lease_wait, deps=deps)
    )


async def acall_once(
    journal: Journal,
    tool: Tool,
    arguments: Mapping[str, Any],
    *,
    workflow_id: str,
    step_id: str | int,
    lease_wait: float = 70.0,
) -> str:
    """Run one tool call as the step's journal run and return its result's text (an error result's too, as
    the model would see it); :class:`StepStopped` if the run paused on a cut-off call with no policy.

    The call is journaled like any call of a run (``tool_start`` before it, ``tool_end`` after), so an
    attempt after a death returns the recorded result, or puts a cut-off side effect to the journal's
    ``rerun_interrupted`` policy (declined: the text says it was not run again and may have happened).
    """
    agent = Agent(model=_OneCall(tool.name, dict(arguments)), tools=Toolbox([tool]), hooks=journal.wrap(Dedup()))
    result = await arun_once(
        journal,
        agent,
        f"call {tool.name}",
        workflow_id=workflow_id,
        step_id=step_id,
        lease_wait=lease_wait,
    )
    if result.stop_reason != "completed":
        raise StepStopped(
            f"step {step_run_id(workflow_id, step_id)} stopped ({result.stop_reason}): its call was cut off by an "
            "earlier attempt and the journal has no rerun_interrupted policy; decide it with `toolslip resume`"
        )
    return str(result.output)


def call_once(
    journal: Journal,
    tool: Tool,
    arguments: Mapping[str, Any],
    *,
    workflow_id: str,
    step_id: str | int,
    lease_wait: float = 70.0,
) -> str:
    """:func:`acall_once` for a synchronous step."""
    return asyncio.run(
        acall_once(journal, tool, arguments, workflow_id=workflow_id, step_id=step_id, lease_wait=lease_wait)
    )


class _OneCall:
    """The model of a one-call run: it asks for the call (always with the same id, so its idempotency key is
    the same on every attempt), then answers with the call's result."""

    name = "toolslip:one-call"

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.call = ToolCall(id="call_once", name=tool, arguments=arguments)

    async def complete(self, request: Request) -> ModelResponse:
        results = [r for m in request.messages for r in m.tool_results if r.call_id == self.call.id]
        none = Usage(input_tokens=0, output_tokens=0)
        if results:
            return ModelResponse(message=Message.assistant(results[-1].text), stop_reason="end_turn", usage=none)
        return ModelResponse(message=Message.assistant(calls=[self.call]), stop_reason="tool_use", usage=none)


async def _lease(journal: Journal, run_id: str, wait: float) -> None:
    """The step's lease, waiting while a killed attempt's lease has not expired yet."""
    deadline = time.monotonic() + wait
    while True:
        try:
            journal.lease(run_id)
            return
        except RunBusy:
            if time.monotonic() > deadline:
                raise
        await asyncio.sleep(0.25)
