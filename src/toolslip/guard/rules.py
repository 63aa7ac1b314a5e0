"""The injection gate's rules: plain Python over a call's arguments and where their values came from.

A rule takes a :class:`Check` (the call, its tool, the provenance of the text in the context, the run) and
returns a :class:`Verdict`: allow, ask, or deny, with the reason shown to the approver and kept in the
audit. The builders here cover what real tools need ("the IBAN must be one the user typed, or the one in
the bill the user named"; "delete only what the user asked to delete"); any function of a ``Check`` is a
rule too. :class:`~toolslip.guard.policy.TaintGate` applies them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..agent.hooks import RunContext
from ..agent.tools import Tool
from ..code import INNER_CALLS, INNER_RESULTS
from ..core.errors import ConfigError
from ..core.messages import Message, ToolCall
from .provenance import Provenance, Source, TextProvenance, normalise
from .values import NAME, URL, find_values, value_kind

__all__ = [
    "Action",
    "Check",
    "Rule",
    "Verdict",
    "allow",
    "any_of",
    "argument_values",
    "ask",
    "deny",
    "describe_call",
    "from_source",
    "intent",
    "links_from",
    "names_from",
    "no_data_from_tools",
    "one_of",
    "require",
    "requested",
    "shorten",
]

Action: TypeAlias = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """A rule's answer about one call, with the reason shown to the human and the model."""

    action: Action
    reason: str


def allow(reason: str) -> Verdict:
    return Verdict(action="allow", reason=reason)


def ask(reason: str) -> Verdict:
    return Verdict(action="ask", reason=reason)


def deny(reason: str) -> Verdict:
    return Verdict(action="deny", reason=reason)


@dataclass(frozen=True, slots=True, kw_only=True)
class Check:
    """Everything a rule may look at: the call, the tool, where values came from, and the run."""

    call: ToolCall
    tool: Tool
    provenance: Provenance
    ctx: RunContext

    @property
    def arguments(self) -> Mapping[str, Any]:
        return self.call.arguments or {}

    def sources(self, value: object) -> frozenset[Source]:
        return self.provenance.sources(value)

    def user_texts(self) -> list[str]:
        """What the user (and the system prompt) said, one text per message."""
        return [m.text for m in self.ctx.messages if m.role in ("user", "system")]

    def call_of(self, source: Source) -> ToolCall | None:
        """The call whose result ``source`` is, to check which source it was."""
        if source.call_id is None:
            return None
        made = self.ctx.state.get(INNER_CALLS, ())  # a program's calls (code mode) are not in the transcript
        calls = [*(c for m in self.ctx.messages for c in m.tool_calls), *made]
        return next((c for c in calls if c.id == source.call_id), None)

    def result_of(self, source: Source) -> str:
        """The full text of the result ``source`` is part of ("" for messages)."""
        results = [*(r for m in self.ctx.messages for r in m.tool_results), *self.ctx.state.get(INNER_RESULTS, ())]
        found = (r for r in results if r.call_id == source.call_id)
        return next((r.text for r in found), "")


Rule: TypeAlias = Callable[[Check], Verdict]
"""``rule(check) -> Verdict``; any function of this shape is a rule."""

_VOUCHING: dict[str, frozenset[str]] = {"user": frozenset({"user"}), "trusted": frozenset({"user", "trusted"})}
_WHO = {"user": "the user's messages", "trusted": "the user's messages or a trusted tool result"}


def argument_values(value: object) -> list[object]:
    if isinstance(value, Mapping):
        return [v for item in value.values() for v in argument_values(item)]
    if isinstance(value, list | tuple):
        return [v for item in value for v in argument_values(item)]
    return [] if value is None else [value]


def _checked(origin: str) -> str:
    if origin not in _VOUCHING:
        raise ConfigError(f"origin must be 'user' or 'trusted', got {origin!r}")
    return origin


def _check_origin(name: str, values: Sequence[object], origin: str, provenance: Provenance) -> Verdict:
    """Allow when every value has a vouching source, naming them; ask about the first that has none."""
    vouching = _VOUCHING[origin]
    where: list[str] = []
    for value in values:
        found = provenance.sources(value)
        good = sorted(str(s) for s in found if s.origin in vouching)
        if not good:
            seen = sorted(str(s) for s in found if s.origin == "untrusted")
            in_untrusted = f"; it appears in untrusted {', '.join(seen)}" if seen else ""
            return ask(f"{name} {shorten(value)!r} does not come from {_WHO[origin]}{in_untrusted}")
        where.append(f"{shorten(value, 30)!r} from {good[0]}")
    return allow(f"{name} comes from {_WHO[origin]} ({'; '.join(where)})")


def _absent(argument: str, optional: bool) -> Verdict:
    """The verdict on a call that leaves ``argument`` out: nothing vouches for it, unless it may be left out."""
    if optional:
        return allow(f"argument {argument!r} is absent")
    return ask(f"argument {argument!r} is missing, so nothing vouches for it")


def require(argument: str, *, origin: Literal["user", "trusted"] = "user", optional: bool = False) -> Rule:
    """Every value of ``argument`` must appear in the user's messages (``origin="user"``) or there or
    in a trusted tool result (``"trusted"``); otherwise ask. A missing argument is vouched for by no one,
    so it asks too, unless ``optional`` (then its absence is allowed and said so)."""
    _checked(origin)

    def rule(check: Check) -> Verdict:
        values = argument_values(check.arguments.get(argument))
        if not values:
            return _absent(argument, optional)
        return _check_origin(f"argument {argument!r}", values, origin, check.provenance)

    rule.__name__ = f"require_{argument}_from_{origin}"
    return rule


def links_from(argument: str, *, origin: Literal["user", "trusted"] = "trusted") -> Rule:
    """Every URL inside the text of ``argument`` must come from ``origin``: free text may say anything,
    but it may not carry a link the attacker chose (phishing, a tracking pixel with data in its query)."""
    return _all_found_from(argument, origin, URL, "link")


def names_from(argument: str, *, origin: Literal["user", "trusted"] = "trusted") -> Rule:
    """Every name of capitalised words in the text of ``argument`` ("Riverside View Hotel") must come from
    ``origin``: a reminder may say anything, but not advertise a place only an outsider's text named."""
    return _all_found_from(argument, origin, NAME, "name")


def _all_found_from(argument: str, origin: Literal["user", "trusted"], pattern: re.Pattern[str], noun: str) -> Rule:
    """The rule behind :func:`links_from` and :func:`names_from`: each ``pattern`` match in ``argument``
    (trailing punctuation cut) must come from ``origin``."""
    _checked(origin)

    def rule(check: Check) -> Verdict:
        values = argument_values(check.arguments.get(argument))
        found = [m.rstrip(".,;:!?") for v in values for m in pattern.findall(str(v))]
        if not found:
            return allow(f"no {noun} in {argument!r}")
        return _check_origin(f"{noun} in {argument!r}", found, origin, check.provenance)

    rule.__name__ = f"{noun}s_in_{argument}_from_{origin}"
    return rule


def from_source(
    argument: str,
    tools: str | Sequence[str],
    *,
    origin: Literal["user", "trusted"] = "user",
    identity: Callable[[Check, ToolCall], bool] | None = None,
    unique: bool = True,
    optional: bool = False,
) -> Rule:
    """Delegation to a source the user named: every value of ``argument`` must come from ``origin``, or
    from the result of a call to one of ``tools`` that reads a source the user named ("pay the bill in
    bill-2026-11.txt": the IBAN may come from ``read_file(path="bill-2026-11.txt")``, not from another
    file or an email). Which source the call read is checked by ``identity(check, call)``; by default
    every argument of the call must come from the user. With ``unique``, the source must hold no other
    value of the same kind (IBAN, email address, URL, phone number, amount of money): a second IBAN in
    the bill is what an injection planted there looks like. A missing argument asks, unless ``optional``."""
    _checked(origin)
    names = frozenset([tools] if isinstance(tools, str) else tools)
    vouching = _VOUCHING[origin]

    def user_named(check: Check, called: ToolCall) -> bool:
        given = argument_values(called.arguments)
        return bool(given) and all(any(s.origin == "user" for s in check.sources(v)) for v in given)

    named_by = identity or user_named

    def named_source(check: Check, value: object) -> tuple[tuple[Source, ToolCall] | None, str]:
        """The source the user named that ``value`` comes from, with the call that read it; else why not."""
        problem = ""
        for source in sorted(check.sources(value), key=str):
            called = check.call_of(source)
            if called is None or called.name not in names or not named_by(check, called):
                continue
            kind, others = _others(value, check.result_of(source)) if unique else (None, set())
            if others:
                problem = f"{source} also holds another {kind} ({shorten(sorted(others)[0], 30)})"
                continue
            return (source, called), ""
        return None, problem

    def rule(check: Check) -> Verdict:
        values = argument_values(check.arguments.get(argument))
        if not values:
            return _absent(argument, optional)
        where: list[str] = []
        for value in values:
            vouched = sorted(str(s) for s in check.sources(value) if s.origin in vouching)
            if vouched:
                where.append(f"{shorten(value, 30)!r} from {vouched[0]}")
                continue
            found, problem = named_source(check, value)
            if found is None:
                tool_names = " or ".join(sorted(names))
                why = f": {problem}" if problem else f", nor from {tool_names} of a source the user named"
                return ask(f"argument {argument!r} {shorten(value)!r} does not come from {_WHO[origin]}{why}")
            source, called = found
            where.append(f"{shorten(value, 30)!r} from {source}, {describe_call(called)}, a source the user named")
        return allow(f"argument {argument!r} comes from {_WHO[origin]} or a source the user named ({'; '.join(where)})")

    rule.__name__ = f"{argument}_from_{'_'.join(sorted(names))}"
    return rule


_MONEY = re.compile(
    r"(\d[\d,]*(?:\.\d+)?)\s?(?:EUR|USD|GBP|CHF|€|\$|euros?|dollars?)|[€$£]\s?(\d[\d,]*(?:\.\d+)?)", re.I
)


def _others(value: object, text: str) -> tuple[str | None, set[str]]:
    """The kind of ``value`` and the other values of that kind in ``text``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        amounts = {float(next(g for g in m.groups() if g).replace(",", "")) for m in _MONEY.finditer(text)}
        return "amount", {f"{a:g}" for a in amounts if a != float(value)}
    kind = value_kind(str(value))
    if kind is None:
        return None, set()
    return kind, {normalise(v) for v in find_values(text, kind)} - {normalise(str(value))}


def intent(
    argument: str,
    verbs: Sequence[str],
    *,
    names: Callable[[Check, object], Sequence[str]] | None = None,
) -> Rule:
    """An object *and* an intent the user stated: a clause of the user's messages must say one of
    ``verbs`` ("delete", "remove", "删除") about the object the call acts on, named by a value of
    ``argument`` or one of ``names(check, value)`` (the file name for a file id, the sender of an
    email), or by "it" when the object is the first one its sentence names. "Summarise report.xlsx" does
    not let an injected ``delete_file("report.xlsx")`` through; "delete report.xlsx" does, and so does
    "issue 789 duplicates #456: comment on it and close it" for 789, not for 456."""
    wanted = [v.casefold() for v in verbs]

    def rule(check: Check) -> Verdict:
        values = argument_values(check.arguments.get(argument))
        if not values:
            return ask(f"argument {argument!r} is missing, so no object is named")
        stated: list[str] = []
        for value in values:
            aliases = [str(value), *(names(check, value) if names is not None else ())]
            found = next((f for text in check.user_texts() if (f := _stated(text, aliases, wanted))), None)
            if found is None:
                shown = aliases[-1] if len(aliases) > 1 else value
                return ask(f"no user message asks to {'/'.join(verbs)} {shorten(shown)!r}")
            stated.append(found)
        return allow(f"the user {'; '.join(stated)}")

    rule.__name__ = f"intent_{argument}"
    return rule


_CLAUSE = re.compile(r"[,;:，；：]|\s(?:and|then)\s|然后|并且")
_PRONOUN = re.compile(r"\b(?:it|them|this one)\b|它", re.I)
_OBJECT = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[\w.-]+\.[A-Za-z]{2,4}\b|\d+")


def _stated(text: str, aliases: Sequence[str], verbs: Sequence[str]) -> str | None:
    """How ``text`` asks for the act on the object, or None."""
    for sentence in re.split(r"(?<=[.!?。！？])\s+|\n+", text):
        first = _OBJECT.search(sentence)
        for clause in _CLAUSE.split(sentence):
            folded = clause.casefold()
            verb = next(
                (v for v in verbs if re.search(rf"(?<!\w){re.escape(v)}" if v.isascii() else re.escape(v), folded)),
                None,
            )
            if verb is None:
                continue
            provenance = TextProvenance.of([Message.user(clause)])
            alias = next((a for a in aliases if a and provenance.sources(a)), None)
            if alias is not None:
                return f"asked to {verb!r} {alias!r}"
            if first is not None and _PRONOUN.search(clause) and normalise(first.group(0)) in map(normalise, aliases):
                return f"asked to {verb!r} it, {first.group(0)!r} (the first object its sentence names)"
    return None


def one_of(argument: str, choices: Callable[[Check], Collection[str]], what: str) -> Rule:
    """Every value of ``argument`` must be one of ``choices(check)``, a set the system itself knows (the
    workspace's members, its channels): a destination that exists, whoever wrote its name where the
    model found it."""

    def rule(check: Check) -> Verdict:
        values = argument_values(check.arguments.get(argument))
        if not values:
            return _absent(argument, optional=False)
        known = set(choices(check))
        strangers = [v for v in values if str(v) not in known]
        if strangers:
            return ask(f"argument {argument!r} {shorten(strangers[0])!r} is not one of the {what}")
        return allow(f"argument {argument!r} is one of the {what}")

    rule.__name__ = f"{argument}_one_of_{what.replace(' ', '_')}"
    return rule


def no_data_from_tools(argument: str) -> Rule:
    """Free text the model writes (a transfer's subject, a search query) may not repeat what the tools
    returned, beyond the words the user said: no data smuggled out in it. Words of 4+ characters and
    runs with digits are compared, case-insensitively."""

    def rule(check: Check) -> Verdict:
        text = " ".join(str(v) for v in argument_values(check.arguments.get(argument)))
        said = {w for t in check.user_texts() for w in _DATA_TOKEN.findall(t.casefold())}
        for token in dict.fromkeys(_DATA_TOKEN.findall(text.casefold())):
            if token in said or (token.isalpha() and len(token) < 4):
                continue
            repeated = sorted(str(s) for s in check.sources(token) if s.origin != "user")
            if repeated:
                return ask(f"argument {argument!r} repeats {shorten(token, 30)!r} from {repeated[0]}")
        return allow(f"argument {argument!r} repeats no tool output")

    rule.__name__ = f"no_data_in_{argument}"
    return rule


_DATA_TOKEN = re.compile(r"[^\W_]+")


def any_of(*rules: Rule) -> Rule:
    """Allows when one of ``rules`` allows ("the subject comes from the bill, or repeats no tool output");
    otherwise the first one's verdict stands."""

    def rule(check: Check) -> Verdict:
        verdicts = [r(check) for r in rules]
        return next((v for v in verdicts if v.action == "allow"), verdicts[0])

    rule.__name__ = "any_of_" + "_".join(r.__name__ for r in rules)
    return rule


def requested(verbs: Sequence[str], what: str) -> Rule:
    """The user asked for this kind of act at all ("add it to my calendar"): some user message says one
    of ``verbs``. Weaker than :func:`intent` (no object), for acts whose object is new (an event)."""

    def rule(check: Check) -> Verdict:
        for text in check.user_texts():
            folded = text.casefold()
            if verb := next((v for v in verbs if v.casefold() in folded), None):
                return allow(f"the user asked for {what} ({verb!r})")
        return ask(f"the user did not ask for {what}")

    rule.__name__ = f"requested_{what.replace(' ', '_')}"
    return rule


def describe_call(call: ToolCall) -> str:
    arguments = ", ".join(f"{k}={shorten(v, 30)!r}" for k, v in (call.arguments or {}).items())
    return f"{call.name}({arguments})"


def shorten(value: object, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
