"""Values that matter in free text: where an answer or an argument can send the user.

URLs, email addresses, IBANs and phone numbers, and names of places or people written as capitalised words:
the injection gate's rules look for them in arguments (:mod:`toolslip.guard.rules`), and the gate marks the
ones in a final answer that only untrusted output gave (:mod:`toolslip.guard.policy`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import phonenumbers

__all__ = ["NAME", "URL", "find_values", "value_kind"]

URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)


_KINDS: dict[str, re.Pattern[str]] = {
    "URL": URL,
    "email address": re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "IBAN": re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{4}){2,7}(?:[ ]?[A-Z0-9]{1,3})?\b"),
}
PHONE = "phone number"
_PHONE_SEARCHES = (
    (None, phonenumbers.Leniency.POSSIBLE),
    ("US", phonenumbers.Leniency.VALID),
)
"""How phone numbers are found, by libphonenumber's matcher (which knows dates, times and timestamps are no
numbers: "2024-05-21 18:00" is a date, not a number followed by ":00"): any number written with its country
code, even a made-up one an attacker writes (only its length must fit the country), and a national number
only in North American form and only when it is a real one (so a price like "1 234 567.89" is none)."""


def _phones(text: str) -> Iterator[tuple[int, int, str]]:
    for region, leniency in _PHONE_SEARCHES:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=leniency):
            yield match.start, match.end, match.raw_string


NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -](?:of|de|du|la|the|[A-Z][a-z]+))*[ -][A-Z][a-z]+\b")
"""A name of two or more capitalised words ("Riverside View Hotel"): what persuasion without a link names."""


def value_kind(value: str) -> str | None:
    """``"IBAN"``, ``"email address"``, ``"URL"`` or ``"phone number"`` when all of ``value`` is one."""
    for kind, pattern in _KINDS.items():
        if (match := pattern.search(value)) is not None and match.group(0).strip() == value.strip():
            return kind
    if any(raw.strip() == value.strip() for _, _, raw in _phones(value)):
        return PHONE
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
    if kind is None or kind == PHONE:
        spans += dict.fromkeys(_phones(text))  # both searches may find the same number
    # A run of digits inside an IBAN is no phone number of its own: keep only the outermost values.
    return [v for a, b, v in spans if not any(c <= a and b <= d and (c, d) != (a, b) for c, d, _ in spans)]
