"""The tool linter: checks what the model sees of each tool, and what the whole set costs.

The description is the only thing the model knows about a tool, so vague, overlapping or silent
descriptions send agents down wrong paths. Every finding has a rule id, a severity, the offending text
and a concrete suggestion; errors make ``toolslip lint`` exit non-zero so it can gate CI.

Rules (``RULES`` holds the same list):

=========================== ======== ==========================================================
name-invalid                error    a provider rejects the name (``查询天气``, a space, a dot, over 64 characters)
name-duplicate              error    two declarations share a name: the model cannot tell them apart
description-missing         error    no description at all
description-restates-name   error    the description only repeats the name ("Search orders.")
description-short           warning  under 4 words (a CJK character counts half a word)
description-vague           warning  12 words or more that name nothing but the tool's own name and filler
overlap                     error    two tools doing the same to alike objects, and neither names the other
no-usage-boundary           warning  a tool with a similar neighbour says neither when to use it nor when not
param-undescribed           warning  a parameter without a description
param-closed-set            warning  free text whose description lists the allowed values: make it an enum
param-format-implicit       warning  a date, phone number, amount or measurement without its format or unit
empty-result-unstated       warning  a look-up tool that does not say what an empty result means
side-effect-unstated        error    a tool that changes the world and does not say what it changes
cost-tool                   warning  one declaration costs more than 1,000 tokens
cost-set                    warning  the set takes more than 5% of a context window: use tool search
output-not-strict           warning  an output schema with parts OpenAI's strict mode cannot hold
=========================== ======== ==========================================================

An output schema (``Agent(output_type=...)``, ``toolslip run --output-schema``) is what the model fills in
at the end, so :func:`lint_output` holds its fields to the parameter rules and adds ``output-not-strict``.

Any source of tools can be linted: :func:`lint` takes ``Tool`` objects (effects known) or ``ToolSpec``
declarations from any wire format or an MCP server (pass ``effects`` when the server declares them).

The table of rules and the checks that raise them stay in one module (about 460 lines) because each
finding's message and suggestion are worded against its row of the table; the heuristics the checks ask
(phrase lists, similarity, formats) are :mod:`toolslip.quality.lint_rules`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..agent.tools import Tool
from ..core.effects import Effect
from ..core.errors import InvalidValue
from ..core.messages import ToolSpec
from ..formats.schema import name_pattern
from . import lint_rules as r
from .text import terms
from .tokens import CONTEXT_WINDOWS, CostReport, declaration_cost

__all__ = ["RULES", "Finding", "LintReport", "Rule", "lint", "lint_output"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: str
    severity: Severity
    summary: str


RULES: Mapping[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(id="name-invalid", severity="error", summary="a provider rejects the tool's name"),
        Rule(id="name-duplicate", severity="error", summary="two declarations share a name"),
        Rule(id="description-missing", severity="error", summary="the tool has no description"),
        Rule(id="description-restates-name", severity="error", summary="the description only repeats the name"),
        Rule(id="description-short", severity="warning", summary="the description is under 4 words"),
        Rule(id="description-vague", severity="warning", summary="a long description that says nothing concrete"),
        Rule(id="overlap", severity="error", summary="two tools are so alike that the choice is ambiguous"),
        Rule(id="no-usage-boundary", severity="warning", summary="a tool with a neighbour has no usage boundary"),
        Rule(id="param-undescribed", severity="warning", summary="a parameter has no description"),
        Rule(id="param-closed-set", severity="warning", summary="free text whose values are a closed set"),
        Rule(id="param-format-implicit", severity="warning", summary="a format or unit is left implicit"),
        Rule(id="empty-result-unstated", severity="warning", summary="what an empty result means is not said"),
        Rule(id="side-effect-unstated", severity="error", summary="a side-effecting tool does not say so"),
        Rule(id="cost-tool", severity="warning", summary="one declaration costs over 1,000 tokens"),
        Rule(id="cost-set", severity="warning", summary="the set takes over 5% of a context window"),
        Rule(id="output-not-strict", severity="warning", summary="an output schema strict mode cannot hold"),
    )
}

_NAME_PATTERNS = {fmt: re.compile(name_pattern(fmt)) for fmt in ("openai-chat", "anthropic")}
OVERLAP, NEIGHBOUR, SYNONYMOUS = 0.6, 0.45, 0.6
"""Similarity (see ``_lint_rules.similarity``) from which two tools doing the same to one object overlap, and
from which they are neighbours, and from which names with other words may still name one object."""
TOOL_BUDGET, SET_SHARE = 1000, 0.05
SHORT = 4
"""A description under this many words (a CJK character counts half) is too short to add to the name."""


@dataclass(frozen=True, kw_only=True)
class Finding:
    rule: str
    severity: Severity
    tool: str
    message: str
    text: str
    """The offending text: the description, the parameter's description, or the other tool's name."""
    suggestion: str
    parameter: str | None = None
    other: str | None = None
    """The other tool of an ``overlap`` pair."""

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True, kw_only=True)
class LintReport:
    findings: tuple[Finding, ...]
    tools: tuple[str, ...]
    cost: CostReport | None = None
    disabled: tuple[str, ...] = field(default=())

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tools": list(self.tools),
            "errors": self.errors,
            "warnings": self.warnings,
            "findings": [f.to_dict() for f in self.findings],
            "cost": self.cost.to_dict() if self.cost else None,
        }

    def render(self) -> str:
        """A human-readable report: findings grouped by tool, then the cost table."""
        lines = []
        for f in self.findings:
            where = f"{f.tool}.{f.parameter}" if f.parameter else f.tool
            lines.append(f"{where}: {f.severity} [{f.rule}] {f.message}")
            lines.append(f"    text: {f.text!r}" if f.text else "    text: (none)")
            lines.append(f"    fix:  {f.suggestion}")
        if self.cost is not None:
            lines.append(_render_cost(self.cost))
        lines.append(f"{len(self.tools)} tools: {self.errors} errors, {self.warnings} warnings")
        return "\n".join(lines)


def _render_cost(cost: CostReport) -> str:
    kind = "o200k_base tokens" if cost.exact else "estimated tokens (pip install 'toolslip[lint]' for exact)"
    shares = ", ".join(
        f"{fmt} {cost.totals[fmt]} ({cost.share[fmt]:.2%} of {CONTEXT_WINDOWS[fmt] // 1000}k)" for fmt in cost.formats
    )
    top = ", ".join(f"{c.name} {c.tokens[cost.formats[0]]}" for c in cost.largest(5, cost.formats[0]))
    return f"cost ({kind}): {shares}\n    largest: {top}"


@dataclass(frozen=True)
class _Subject:
    spec: ToolSpec
    effects: frozenset[Effect] | None


def lint(
    tools: Iterable[Tool | ToolSpec],
    *,
    effects: Mapping[str, frozenset[Effect]] | None = None,
    disable: Iterable[str] = (),
    cost: bool = True,
) -> LintReport:
    """Lint a set of tools.

    Args:
        tools: ``Tool`` objects (their declared effects are used) or ``ToolSpec`` declarations.
        effects: effects of ``ToolSpec`` tools by name, where a source declares them (MCP annotations);
            without them, whether a declaration changes the world is guessed from its leading verb.
        disable: rule ids to skip everywhere, or ``"tool:rule"`` to skip a rule for one tool.
        cost: count the declarations' tokens (the ``cost-*`` rules and the report's cost section).
    """
    subjects = [
        _Subject(t.spec, t.effects) if isinstance(t, Tool) else _Subject(t, (effects or {}).get(t.name)) for t in tools
    ]
    off = _disabled(disable, [s.spec.name for s in subjects])
    report = declaration_cost([s.spec for s in subjects]) if cost and subjects else None
    findings = [*_names(subjects), *_per_tool(subjects), *_pairs(subjects), *(_cost(report) if report else ())]
    order = {s.spec.name: i for i, s in enumerate(subjects)}
    findings.sort(key=lambda f: (order.get(f.tool, len(order)), f.severity != "error"))
    kept = tuple(f for f in findings if f.rule not in off and f"{f.tool}:{f.rule}" not in off)
    return LintReport(
        findings=kept, tools=tuple(s.spec.name for s in subjects), cost=report, disabled=tuple(sorted(off))
    )


def lint_output(output_type: Any, *, disable: Iterable[str] = ()) -> LintReport:
    """Lint the answer a run must end in (a type or a JSON Schema, as ``Agent(output_type=...)`` takes):
    its fields by the parameter rules, and what OpenAI's strict mode could not hold of it."""
    from ..agent.answers import Answer

    answer: Answer[Any] = Answer(output_type, "native")
    spec = ToolSpec(name=answer.name, description=answer.output.description, parameters=answer.schema)
    findings = list(_parameters(_Subject(spec, None)))
    findings += [
        _finding(
            "output-not-strict",
            answer.name,
            f"strict mode cannot hold this: {problem}; native mode sends this schema without strict",
            problem.split(":", 1)[0],
            "give every object its properties (a list of {key, value} objects instead of a free-form map), "
            "and drop keywords strict mode rejects",
        )
        for problem in answer.strict_problems
    ]
    off = _disabled(disable, [answer.name])
    kept = tuple(f for f in findings if f.rule not in off and f"{f.tool}:{f.rule}" not in off)
    return LintReport(findings=kept, tools=(answer.name,), disabled=tuple(sorted(off)))


def _disabled(disable: Iterable[str], names: list[str]) -> set[str]:
    """The rules ``disable`` names, each checked: a typo in a rule or tool name would silently disable
    nothing, so it is an :class:`InvalidValue` (bad usage, exit 2 on the command line)."""
    off = set(disable)
    unknown = {d.rsplit(":", 1)[-1] for d in off} - set(RULES)
    if unknown:
        raise InvalidValue(f"unknown lint rule {sorted(unknown)[0]!r}; rules are: {', '.join(RULES)}")
    strangers = sorted(d for d in off if ":" in d and d.rsplit(":", 1)[0] not in names)
    if strangers:
        raise InvalidValue(f"disable {strangers[0]!r}: no tool of that name; tools are: {', '.join(names)}")
    return off


def _finding(
    rule: str,
    tool: str,
    message: str,
    text: str,
    suggestion: str,
    parameter: str | None = None,
    other: str | None = None,
) -> Finding:
    return Finding(
        rule=rule,
        severity=RULES[rule].severity,
        tool=tool,
        message=message,
        text=text,
        suggestion=suggestion,
        parameter=parameter,
        other=other,
    )


def _names(subjects: list[_Subject]) -> Iterator[Finding]:
    """Names each provider rejects (its own pattern), and names declared twice."""
    seen: dict[str, int] = {}
    for s in subjects:
        name = s.spec.name
        seen[name] = seen.get(name, 0) + 1
        if seen[name] == 2:
            yield _finding(
                "name-duplicate",
                name,
                f"{sum(t.spec.name == name for t in subjects)} declarations are named {name!r}: the model cannot "
                "tell them apart, and OpenAI and Anthropic reject a request with duplicate tool names",
                name,
                "rename one of them after what it does differently, or merge them into one tool",
            )
        rejected = [(fmt, pattern) for fmt, pattern in _NAME_PATTERNS.items() if not pattern.match(name)]
        if seen[name] == 1 and rejected:
            providers = "; ".join(f"{fmt} ({pattern.pattern})" for fmt, pattern in rejected)
            plain = name.isascii() and r.NAME_CHARS.fullmatch(name)
            why = f"is {len(name)} characters" if plain else "has characters outside a-z, A-Z, 0-9, _ and -"
            yield _finding(
                "name-invalid",
                name,
                f"the name {why}, so these reject it: {providers}",
                name,
                "rename it (letters, digits, _ and -, at most 64), or let toolslip.NameMap map it per provider",
            )


def _per_tool(subjects: list[_Subject]) -> Iterator[Finding]:
    for s in subjects:
        yield from _description(s)
        yield from _parameters(s)


def _description(s: _Subject) -> Iterator[Finding]:
    name, text = s.spec.name, (s.spec.description or "").strip()
    if not text:
        yield _finding(
            "description-missing",
            name,
            "the model sees only the name",
            "",
            "write what it does, when to use it and when not, and what it returns (also when nothing is found)",
        )
        return
    described = set(terms(text))
    if described and described <= set(terms(name)) | r.RETRIEVAL_VERBS:
        yield _finding(
            "description-restates-name",
            name,
            "the description adds nothing to the name",
            text,
            "say what it returns, which inputs it needs, and when another tool fits better",
        )
    elif r.vague(name, text):
        yield _finding(
            "description-vague",
            name,
            "the description is long but names nothing the tool works on or returns beyond its own name",
            text,
            "say what it takes, what it returns, and when to use it instead of its neighbours, in concrete words",
        )
    elif r.size(text) < SHORT:
        yield _finding(
            "description-short",
            name,
            f"the description is {r.size(text):g} words long: it cannot say more than the name",
            text,
            'add when to use it ("use only when ..."), what it returns, and what an empty result means',
        )
    if r.side_effecting(name, s.effects, text) and not r.STATES_CHANGE.search(text):
        yield _finding(
            "side-effect-unstated",
            name,
            "this tool changes the world but its description does not say what it changes",
            text,
            'say what it changes and whether it can be undone ("Sends the email; it cannot be recalled."); '
            "if it only reads, declare effects='read_only'",
        )
    if r.is_retrieval(name, text) and not r.EMPTY_RESULT.search(text):
        yield _finding(
            "empty-result-unstated",
            name,
            "nothing says what an empty result means, so the model may treat it as a failure and invent data",
            text,
            'add e.g. "No match returns an empty list; that is not an error: tell the user nothing was found."',
        )


def _parameters(s: _Subject) -> Iterator[Finding]:
    name = s.spec.name
    found = list(r.params(s.spec.parameters))
    siblings = " ".join(p.path for p in found)
    names = frozenset(p.path.rsplit(".", 1)[-1] for p in found)
    for p in found:
        described = p.schema.get("description")
        text = described if isinstance(described, str) else ""
        if not text.strip() and r.needs_description(p.path, p.schema):
            yield _finding(
                "param-undescribed",
                name,
                f"parameter {p.path!r} has no description",
                "",
                "describe what goes in it, with its format and an example",
                p.path,
            )
        closed = r.is_free_text(p.schema) and bool(text) and r.lists_values(text, names)
        if closed:
            yield _finding(
                "param-closed-set",
                name,
                f"{p.path!r} is free text but its description lists the allowed values",
                text,
                "declare them as an enum (Literal[...] in Python) so the model cannot send anything else",
                p.path,
            )
        if "enum" in p.schema or p.schema.get("type") in ("boolean", "object", "array") or not text.strip() or closed:
            continue  # an undescribed parameter is param-undescribed already
        if r.UNIT_IN_NAME.search(p.path.rsplit(".", 1)[-1]):
            continue  # width_cm, timeout_ms, max_bytes: the name states it
        for topic in r.TOPICS:
            if topic.about.search(p.path if topic.by_name else f"{p.path} {r.head(text)}"):
                stated = topic.stated.search(text) or "format" in p.schema or "pattern" in p.schema
                if topic.name == "amount of money" and "currency" in siblings:
                    stated = True
                if not stated:
                    yield _finding(
                        "param-format-implicit",
                        name,
                        f"{p.path!r} looks like a {topic.name} but its format is not stated",
                        text,
                        topic.suggestion,
                        p.path,
                    )
                break


def _pairs(subjects: list[_Subject]) -> Iterator[Finding]:
    """Overlaps (same job on the same object, neither naming the other) and tools that need a boundary.

    Two tools do the same job when their names' actions meet (``search_orders``/``find_order``: search) and
    each name's object words are the other's too, or appear in the other's description (``get_forecast``
    says "weather", so ``weather_outlook`` is no other object). Different actions (search vs book, create
    vs list) or an object word in one name only (``set_table_width`` vs ``set_table_column_width``) tell
    them apart, unless the descriptions are nearly the same. Tools that are alike but less so are
    neighbours: each should say when to use it.
    """
    views = {
        s.spec.name: (s.spec.name, s.spec.description or "", [p.path for p in r.params(s.spec.parameters)])
        for s in subjects
    }
    profiles = {name: r.Profile.of(*view) for name, view in views.items()}
    acts = {name: r.actions(name, view[1]) for name, view in views.items()}
    neighbours: dict[str, list[str]] = {name: [] for name in views}
    for a, b in itertools.combinations(views, 2):
        if a == b or r.concepts(a) == r.concepts(b) or acts[a] and acts[b] and not acts[a] & acts[b]:
            continue  # one vs many (upload_attachment/upload_attachments) differ; duplicates are name-duplicate
        signposted = r.names_other(views[a][1], b) or r.names_other(views[b][1], a)
        score = r.similarity(profiles[a], profiles[b])
        # Names in other words ("forecast"/"outlook") may name one object when the descriptions say so; names
        # sharing words but differing in one ("cell alignment"/"alignment all") name different things.
        strict = score < SYNONYMOUS or bool(set(terms(a)) & set(terms(b)) - r.GENERIC_NAME_WORDS)
        same = r.same_object(profiles[a], profiles[b], strict=strict)
        if same and score >= OVERLAP and not signposted:
            yield _finding(
                "overlap",
                a,
                f"{a} and {b} do the same to the same object (similarity {score:.2f}): the model has to guess",
                views[a][1],
                f"merge them into one tool, or make each description name the other: in {a} write "
                f'"{r.signpost(views[b][1], b)}", and the reverse in {b}',
                other=b,
            )
        elif same and score >= NEIGHBOUR:
            neighbours[a].append(b)
            neighbours[b].append(a)
    for name, near in neighbours.items():
        text = views[name][1]
        if near and text and not r.BOUNDARY.search(text) and not any(r.names_other(text, n) for n in near):
            yield _finding(
                "no-usage-boundary",
                name,
                f"{name} reads the same object as {', '.join(near)} in another way but does not say when to use it",
                text,
                f'add "Use only when ..." and a signpost such as "if you have ..., use {near[0]} instead"',
            )


def _cost(report: CostReport) -> Iterator[Finding]:
    fmt = report.formats[0]
    for c in report.tools:
        if c.tokens[fmt] > TOOL_BUDGET:
            yield _finding(
                "cost-tool",
                c.name,
                f"the declaration costs {c.tokens[fmt]} tokens in {fmt}, on every request",
                "",
                "shorten descriptions, drop rarely used optional parameters, or split the tool by user intent",
            )
    for fmt, share in report.share.items():
        if share > SET_SHARE:
            yield _finding(
                "cost-set",
                "(all tools)",
                f"the {len(report.tools)} declarations cost {report.totals[fmt]} tokens, {share:.1%} of a "
                f"{CONTEXT_WINDOWS[fmt] // 1000}k {fmt} context window, on every request",
                "",
                "send only what a request needs: toolslip.ToolSearch offers a search tool instead",
            )
            return
