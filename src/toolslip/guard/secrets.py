"""Secrets stay in: their values never reach the model, and never leave through a tool's arguments.

:class:`SecretGuard` is a hook with two halves:

* **after a tool runs**, every configured secret in its result is replaced by a handle such as
  ``[secret:AWS_SECRET_KEY]``, also when the tool returned it reversed, base64-, hex- or URL-encoded. A
  tool that needs the real value takes the handle and calls :meth:`SecretGuard.reveal`.
* **before a tool runs**, its arguments are searched for the values of configured secrets and of the
  environment variables the tools can read (``env``); a hit blocks the call with an error result that
  names the secret, never its value. This holds in every context, tainted or not.

What is caught, for a value ``v`` anywhere inside any string argument: ``v`` as is or in another case;
reversed; with separators between its characters (``s-e-c-r-e-t``, values of 8+ characters); hex;
base64 and URL-safe base64 at any offset in a larger encoded text; percent-encoding of any of these; ROT13.
What is not caught: a value split over several arguments or calls, a partial value, a value the model
re-encodes in some other way (translation, spelling it out in words, a cipher, compression), and values
shorter than ``min_length`` (8 for environment values: ``"1"`` or ``"true"`` would block everything).
"""

from __future__ import annotations

import base64
import codecs
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, unquote_plus

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..core.errors import ConfigError
from ..core.messages import Text, ToolCall, ToolResult
from ..durable.decisions import refusal
from .policy import record_decision

__all__ = ["SecretGuard", "encoded_forms"]

_HANDLE = re.compile(r"\[secret:([A-Za-z0-9_.\-]+)\]")
_MIN_ENCODED = 8
"""Shorter needles (encodings of very short values) would match ordinary text."""


def _b64_cores(value: bytes) -> Iterator[str]:
    """The part of ``value``'s base64 that is the same wherever it sits inside a longer text.

    Base64 encodes 3 bytes as 4 characters, so a value at offset 0, 1 or 2 of a block encodes three
    ways; the characters that mix in neighbouring bytes are cut off at both ends.
    """
    n = len(value)
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value).decode()
        start, end = -(-8 * offset // 6), 8 * (offset + n) // 6
        core = encoded[start:end]
        yield core
        yield core.replace("+", "-").replace("/", "_")


def encoded_forms(value: str) -> dict[str, str]:
    """``{needle: how it is encoded}`` for one value: the strings whose presence means it leaked."""
    raw = value.encode()
    forms: dict[str, str] = {}
    for needle, how in [
        (value, "as is"),
        (value[::-1], "reversed"),
        (raw.hex(), "hex"),
        (raw.hex().upper(), "hex"),
        (codecs.encode(value, "rot13"), "ROT13"),
        *((core, "base64") for core in _b64_cores(raw)),
        (quote(value, safe=""), "URL-encoded"),
    ]:
        forms.setdefault(needle, how)
    return {needle: how for needle, how in forms.items() if needle == value or len(needle) >= _MIN_ENCODED}


@dataclass(frozen=True, slots=True)
class _Guarded:
    name: str
    kind: str
    value: str
    forms: dict[str, str]
    folded: dict[str, str]
    """Case-insensitive needles (as is, reversed, hex): casefolded needle -> how."""
    bare: str
    """The value's letters and digits only, casefolded; empty when too short to search safely."""


def _alnum(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _guard(name: str, kind: str, value: str) -> _Guarded:
    forms = encoded_forms(value)
    folded = {n.casefold(): how for n, how in forms.items() if how in ("as is", "reversed", "hex")}
    bare = _alnum(value)
    return _Guarded(name, kind, value, forms, folded, bare if len(bare) >= _MIN_ENCODED else "")


class SecretGuard(Hook):
    """Redact secrets from tool results and block calls whose arguments carry a guarded value.

    Args:
        secrets: ``{name: value}`` of values that must neither reach the model nor leave.
        env: the environment the tools can read; its values (of ``min_length`` or more characters)
            must not leave through tool arguments.
        exempt: tools allowed to receive guarded values (local tools that need a credential).
    """

    name = "secret-guard"

    def __init__(
        self,
        secrets: Mapping[str, str] | None = None,
        *,
        env: Mapping[str, str] | None = None,
        min_length: int = 8,
        exempt: Collection[str] = (),
    ) -> None:
        self._secrets = dict(secrets or {})
        for name, value in self._secrets.items():
            if len(value) < 4:
                raise ConfigError(
                    f"secret {name!r} is shorter than 4 characters: it cannot be told apart from ordinary text"
                )
        guarded = [_guard(n, "secret", v) for n, v in self._secrets.items()]
        known = set(self._secrets.values())
        guarded += [
            _guard(n, "environment variable", v)
            for n, v in (env or {}).items()
            if len(v) >= min_length and v not in known
        ]
        self._guarded = guarded
        # Longest needle first, so a form that contains another is replaced whole.
        self._redactions = [
            (needle, f"[secret:{item.name}]")
            for item in guarded
            if item.kind == "secret"
            for needle in sorted(item.forms, key=len, reverse=True)
        ]
        self._exempt = frozenset(exempt)

    # --- results: secrets become handles ----------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with every configured secret, in every encoded form, replaced by its handle."""
        for needle, handle in self._redactions:
            text = text.replace(needle, handle)
        return text

    def reveal(self, text: str) -> str:
        """``text`` with handles replaced by the real values: for a tool that needs the credential."""
        return _HANDLE.sub(lambda m: self._secrets.get(m.group(1), m.group(0)), text)

    async def after_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None, result: ToolResult) -> ToolResult:
        content = result.content
        if isinstance(content, str):
            redacted: str | tuple[Any, ...] = self.redact(content)
        else:
            redacted = tuple(Text(text=self.redact(p.text)) if isinstance(p, Text) else p for p in content)
        if redacted == content:
            return result
        return replace(result, content=redacted)

    # --- arguments: guarded values never leave ----------------------------------------------------

    def find(self, arguments: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        """``(kind, name, how it was encoded)`` of every guarded value in the arguments."""
        hits: dict[str, tuple[str, str, str]] = {}
        for text in _strings(arguments):
            decoded = unquote_plus(text)
            views = [(text, "")] + ([(decoded, ", URL-encoded")] if decoded != text else [])
            for item in self._guarded:
                for view, wrapping in views:
                    if item.name not in hits and (hit := self._match(item, view)):
                        hits[item.name] = (item.kind, item.name, hit + wrapping)
        return list(hits.values())

    @staticmethod
    def _match(item: _Guarded, view: str) -> str | None:
        for needle, how in item.forms.items():
            if needle in view:
                return how
        folded = view.casefold()
        for needle, how in item.folded.items():
            if needle in folded:
                return f"{how}, another case"
        if item.bare and item.bare in _alnum(view):
            return "with separators"
        return None

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if call.arguments is None or call.name in self._exempt:
            return None
        hits = self.find(call.arguments)
        if not hits:
            return None
        reason = "the arguments carry the value of " + ", ".join(f"{kind} {name} ({how})" for kind, name, how in hits)
        record_decision(ctx, call, gate=self.name, decision="denied", reason=reason)
        text = (
            f"not run: {reason}. Secret values never leave through tool arguments; "
            "mention a secret by its name, never by its value."
        )
        return refusal(call, text, "denied by the secret guard")


def _strings(value: object) -> Iterator[str]:
    """Every string and number inside the arguments, keys included."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif value is not None:
        yield str(value)
