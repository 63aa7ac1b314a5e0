"""The injection gate: once untrusted text is in the context, calls that change the world need a reason.

A model cannot tell an instruction from data, so the harness assumes the worst: after a tool result that a
third party could have written (an issue, an email, a web page; every tool whose ``trusted_output`` is
False) has entered the conversation, the model may be working for the attacker. From then on every call
to a tool that is not ``read_only`` goes through :class:`TaintGate`, which either

* **allows** it, because every rule for that tool allows it (rules are plain Python over the arguments
  and their :mod:`provenance <toolslip.guard.provenance>`: "the recipient must come from the user"), or
* **asks** an :class:`~toolslip.durable.approval.Approver` (a human) with the reason, or
* **denies** it: a rule said so, or it needed asking and there is no one to ask.

A tool without rules always asks in a tainted context. Every decision is emitted as a
:class:`~toolslip.core.events.GateDecided` event and kept in ``ctx.state["audit"]``.

This is the boundary; the model-side mitigations in :mod:`toolslip.guard.spotlight` are not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from ..agent.hooks import Hook, RunContext, ToolAnswer
from ..agent.tools import Tool
from ..code import INNER_RESULTS
from ..core.events import GateDecided
from ..core.messages import ModelResponse, Request, Text, ToolCall
from ..durable.decisions import GRANTED, ApprovalRequest, Approver, refusal
from ..durable.decisions import ask as ask_approver
from .provenance import Provenance, Source, TextProvenance
from .rules import (
    Check,
    Rule,
    Verdict,
    allow,
    any_of,
    argument_values,
    ask,
    deny,
    from_source,
    intent,
    links_from,
    names_from,
    no_data_from_tools,
    one_of,
    requested,
    require,
    shorten,
)
from .values import NAME, find_values, value_kind

__all__ = [
    "Check",
    "Rule",
    "TaintGate",
    "Verdict",
    "allow",
    "any_of",
    "ask",
    "deny",
    "describe_decision",
    "find_values",
    "from_source",
    "intent",
    "links_from",
    "names_from",
    "no_data_from_tools",
    "one_of",
    "record_decision",
    "require",
    "requested",
    "text_provenance",
    "value_kind",
]


def text_provenance(ctx: RunContext) -> Provenance:
    """The default provenance: text matching over the run's transcript, indexed once per message."""
    provenance = ctx.state.setdefault("provenance", TextProvenance())
    assert isinstance(provenance, TextProvenance)
    provenance.observe(ctx.messages, echoes=ctx.state.get(ALLOWED, ()))
    provenance.observe_results(ctx.state.get(INNER_RESULTS, ()), echoes=ctx.state.get(ALLOWED, ()))
    return provenance


ALLOWED = "taint-gate.allowed"
"""Key in ``RunContext.state``: call id -> what the result of a call the gate allowed may say back
without bringing new text (its argument values, the words of its tool's declaration)."""


def _echo_words(call: ToolCall, tool: Tool) -> frozenset[str]:
    declared = f"{tool.name.replace('_', ' ')} {tool.description} {' '.join(tool.parameters.get('properties', {}))}"
    values = {str(v) for v in argument_values(call.arguments)} | {
        f"{v:.2f}" for v in argument_values(call.arguments) if isinstance(v, float)
    }
    return frozenset(values | set(re.findall(r"[^\W_]+", declared.casefold())))


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
    ``answer`` watches the one channel no tool gate sees, the final answer: each URL, email address,
    IBAN or phone number in it that only untrusted output gave is marked (``"mark"``: the value stays,
    followed by where it came from) or replaced by a placeholder (``"replace"``), and so is a name of
    capitalised words (noted under the answer in both modes); ``None`` leaves the answer alone. Either
    way the finding is an audit decision ``flagged`` on the tool ``answer``.
    """

    rules: Mapping[str, Rule | Sequence[Rule]] = field(default_factory=dict)
    approver: Approver | None = None
    provenance: Callable[[RunContext], Provenance] = text_provenance
    answer: Literal["mark", "replace"] | None = "mark"
    name: str = "taint-gate"

    async def before_tool(self, ctx: RunContext, call: ToolCall, tool: Tool | None) -> ToolAnswer | None:
        if tool is None or tool.read_only or call.arguments is None:
            return None  # unknown tools and malformed calls never run; read-only tools cannot act
        provenance = self.provenance(ctx)
        sources = provenance.untrusted()
        allowed: dict[str, frozenset[str]] = ctx.state.setdefault(ALLOWED, {})
        if not sources:
            record_decision(ctx, call, gate=self.name, decision="allowed", reason="no untrusted content in the context")
            allowed[call.id] = _echo_words(call, tool)
            return None
        verdict = self.judge(Check(call=call, tool=tool, provenance=provenance, ctx=ctx))

        def log(decision: str, reason: str, approved: bool | None = None) -> None:
            record_decision(
                ctx, call, gate=self.name, decision=decision, reason=reason, approved=approved, sources=sources
            )

        if verdict.action == "allow":
            log("allowed", verdict.reason)
            allowed[call.id] = _echo_words(call, tool)
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
                allowed[call.id] = _echo_words(call, tool)
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

    def judge(self, check: Check) -> Verdict:
        """The strictest verdict of the tool's rules (deny over ask over allow)."""
        found = self.rules.get(check.tool.name)
        if found is None:
            effects = ", ".join(sorted(e.value for e in check.tool.effects))
            return ask(f"{check.tool.name} ({effects}) has no rule that allows it after untrusted content")
        rules = [found] if callable(found) else list(found)
        verdicts = [rule(check) for rule in rules]
        for action in ("deny", "ask"):
            if blocking := [v for v in verdicts if v.action == action]:
                return blocking[0]
        return allow("; ".join(v.reason for v in verdicts) or "no rule objects")

    async def after_model(self, ctx: RunContext, request: Request, response: ModelResponse) -> ModelResponse:
        message = response.message
        if self.answer is None or message.tool_calls or not message.text:
            return response
        provenance = self.provenance(ctx)
        flagged: dict[str, list[str]] = {}
        contacts = find_values(message.text)
        names = [n for n in NAME.findall(message.text) if not any(n in c for c in contacts)]
        for value in dict.fromkeys(contacts + names):
            found = provenance.sources(value)
            if found and all(s.origin == "untrusted" for s in found):
                flagged[value] = sorted({s.label.split(" ")[0] for s in found})
        if not flagged:
            return response
        text = message.text
        notes: list[str] = []
        for value, where in sorted(flagged.items(), key=lambda item: -len(item[0])):
            kind = value_kind(value)
            origin = ", ".join(where)
            if kind is None:  # a name is noted under the answer, never cut out of its sentence
                notes.append(f"[unverified name {value!r}: it came only from untrusted {origin}]")
                continue
            marked = (
                f"[{kind} removed: it came only from untrusted {origin}]"
                if self.answer == "replace"
                else f"{value} [unverified {kind}: it came only from untrusted {origin}]"
            )
            text = re.sub(rf"(?<![\w@/.-]){re.escape(value)}(?![\w@-])", marked.replace("\\", "\\\\"), text)
        text = "\n".join([text, *reversed(notes)])
        carried = "; ".join(f"{shorten(v, 40)!r} from {', '.join(w)}" for v, w in flagged.items())
        record_decision(
            ctx,
            ToolCall(id="final", name="answer", arguments={}),
            gate=self.name,
            decision="flagged",
            reason=f"the answer carries {carried}",
            sources=provenance.untrusted(),
        )
        parts = tuple(p for p in message.parts if not isinstance(p, Text)) + (Text(text=text),)
        return replace(response, message=replace(message, parts=parts))
