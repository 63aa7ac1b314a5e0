"""Two runs side by side: model A vs B, or before vs after a tool-description change."""

from __future__ import annotations

from ..core._display import pad, width
from .summary import ModelSummary

__all__ = ["compare_table"]


def compare_table(a: ModelSummary, b: ModelSummary) -> str:
    """pass^k for every k both runs reach, then pass^1 per task, with B - A in the last column.

    Columns are as wide as the model labels and task names are on a terminal (CJK counts double).
    """
    column = max([11, *(width(t.task) for t in [*a.tasks, *b.tasks])])
    wa, wb = max(12, width(a.model)), max(12, width(b.model))

    def row(label: str, va: float, vb: float) -> str:
        return f"{pad(label, column)}  {va:{wa}.3f}  {vb:{wb}.3f}  {vb - va:+7.3f}"

    lines = [f"{'':<{column}}  {pad(a.model, wa, '>')}  {pad(b.model, wb, '>')}  {'B - A':>7}"]
    lines += [row(f"pass^{k}", a.pass_hat(k), b.pass_hat(k)) for k in range(1, min(a.k_max, b.k_max) + 1)]
    b_tasks = {t.task: t for t in b.tasks}
    lines.append(f"{'task pass^1':<{column}}")
    for task in a.tasks:
        other = b_tasks.get(task.task)
        if other is None or not task.n or not other.n:
            lines.append(f"{pad(task.task, column)}  (not in both runs)")
        else:
            lines.append(row(task.task, task.c / task.n, other.c / other.n))
    lines += [f"{pad(t.task, column)}  (not in both runs)" for t in b.tasks if t.task not in {x.task for x in a.tasks}]
    return "\n".join(lines)
