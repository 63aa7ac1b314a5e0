"""The driver: a batch of runs submitted to a Ray cluster, outcomes streamed back as runs finish.

Ray places each run (a task of :func:`~toolslip.fleet.task.execute_run`) on a node with a free CPU, retries
it when its worker or node dies or when the attempt asks for it (``max_retries``, ``retry_exceptions``),
and scales with the cluster. The driver only keeps at most ``concurrency`` runs in flight and reports
each as Ray hands it back (``ray.wait``). It holds no state of its own: a driver killed and started again
with the same runs reads the ones the journal shows over and submits the rest, which resume from the
journal where the killed driver's workers left them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..agent.loop import Agent
from ..core.errors import ConfigError, InvalidValue
from ..durable.decisions import Approver
from ..durable.journal import Journal
from ..durable.stores import is_postgres_url
from .status import latest_entries
from .task import AgentRuns, Job, Policy, Retry, Work, execute_run, open_journal, outcome_of

__all__ = ["Fleet", "Outcome", "ray_connection", "unreachable_journal"]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """How one run of a batch ended, as a line of the outcomes file."""

    run_id: str
    outcome: str
    """The finish entry's stop reason (``completed``, ``paused``, ``max_steps``...), or ``failed``."""
    output: Any = None
    error: str = ""
    failed_attempts: int = 0
    """Attempts that ended in the run's own failure (a worker that died is not one)."""
    resumes: int = 0
    """How often the run was resumed from the journal (after a dead worker, node or driver)."""
    not_rerun: int = 0
    """Side-effecting calls cut off by a death and not run again (the policy's word); they may have happened."""
    refused: int = 0
    seconds: float = 0.0
    """From submission to the outcome, in this driver."""
    from_journal: bool = False
    """Already over when this driver started (a driver before it saw it through)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if k != "extra"}
        return data | self.extra


def unreachable_journal(url: str, address: str | None, nodes: Sequence[Mapping[str, Any]] = (), here: str = "") -> str:
    """Why some of the cluster's workers could not open the journal at ``url``, or ``""`` if they all can.

    A SQLite journal is a file on this machine: it serves a cluster whose every node is on this machine
    (a local Ray, or several raylets started here), and no other. Ray says where its nodes are: ``nodes``
    (``ray.nodes()``) and ``here`` (this driver's node address), once joined. Before joining, only a Ray
    Client address (``ray://``) already tells: the driver then runs on the cluster's head, not here.
    ``toolslip fleet submit``, ``toolslip eval --ray`` and a :class:`Fleet` built in code keep this one rule.
    """
    if is_postgres_url(url):
        return ""
    if address and address.startswith("ray://"):
        where = f"the Ray Client at {address} runs the driver on the cluster's head"
    else:
        alive = {str(n.get("NodeManagerAddress")) for n in nodes if n.get("Alive")}
        away = sorted(alive - {here})
        if not away:
            return ""
        where = f"the cluster has nodes on other machines ({', '.join(away)})"
    return (
        f"the journal {url} is a SQLite file on this machine, and {where}: pass --journal postgresql://... "
        "that every node reaches (a SQLite file serves a Ray whose nodes are all on this machine)"
    )


def ray_connection(address: str | None, *, num_cpus: int | None = None) -> Callable[[], None]:
    """Join the Ray cluster at ``address`` (``None``: the one this process already joined, else a new local
    one); returns what disconnects again (nothing, if this process was already connected)."""
    try:
        import ray
    except ImportError:
        raise ConfigError("the fleet runs on Ray: pip install 'toolslip[ray]'") from None
    if ray.is_initialized():
        return lambda: None
    options: dict[str, Any] = {"log_to_driver": False, "configure_logging": False}
    try:
        if address in (None, "", "local"):
            ray.init(num_cpus=num_cpus, include_dashboard=False, **options)
        else:
            ray.init(address=address, **options)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise ConfigError(f"cannot join the Ray cluster at {address}: {str(exc).splitlines()[0]}") from None
    return ray.shutdown


class Fleet:
    """Runs submitted to a Ray cluster, each executed by a Ray worker against the journal at ``url``.

    The journal is a ``postgresql://`` URL, or a SQLite file when every node is on this machine (a local
    Ray). ``make_agent(journal)`` builds the agent a worker runs (with ``hooks=journal.wrap(...)``); it is
    pickled to the workers, so it is a module-level function or a picklable object. A :class:`Work` in its
    place runs something else per run (an eval's trials, :mod:`toolslip.evals.on_fleet`). ``rerun_interrupted``: the
    policy for side effects cut off by a death, as ``toolslip resume --rerun-interrupted``. ``address``:
    the cluster (``ray://...``, ``auto``), or ``None`` for the one this process has joined, else a local one.
    """

    def __init__(
        self,
        url: str,
        make_agent: Callable[[Journal], Agent] | Work,
        *,
        address: str | None = None,
        concurrency: int = 8,
        policy: Policy | None = None,
        rerun_interrupted: Approver | None = None,
        num_cpus: float = 1.0,
        runtime_env: dict[str, Any] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, not {concurrency}")
        policy = policy or Policy()
        if why := unreachable_journal(url, address):
            raise InvalidValue(why)
        self.store = open_journal(url)  # opens (and checks) the journal before anything is submitted
        work = make_agent if isinstance(make_agent, Work) else AgentRuns(make_agent)
        self.job = Job(url=url, work=work, rerun_interrupted=rerun_interrupted, policy=policy)
        self.concurrency = concurrency
        self._disconnect = ray_connection(address)
        import ray

        # asked of Ray once joined (Ray leaves these two untyped)
        nodes, here = ray.nodes(), ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        if why := unreachable_journal(url, address, nodes, here):
            self.close()
            raise InvalidValue(why)

        self._options: dict[str, Any] = {
            "num_cpus": num_cpus,
            "max_retries": self.job.policy.max_retries,
            "retry_exceptions": [Retry],
        }
        if runtime_env is not None:
            self._options["runtime_env"] = runtime_env
        self._remote = ray.remote(execute_run)
        self._job = ray.put(self.job)  # once: every attempt reads the job from the object store

    def run(self, runs: Iterable[tuple[str, Any]]) -> Iterator[Outcome]:
        """Run each ``(run_id, prompt)``; yields every run's :class:`Outcome` as it is known, in that order.

        Runs the journal already shows over come first, without being submitted.
        """
        import ray

        todo = list(runs)
        over = self._over([run_id for run_id, _ in todo])
        queue = [(run_id, payload) for run_id, payload in todo if run_id not in over]
        yield from over.values()
        queue.reverse()
        pending: dict[Any, tuple[str, float]] = {}
        while queue or pending:
            while queue and len(pending) < self.concurrency:
                run_id, payload = queue.pop()
                pending[self._submit(run_id, payload)] = (run_id, time.monotonic())
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in ready:
                run_id, submitted = pending.pop(ref)
                yield self._outcome(ref, run_id, time.monotonic() - submitted)

    async def outcome(self, run_id: str, payload: Any) -> Outcome:
        """One run, awaited: for a caller that keeps its own bound on runs in flight (the eval runner)."""
        import ray

        over = self._over([run_id]).get(run_id)
        if over is not None:
            return over
        submitted = time.monotonic()
        ref = self._submit(run_id, payload)
        with contextlib.suppress(ray.exceptions.RayError):  # settled by _outcome, as in a batch
            await ref
        return self._outcome(ref, run_id, time.monotonic() - submitted)

    def _over(self, run_ids: list[str]) -> dict[str, Outcome]:
        """The outcomes of the runs the journal shows over, by run id."""
        entries = latest_entries(self.store, run_ids)
        over = {run_id: outcome_of(run_id, entries.get(run_id, ()), self.job.policy.attempts) for run_id in run_ids}
        return {run_id: Outcome(**done, from_journal=True) for run_id, done in over.items() if done is not None}

    def _submit(self, run_id: str, payload: Any) -> Any:
        return self._remote.options(**self._options, name=f"toolslip run {run_id}").remote(self._job, run_id, payload)

    def _outcome(self, ref: Any, run_id: str, seconds: float) -> Outcome:
        """The outcome of a finished ``ref``."""
        import ray

        try:
            data: dict[str, Any] = ray.get(ref)
        except ray.exceptions.RayError as exc:  # Ray's attempts ran out: the run's failures, or dead workers
            cause = exc.cause if isinstance(exc, ray.exceptions.RayTaskError) else exc
            lines = str(cause).strip().splitlines() or [type(cause).__name__]
            return Outcome(run_id=run_id, outcome="failed", error=lines[-1], seconds=seconds)
        return Outcome(**data, seconds=seconds)

    def close(self) -> None:
        self.store.close()
        self._disconnect()

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
