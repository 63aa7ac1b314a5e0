"""Side effects exactly once: dedup, approval, the run journal and its stores, the lease, replay.

Owns what makes a world-changing call happen once: ``dedup`` (a repeated action answered with its first
result), ``serial`` (one side effect per turn at the provider), ``repeats`` (the repeated-call guard),
``decisions`` and ``approval`` (a person says yes or no, or the run pauses), ``replay`` (a recorded run
answered from its record), ``journal`` with ``journal_store`` (every response and execution recorded before
and after it happens) and ``lease`` (one process executes a run at a time).

All of it is hooks on the loop: may import ``core``, ``formats``, ``providers`` and ``agent``; nothing
below imports it.
"""
