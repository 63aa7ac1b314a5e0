"""Typed answers: a run that ends in a validated value, ``Agent(output_type=Expense)``.

The type may be a pydantic model, a dataclass, a TypedDict, ``list[...]``, a union of those (pydantic's
``TypeAdapter`` gives the schema and validates), or a JSON Schema dict (validated with ``jsonschema``).
Three ways to ask a model for it (:data:`OutputMode`):

* ``native``: the provider's own structured-output field (``Request.output``; each format spells it, see
  :mod:`toolslip.formats.structured`), with the strict rewrite OpenAI requires. The default where the
  model's format has such a field, and for the embedded model, whose grammar then holds it to the schema.
* ``tool``: a final-answer tool offered next to the others; calling it ends the run. Works on every wire,
  legacy functions included, and the model may call other tools first. The default elsewhere.
* ``prompted``: the schema in the system prompt and the JSON taken from the answer's text, for servers
  that have neither.

A value that does not fit goes back to the model with the validator's field-level message (a tool result
in tool mode, a user turn otherwise), at most ``output_retries`` times; then the run stops with
``stop_reason == "output_invalid"`` and the last message in ``RunResult.output_error``. A refusal in place
of the value gets the same retry, then ``stop_reason == "refusal"``. Nothing here raises out of a run.
Types the answer cannot be built from raise :class:`~toolslip.core.errors.ConfigError` when the agent is made.

Non-object answers (``list[Finding]``, a union, ``int``) travel wrapped as ``{"value": ...}``, since tool
arguments and OpenAI's schemas must be objects; the wrapper is removed before validation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Any, Generic, Literal, TypeAlias, get_args

from typing_extensions import TypeVar

from ..core.errors import ConfigError, InvalidValue
from ..core.messages import Message, ModelResponse, OutputSchema, ToolCall, ToolResult, ToolSpec
from ..formats.structured import FINAL_TOOL, drop_strict_nulls, native_field, strict_schema
from .schemas import clean_schema, validation_problems

__all__ = ["FINAL_TOOL", "MODES", "Answer", "OutputMode", "OutputType", "Verdict", "choose_mode", "is_answer_type"]

OutputMode: TypeAlias = Literal["native", "tool", "prompted"]
MODES: tuple[OutputMode, ...] = get_args(OutputMode)

T = TypeVar("T", default=Any)

OutputType: TypeAlias = type[T] | UnionType | Mapping[str, Any]
"""What ``output_type`` takes: a type (its value is ``RunResult.data``'s type), a union of types, or a JSON
Schema dict (the last two give ``data`` the type ``Any``)."""
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


_SCHEMA_WORDS = frozenset(
    "type properties items required enum const anyOf oneOf allOf not $ref $defs definitions additionalProperties "
    "prefixItems pattern format minimum maximum title description".split()
)
"""Keywords of which a JSON Schema has at least one; a dict with none (``{"USD": 7.18}``) is data, which
``jsonschema`` would take as a schema that accepts anything."""


def is_answer_type(value: object) -> bool:
    """Whether ``value`` can be an answer's type: a class, a typing form (``A | B``, ``list[A]``,
    ``Annotated[...]``, ``Literal[...]``), or a JSON Schema dict (empty, or with a schema keyword)."""
    import typing

    if isinstance(value, Mapping):
        return not value or any(key in _SCHEMA_WORDS for key in value)
    return isinstance(value, type | UnionType) or typing.get_origin(value) is not None


def choose_mode(model: object, asked: OutputMode | None) -> OutputMode:
    """``asked``, or the mode a model gets unless told otherwise: what it declares (``output_mode``: the
    embedded and scripted demo models), else native where its wire format has a structured-output field,
    else tool. Native asked of a format without that field is a :class:`ConfigError` here, not at run time."""
    wire = getattr(getattr(model, "wire", None), "NAME", None)
    native = not isinstance(wire, str) or native_field(wire) is not None
    if asked == "native" and not native:
        raise ConfigError(
            f"output_mode='native', but {wire} has no structured-output field; use output_mode='tool' or 'prompted'"
        )
    if asked is not None:
        return asked
    own = getattr(model, "output_mode", None)
    if own in MODES:
        return own  # type: ignore[no-any-return]  # one of MODES, checked
    return "native" if isinstance(wire, str) and native else "tool"


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What the loop does with one answer: accept ``value``, or say ``feedback`` and maybe stop."""

    ok: bool
    value: Any = None
    text: str = ""
    """The answer as JSON text (what ``RunResult.output`` shows when the message had no text)."""
    error: str = ""
    stop: Literal["output_invalid", "refusal"] = "output_invalid"
    call: ToolCall | None = None
    """The final-answer call judged (tool mode), which the transcript must answer."""


class Answer(Generic[T]):
    """The answer a run must end in: its schema, how it is asked for, and its validator."""

    def __init__(self, output_type: Any, mode: OutputMode) -> None:
        if mode not in MODES:
            raise ConfigError(f"output_mode must be one of {', '.join(MODES)}, not {mode!r}")
        self.mode = mode
        self._adapter: Any = None
        self._checker: Any = None
        if not is_answer_type(output_type):  # a tool object, a dict of data: a schema that fits anything, or a crash
            raise InvalidValue(
                f"output_type must be a type (a pydantic model, dataclass, TypedDict...), a union of types or a "
                f"JSON Schema dict, not {type(output_type).__name__} {str(output_type)[:60]}"
            )
        if isinstance(output_type, Mapping):
            try:
                import jsonschema

                jsonschema.Draft202012Validator.check_schema(output_type)
            except jsonschema.SchemaError as exc:
                raise ConfigError(f"output_type is not a valid JSON Schema: {exc.message}") from None
            self._checker = jsonschema.Draft202012Validator(dict(output_type))
            schema = dict(output_type)
            name = schema.pop("title", None) or "answer"
        else:
            import pydantic

            try:
                self._adapter = pydantic.TypeAdapter(output_type)
                schema = clean_schema(self._adapter.json_schema())
            except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
                raise ConfigError(f"output_type {output_type!r} cannot become a JSON Schema: {exc}") from None
            name = getattr(output_type, "__name__", None) or "answer"
        self.name: str = str(name)
        self.wrapped = schema.get("type") != "object"
        if self.wrapped:
            defs = schema.pop("$defs", None)
            schema = {
                "type": "object",
                "properties": {"value": schema},
                "required": ["value"],
                "additionalProperties": False,
                **({"$defs": defs} if defs else {}),
            }
        self.schema: dict[str, Any] = schema
        """The JSON Schema the model is asked to follow (wrapped for a non-object type)."""
        strict = strict_schema(schema)
        self.strict_problems = strict.problems
        """What the strict rewrite could not carry; non-empty means native mode sends the schema unstrict."""
        self.output = OutputSchema(
            name=self.name,
            schema=schema if strict.problems else strict.schema,
            strict=None if strict.problems else True,
            description=str(schema.get("description") or ""),
        )
        self.spec = ToolSpec(
            name=FINAL_TOOL,
            description=(
                "Give your final answer by calling this, once you have everything it needs; the call ends the "
                "conversation, so call it alone and last."
                + (f" The answer: {self.output.description}" if self.output.description else "")
            ),
            parameters=schema,
        )
        self._offered: tuple[tuple[ToolSpec, ...], tuple[ToolSpec, ...]] | None = None

    # --- asking ----------------------------------------------------------------------------------------

    def tools(self, specs: tuple[ToolSpec, ...]) -> tuple[ToolSpec, ...]:
        """The tools to offer: in tool mode ``specs`` and the final-answer tool, the same tuple on every
        step (the formats encode an unchanged tuple once)."""
        if self.mode != "tool":
            return specs
        offered = self._offered
        if offered is None or offered[0] is not specs:
            if any(s.name == FINAL_TOOL for s in specs):
                raise ConfigError(f"a tool is named {FINAL_TOOL!r}, the name tool mode gives the final answer")
            offered = self._offered = (specs, (*specs, self.spec))
        return offered[1]

    def instructions(self) -> str:
        """The system prompt's addition in prompted mode."""
        return (
            "When you give your final answer, write only one JSON value that follows this JSON Schema, with "
            f"no other text:\n{json.dumps(self.schema, ensure_ascii=False)}"
        )

    def with_instructions(self, messages: list[Message]) -> list[Message]:
        if self.mode != "prompted":
            return messages
        if messages and messages[0].role == "system":
            return [Message.system(f"{messages[0].text}\n\n{self.instructions()}"), *messages[1:]]
        return [Message.system(self.instructions()), *messages]

    # --- judging ---------------------------------------------------------------------------------------

    def judge(self, response: ModelResponse, ctx: object = None) -> Verdict | None:
        """The verdict on a response that answers; ``None`` for an ordinary tool turn (or a cut answer).

        ``ctx`` (the run context) is pydantic's validation context: a validator on the output type reads
        the run's deps as ``info.context.deps``."""
        calls = response.message.tool_calls
        final = next((c for c in calls if c.name == FINAL_TOOL), None) if self.mode == "tool" else None
        if final is not None:
            if final.arguments is None:
                _, problem = _json_in(final.raw_arguments or "")
                return self._invalid(problem or f"the arguments of {FINAL_TOOL} are not a JSON object", final)
            return self.check(dict(final.arguments), final, ctx)
        if calls or response.stop_reason == "max_tokens":
            return None
        text = response.message.text
        if response.stop_reason in ("refusal", "content_filter"):
            return Verdict(ok=False, error=f"the model refused instead of answering: {text[:300]!r}", stop="refusal")
        value, problem = _json_in(text)
        if problem:
            if self.mode == "tool":
                problem = f"the answer was text, not a call of {FINAL_TOOL} ({problem})"
            return self._invalid(problem, None)
        return self.check(value, None, ctx)

    def check(self, value: Any, call: ToolCall | None = None, ctx: object = None) -> Verdict:
        """Validate a decoded answer (unwrapping ``{"value": ...}``)."""
        text = json.dumps(value, ensure_ascii=False)
        value = drop_strict_nulls(value, self.schema)
        if self.wrapped:
            if not isinstance(value, dict) or "value" not in value:
                return self._invalid("the answer must be an object with one field, 'value'", call)
            value = value["value"]
        if self._checker is not None:
            problems = [
                f"field '{'.'.join(str(p) for p in e.absolute_path) or '(answer)'}': {e.message}"
                for e in self._checker.iter_errors(value)
            ]
            if problems:
                return self._invalid("; ".join(problems), call)
            return Verdict(ok=True, value=value, text=text, call=call)
        import pydantic

        try:
            parsed = self._adapter.validate_python(value, context=ctx)
        except pydantic.ValidationError as exc:
            return self._invalid("; ".join(validation_problems(exc, "field", "(answer)")), call)
        return Verdict(ok=True, value=parsed, text=text, call=call)

    def _invalid(self, problem: str, call: ToolCall | None) -> Verdict:
        return Verdict(ok=False, error=f"the answer does not fit {self.name}: {problem}", call=call)

    def feedback(self, verdict: Verdict) -> str:
        """What the model reads after an answer that was not accepted."""
        if verdict.stop == "refusal":
            return f"You refused ({verdict.error}). If you can, answer the question, as {self._how()}."
        return f"{verdict.error}. Send the whole answer again, corrected, as {self._how()}."

    def _how(self) -> str:
        return {
            "tool": f"the arguments of one {FINAL_TOOL} call",
            "native": "one JSON value that follows the response schema",
            "prompted": "one JSON value that follows the JSON Schema in your instructions, with no other text",
        }[self.mode]

    def closing(self, verdict: Verdict, calls: Sequence[ToolCall]) -> Message | None:
        """The results that close a turn which ended the run with a final-answer call: the call's own
        (accepted, or the last error), and the other calls of the turn, not executed."""
        if verdict.call is None:
            return None
        results = [
            ToolResult(
                call_id=c.id,
                name=c.name,
                content=(
                    ("final answer accepted" if verdict.ok else verdict.error)
                    if c is verdict.call
                    else "not executed: the final answer ended the run"
                ),
                is_error=c is not verdict.call or not verdict.ok,
                outcome="ran" if c is verdict.call else "not_executed",
            )
            for c in calls
        ]
        return Message.tool(results)


def _json_in(text: str) -> tuple[Any, str]:
    """The JSON value an answer holds, and ``""``; or ``None`` and what is wrong with it.

    The whole text first; then a fenced block; then from the first ``{`` or ``[`` on, for a model that
    wrapped the JSON in a sentence (prompted mode)."""
    stripped = text.strip()
    if not stripped:
        return None, "the answer is empty"
    try:
        return json.loads(stripped), ""
    except json.JSONDecodeError as exc:
        first = exc
    candidates = [m.strip() for m in _FENCE.findall(stripped)]
    starts = [i for i in (stripped.find("{"), stripped.find("[")) if i >= 0]
    if starts:
        candidates.append(stripped[min(starts) :])
    decoder = json.JSONDecoder()
    for candidate in candidates:
        try:
            return decoder.raw_decode(candidate)[0], ""
        except json.JSONDecodeError:
            continue
    return None, f"it is not valid JSON ({first.msg} at line {first.lineno} column {first.colno})"
