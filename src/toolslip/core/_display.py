"""Text for a terminal: display width (a CJK character takes two columns), padding, and plurals.

``f"{name:<20}"`` pads by code points, so a table with ``查询天气`` in it goes out of line by one column per
character; these pad by the columns a terminal draws.
"""

from __future__ import annotations

import difflib
import time
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

__all__ = ["cut", "did_you_mean", "dollars", "local_time", "pad", "plural", "width"]


def dollars(amount: float) -> str:
    """``$1.25``, or for a fraction of a cent its first significant digits: ``$0.00063``."""
    return f"${amount:.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.2g}".replace("e-0", "e-")


def local_time(at: float, layout: str = "%Y-%m-%d %H:%M:%S") -> str:
    """``at`` (seconds since the epoch) as local time; ``(no readable time)`` for a value no clock can show.

    A journal page damaged on disk gave a run a start time past the platform's ``time_t``, and ``toolslip
    runs`` ended in a traceback (``OverflowError``) instead of listing the run and its damage."""
    try:
        return time.strftime(layout, time.localtime(at))
    except (OverflowError, OSError, ValueError):
        return "(no readable time)"


@lru_cache(maxsize=4096)
def width(text: str) -> int:
    """Columns ``text`` takes on a terminal: 2 for wide and full-width characters, 0 for combining marks."""
    return sum(_columns(c) for c in text)


def _columns(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def pad(text: str, columns: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``columns`` display columns (``>`` pads on the left)."""
    fill = " " * max(0, columns - width(text))
    return fill + text if align == ">" else text + fill


def cut(text: str, columns: int, mark: str = "…") -> str:
    """``text`` if it fits in ``columns``, else its start and ``mark`` in exactly that many columns or fewer."""
    if width(text) <= columns:
        return text
    room, out = columns - width(mark), []
    for char in text:
        room -= _columns(char)
        if room < 0:
            break
        out.append(char)
    return "".join(out) + mark


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 tool``, ``2 tools``; ``many`` for irregular plurals (``1 retry``, ``2 retries``)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean local?)`` for a typo of one of ``known``, else ``""``: a hint to append to a sentence."""
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""
