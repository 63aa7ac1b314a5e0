"""Two runs side by side: model A vs B, or before vs after a tool-description change."""

from __future__ import annotations

from .summary import ModelSummary

__all__ = ["compare_table"]


def compare_table(a: ModelSummary, b: ModelSummary) -> str:
    """pass^k for every k both runs reach, then pass^1 per task, with B - A in the last column."""
    width = max([len(a.model), len(b.model), 10, *(len(t.task) for t in [*a.tasks, *b.tasks])])
    lines = [f"{'':<{width}}  {a.model[:12]:>12}  {b.model[:12]:>12}  {'B - A':>7}"]
    for k in range(1, min(a.k_max, b.k_max) + 1):
        va, vb = a.pass_hat(k), b.pass_hat(k)
        lines.append(f"{f'pass^{k}':<{width}}  {va:12.3f}  {vb:12.3f}  {vb - va:+7.3f}")
    b_tasks = {t.task: t for t in b.tasks}
    lines.append(f"{'task pass^1':<{width}}")
    for task in a.tasks:
        other = b_tasks.get(task.task)
        if other is None or not task.n or not other.n:
            lines.append(f"{task.task:<{width}}  (not in both runs)")
            continue
        va, vb = task.c / task.n, other.c / other.n
        lines.append(f"{task.task:<{width}}  {va:12.3f}  {vb:12.3f}  {vb - va:+7.3f}")
    lines += [f"{t.task:<{width}}  (not in both runs)" for t in b.tasks if t.task not in {x.task for x in a.tasks}]
    return "\n".join(lines)
