"""Writing HTML that stays inert: every value is escaped unless it is already :class:`Html` we wrote.

A tool's output is whatever a web page, a file or an attacker put there: ``<script>``, a ``javascript:``
link, megabytes of text, bytes that are not UTF-8. Nothing of it is ever markup here: :func:`html` escapes
every value it is given, long values are folded (the first part shown, the whole one a click away as
``text/plain``), and text is made valid UTF-8 before it is sent. Links are only ever built from our own
paths, never from a value.
"""

from __future__ import annotations

import html as _html
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["FOLD", "Html", "clean", "fold", "html", "join", "mask"]

FOLD = 2000
"""Characters of a value shown before it is folded; the stored value is never cut."""


class Html(str):
    """Markup we wrote ourselves (every value in it already escaped)."""

    __slots__ = ()

    def __add__(self, other: str) -> str:
        """Markup joined to markup stays markup; joined to plain text, it is plain text (escaped when used)."""
        joined = str.__add__(self, other)
        return Html(joined) if isinstance(other, Html) else joined


_KEYS = re.compile(
    r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}|hf_[A-Za-z0-9]{30,})"
)
"""What provider keys look like (OpenAI, Anthropic, AWS, GitHub, Slack, Google, Hugging Face)."""


def mask(text: str) -> str:
    """``text`` with anything shaped like a provider key shown as its first four characters and ``…``.

    The secret guard's handles are plain text and stay as they are: the real value is never looked up here.
    """
    return _KEYS.sub(lambda m: m.group(0)[:4] + "…(masked)", text)


def clean(text: str) -> str:
    """``text`` as valid UTF-8 (lone surrogates, from bytes that were not UTF-8, become U+FFFD), keys masked."""
    return mask(text.encode("utf-8", "replace").decode("utf-8"))


def _escaped(value: Any) -> str:
    if isinstance(value, Html):
        return value
    return _html.escape(clean(value if isinstance(value, str) else str(value)), quote=True)


def html(template: str, *values: Any) -> Html:
    """``template`` with each ``{}`` filled by a value, escaped unless it is :class:`Html`."""
    return Html(template.format(*(_escaped(v) for v in values)))


def join(parts: Iterable[Html]) -> Html:
    return Html("".join(parts))


def fold(text: str, *, more: str | None = None, limit: int = FOLD) -> Html:
    """A long value folded: its first ``limit`` characters, and how much more there is (``more``: a link to it).

    Short values are shown whole, in a ``<pre>`` (escaped: a value is text, never markup).
    """
    if len(text) <= limit:
        return html("<pre>{}</pre>", text)
    rest = f"{len(text) - limit:,} more characters"
    link = html(' <a href="{}" rel="noreferrer">show all</a>', more) if more else Html("")
    return html(
        '<details class="fold"><summary>{} ({}){}</summary><pre>{}</pre></details>',
        text[:200].replace("\n", " ") + "…",
        rest,
        link,
        text[:limit],
    )
