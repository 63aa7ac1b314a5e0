"""The injection gate: once untrusted text is in the context, calls that change the world need a reason.

A model cannot tell an instruction from data, so the harness assumes the worst: after a tool result that a
third party could have written (an issue, an email, a web page; every tool whose ``trusted_output`` is
False) has entered the conversation, the model may be working for the attacker. From then on every call
to a tool that is not ``read_only`` goes through :class:`TaintGate`, which either

* **allows** it, because every rule for that tool allows it (rules are plain Python over the arguments
  and their :mod:`provenance <toolslip.provenance>`: "the recipient must come from the user"), or
* **asks** an :class:`~toolslip.approval.Approver` (a human) with the reason, or
* **denies** it: a rule said so, or it needed asking and there is no one to ask.

A tool without rules always asks in a tainted context. Every decision is emitted as a
:class:`~toolslip.events.GateDecided` event and kept in ``ctx.state["audit"]``.

This is the boundary; the model-side mitigations in :mod:`toolslip.spotlight` are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .approval import GRANTED, ApprovalRequest, Approver, refusal
from .approval import ask as ask_approver
from .errors import ConfigError
from .events import GateDecided
from .hooks import Hook, RunContext, ToolAnswer
from .messages import ToolCall
from .provenance import Provenance, Source, TextProvenance
from .tools import Tool

__all__ = [
    "Rule",
    "TaintGate",
    "Verdict",
    "allow",
    "ask",
    "deny",
    "describe_decision",
    "links_from",
    "record_decision",
    "require",
    "text_provenance",
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


Rule: TypeAlias = Callable[[Mapping[str, Any], Provenance], Verdict]
"""``rule(arguments, provenance) -> Verdict``; any function of this shape is a rule."""

_VOUCHING: dict[str, frozenset[str]] = {"user": frozenset({"user"}), "trusted": frozenset({"user", "trusted"})}


def _values(value: object) -> list[object]:
    if isinstance(value, Mapping):
        return [v for item in value.values() for v in _values(item)]
    if isinstance(value, list | tuple):
        return [v for item in value for v in _values(item)]
    return [] if value is None else [value]


def _check_origin(name: str, values: Sequence[object], origin: str, provenance: Provenance) -> Verdict:
    vouching = _VOUCHING[origin]
    who = "the user's messages" if origin == "user" else "the user's messages or a trusted tool result"
    for value in values:
        found = provenance.sources(value)
        if not any(s.origin in vouching for s in found):
            seen = sorted(str(s) for s in found if s.origin == "untrusted")
            where = f"; it appears in untrusted {', '.join(seen)}" if seen else ""
            return ask(f"{name} {_short(value)!r} does not come from {who}{where}")
    return allow(f"{name} comes from {who}")


def require(argument: str, *, origin: Literal["user", "trusted"] = "user") -> Rule:
    """Every value of ``argument`` must appear in the user's messages (``origin="user"``) or there or
    in a trusted tool result (``"trusted"``); otherwise ask. A missing argument passes."""
    if origin not in _VOUCHING:
        raise ConfigError(f"origin must be 'user' or 'trusted', got {origin!r}")

    def rule(arguments: Mapping[str, Any], provenance: Provenance) -> Verdict:
        return _check_origin(f"argument {argument!r}", _values(arguments.get(argument)), origin, provenance)

    rule.__name__ = f"require_{argument}_from_{origin}"
    return rule


_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)


def links_from(argument: str, *, origin: Literal["user", "trusted"] = "trusted") -> Rule:
    """Every URL inside the text of ``argument`` must come from ``origin``: free text may say anything,
    but it may not carry a link the attacker chose (phishing, a tracking pixel with data in its query)."""
    if origin not in _VOUCHING:
        raise ConfigError(f"origin must be 'user' or 'trusted', got {origin!r}")

    def rule(arguments: Mapping[str, Any], provenance: Provenance) -> Verdict:
        links = [m.rstrip(".,;:!?") for v in _values(arguments.get(argument)) for m in _URL.findall(str(v))]
        if not links:
            return allow(f"no link in {argument!r}")
        return _check_origin(f"link in {argument!r}", links, origin, provenance)

    rule.__name__ = f"links_in_{argument}_from_{origin}"
    return rule


def _short(value: object, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def text_provenance(ctx: RunContext) -> Provenance:
    """The default provenance: text matching over the run's transcript, indexed once per message."""
    provenance = ctx.state.setdefault("provenance", TextProvenance())
    assert isinstance(provenance, TextProvenance)
    provenance.observe(ctx.messages)
    return provenance


def record_decision(
    ctx: RunContext,
    call: ToolCall,
    *,
    gate: str,
    decision: str,
    reason: str,
    approved: bool | None = None,
    sources: Sequence[Source] = (),
) -> GateDecided:
    """Keep one decision in ``ctx.state["audit"]`` and emit it as an event."""
    event = GateDecided(
        step=ctx.step,
        call_id=call.id,
        tool=call.name,
        gate=gate,
        decision=decision,
        reason=reason,
        approved=approved,
        sources=tuple(str(s) for s in sources),
    )
    ctx.state.setdefault("audit", []).append(event)
    ctx.event(event)
    return event


def describe_decision(event: GateDecided) -> str:
    """One line for a terminal: ``gate post_comment#call_4: denied by secret-guard (...)``."""
    outcome = event.decision
    if event.decision == "asked":
        outcome = "asked, approved" if event.approved else "asked, refused"
    line = f"gate {event.tool}#{event.call_id}: {outcome} by {event.gate} ({event.reason})"
    if event.sources:
        line += f" [untrusted in context: {', '.join(event.sources)}]"
    return line


@dataclass(eq=False)
class TaintGate(Hook):
    """Gate calls that change the world once untrusted content is in the context (see the module doc).

    ``rules`` maps a tool name to one rule or a list of rules (all must allow); ``approver`` is asked
    when a rule asks or a tool has no rule, and ``None`` means no human: such calls are denied.
    """

    rules: Mapping[str, Rule | Sequence[Rule]] = field(default_factory=dict)
    approver: Approver | None = None
    provenance: Callable[[RunContext], Provenance] = text_provenance
    name: str = "taint-gate"

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or tool.read_only or call.arguments is None:
            return None  # unknown tools and malformed calls never run; read-only tools cannot act
        provenance = self.provenance(ctx)
        sources = provenance.untrusted()
        if not sources:
            record_decision(ctx, call, gate=self.name, decision="allowed", reason="no untrusted content in the context")
            return None
        verdict = self.judge(tool, call.arguments, provenance)

        def log(decision: str, reason: str, approved: bool | None = None) -> None:
            record_decision(
                ctx, call, gate=self.name, decision=decision, reason=reason, approved=approved, sources=sources
            )

        if verdict.action == "allow":
            log("allowed", verdict.reason)
            return None
        if verdict.action == "ask" and self.approver is not None:
            request = ApprovalRequest(
                tool=tool.name, arguments=call.arguments, call_id=call.id, run_id=ctx.run_id, reason=verdict.reason
            )
            answer = await ask_approver(self.approver, request)
            log("asked", verdict.reason, answer.approved)
            if answer.approved:
                # the user has spoken for this call: the Approval hook must not ask a second time
                ctx.state.setdefault(GRANTED, set()).add((ctx.step, call.id))
                return None
            why = f": {answer.note}" if answer.note else ""
            return refusal(call, f"not run: the user refused this call{why}. Do not try it again.", "refused")
        reason = verdict.reason if verdict.action == "deny" else f"{verdict.reason}, and no one is there to approve it"
        log("denied", reason)
        text = (
            f"not run: {reason}. Untrusted content ({', '.join(map(str, sources))}) is in this conversation, "
            f"so {tool.name} may only use values the user gave. Tell the user what you wanted to do instead."
        )
        return refusal(call, text, "denied by the injection gate")

    def judge(self, tool: Tool, arguments: Mapping[str, Any], provenance: Provenance) -> Verdict:
        """The strictest verdict of the tool's rules (deny over ask over allow)."""
        found = self.rules.get(tool.name)
        if found is None:
            effects = ", ".join(sorted(e.value for e in tool.effects))
            return ask(f"{tool.name} ({effects}) has no rule that allows it after untrusted content")
        rules = [found] if callable(found) else list(found)
        verdicts = [rule(arguments, provenance) for rule in rules]
        for action in ("deny", "ask"):
            if blocking := [v for v in verdicts if v.action == action]:
                return blocking[0]
        return allow("; ".join(v.reason for v in verdicts) or "no rule objects")
