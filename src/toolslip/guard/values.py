"""Values that matter in free text: where an answer or an argument can send the user.

URLs, email addresses, IBANs and phone numbers, and names of places or people written as capitalised words:
the injection gate's rules look for them in arguments (:mod:`toolslip.guard.rules`), and the gate marks the
ones in a final answer that only untrusted output gave (:mod:`toolslip.guard.policy`).
"""

from __future__ import annotations

import re

__all__ = ["NAME", "URL", "find_values", "value_kind"]

URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)


_KINDS: dict[str, re.Pattern[str]] = {
    "URL": URL,
    "email address": re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "IBAN": re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b"),
    "phone number": re.compile(r"(?<![\w+])\+?\d[\d ()./-]{7,}\d(?!\w)"),
}


NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -](?:of|de|du|la|the|[A-Z][a-z]+))*[ -][A-Z][a-z]+\b")
"""A name of two or more capitalised words ("Riverside View Hotel"): what persuasion without a link names."""


def value_kind(value: str) -> str | None:
    """``"IBAN"``, ``"email address"``, ``"URL"`` or ``"phone number"`` when all of ``value`` is one."""
    for kind, pattern in _KINDS.items():
        if (match := pattern.search(value)) is not None and match.group(0).strip() == value.strip():
            return kind
    return None


def find_values(text: str, kind: str | None = None) -> list[str]:
    """The URLs, email addresses, IBANs and phone numbers in ``text`` (or those of one ``kind``)."""
    spans = [
        (m.start(), m.start() + len(v), v)
        for name, pattern in _KINDS.items()
        if kind is None or kind == name
        for m in pattern.finditer(text)
        if (v := m.group(0).rstrip(".,;:!?"))
    ]
    # A run of digits inside an IBAN is no phone number of its own: keep only the outermost values.
    return [v for a, b, v in spans if not any(c <= a and b <= d and (c, d) != (a, b) for c, d, _ in spans)]
