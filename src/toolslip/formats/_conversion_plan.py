"""What one call of ``toolslip.convert`` carries: the source, the target, the loss policy and the losses.

The plan is passed to every check of the conversion (``conversion``, ``_conversion_settings``,
``_conversion_parts``), which ask it whether source and target are the same or share a body, and report
through it (:meth:`Plan.note`, :meth:`Plan.cannot`). It sits below them so that none of them imports
another to reach it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ..core.errors import CannotExpress
from ._wire import CHAT_FAMILY

__all__ = ["URL_MODEL", "Loss", "OnLoss", "Plan"]

OnLoss: TypeAlias = Literal["error", "drop", "mark"]

URL_MODEL = frozenset({"gemini", "bedrock", "ollama"})
"""The native formats of Gemini, Bedrock and Ollama (the first two name the model in the URL)."""


@dataclass(frozen=True, slots=True)
class Loss:
    """One thing the target format could not say as the source did."""

    path: str
    """Where, in the neutral transcript's numbering (``messages[2].parts[1]``, ``tools[0]``, ``settings.stop``)."""
    what: str
    handled: str
    """``"marked"`` (standard spelling, e.g. the ``Error:`` prefix), ``"dropped"``, ``"replaced by text"``..."""

    def __str__(self) -> str:
        return f"{self.path}: {self.what} ({self.handled})"


@dataclass
class Plan:
    """One conversion under way: what it converts between, its policy, and what was lost so far."""

    source: str
    target: str
    on_loss: OnLoss
    split_calls: bool
    lost: list[Loss] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return self.source == self.target

    @property
    def family(self) -> bool:
        """Source and target share a body (Chat and legacy functions)."""
        return {self.source, self.target} <= CHAT_FAMILY

    def note(self, path: str, what: str, handled: str = "marked") -> None:
        self.lost.append(Loss(path, what, handled))

    def cannot(self, path: str, what: str, marked: str = "dropped", dropped: str = "dropped") -> bool:
        """Report an unexpressible thing; True when it should be kept as a mark (policy ``mark``).

        ``marked`` and ``dropped`` say what happens to it under each policy.
        """
        if self.on_loss == "error":
            raise CannotExpress(
                f"{what} cannot be expressed in {self.target}; convert with on_loss='drop' (--on-loss drop) "
                "to leave it out, or 'mark' to leave a visible trace",
                path,
            )
        keep = self.on_loss == "mark" and marked != "dropped"
        self.note(path, what, marked if keep else dropped)
        return keep
