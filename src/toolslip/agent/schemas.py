"""JSON Schema and validators: from a function's typed signature (pydantic), or from a schema (jsonschema).

``@tool`` describes a function's arguments with the schema of a pydantic model made from its type hints and
docstring, and validates the model's arguments with that same model, so the schema sent and the check
applied cannot disagree; a tool declared with a schema is validated against it (JSON Schema 2020-12).
Either way a problem is an :class:`~toolslip.core.errors.ArgumentError` naming the field, which the loop
returns to the model. pydantic and jsonschema are imported on first use.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..core.errors import ArgumentError, ToolDefinitionError
from .context import takes_context

if TYPE_CHECKING:
    import pydantic

__all__ = [
    "Validator",
    "arguments_model",
    "clean_schema",
    "describe_validation",
    "jsonschema_validator",
    "pydantic_validator",
    "validation_problems",
]

Validator = Callable[[Mapping[str, Any]], dict[str, Any]]
"""Checks (and may coerce) a call's arguments; raises ArgumentError naming the field."""


def arguments_model(
    f: Callable[..., Any], tool_name: str, doc_params: dict[str, str]
) -> tuple[type[pydantic.BaseModel], bool]:
    """The pydantic model of ``f``'s arguments, and whether ``f``'s first parameter asks for the run
    context (:mod:`toolslip.agent.context`): the loop fills that one in, so the model never sees it."""
    import pydantic
    from pydantic.fields import FieldInfo

    try:
        hints = typing.get_type_hints(f, include_extras=True)
    except Exception as exc:  # NameError for an unresolvable forward reference, among others
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot resolve type hints: {exc}") from None
    fields: dict[str, Any] = {}
    params = list(inspect.signature(f).parameters.values())
    wants_context = bool(params) and takes_context(hints.get(params[0].name))
    for param in params[1:] if wants_context else params:
        if takes_context(hints.get(param.name)):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: the run context must be the first parameter, not {param.name!r}"
            )
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(
                f"tool {tool_name!r}: *{param.name} cannot be described as JSON arguments; name each parameter"
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: positional-only parameter {param.name!r} cannot be passed by name"
            )
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        has_description = any(
            isinstance(m, FieldInfo) and m.description for m in getattr(annotation, "__metadata__", ())
        )
        doc = doc_params.get(param.name)
        if doc and not has_description:
            fields[param.name] = (annotation, pydantic.Field(default, description=doc))
        else:
            fields[param.name] = (annotation, default)
    try:
        model = pydantic.create_model(
            tool_name, __config__=pydantic.ConfigDict(extra="forbid", arbitrary_types_allowed=False), **fields
        )
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
        raise ToolDefinitionError(f"tool {tool_name!r}: a parameter type cannot become JSON Schema: {exc}") from None
    return model, wants_context


def pydantic_validator(model: type[pydantic.BaseModel], tool_name: str) -> Validator:
    import pydantic

    def validate(arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:  # the model's validator itself: model_validate() wraps it in half as much work again
            parsed = model.__pydantic_validator__.validate_python(arguments)
        except pydantic.ValidationError as exc:
            raise ArgumentError(describe_validation(exc, tool_name)) from None
        return dict(parsed.__dict__)  # the fields, in order (extra="forbid" keeps anything else out)

    return validate


def describe_validation(exc: Any, tool_name: str) -> str:
    return f"invalid arguments for {tool_name}: " + "; ".join(validation_problems(exc, "argument", "(arguments)"))


def validation_problems(exc: Any, noun: str, whole: str) -> list[str]:
    """One line per problem of a pydantic ``ValidationError``, naming the field (``whole`` when it is the
    value itself) and what was given: what the model reads to fix its arguments, or its answer."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or whole
        got = f" (got {err['input']!r})" if err["type"] not in ("missing", "extra_forbidden") else ""
        problems.append(f"{noun} '{where}': {err['msg']}{got}")
    return problems


def jsonschema_validator(schema: Mapping[str, Any]) -> Validator:
    # Built on the first call, not per call: every call is validated, and the repeat guard validates again.
    checker: Any = None

    def validate(arguments: Mapping[str, Any]) -> dict[str, Any]:
        nonlocal checker
        if checker is None:
            import jsonschema

            checker = jsonschema.Draft202012Validator(schema)
        problems = [
            f"argument '{'.'.join(str(p) for p in e.absolute_path) or '(arguments)'}': {e.message}"
            for e in checker.iter_errors(dict(arguments))
        ]
        if problems:
            raise ArgumentError("invalid arguments: " + "; ".join(problems))
        return dict(arguments)

    return validate


def clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's generated titles and inline ``$defs`` so the model reads one flat schema.

    Recursive definitions cannot be inlined; they keep their ``$ref`` and ``$defs``.
    """
    defs = schema.pop("$defs", {})
    recursive: set[str] = set()

    def walk(node: Any, in_props: bool, stack: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [walk(n, False, stack) for n in node]
        if not isinstance(node, dict):
            return node
        if in_props:  # keys are property names, values are schemas
            return {k: walk(v, False, stack) for k, v in node.items()}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            if key in stack or key not in defs:
                recursive.add(key)
                return node
            merged = {
                **walk(defs[key], False, (*stack, key)),
                **{k: walk(v, False, stack) for k, v in node.items() if k != "$ref"},
            }
            return merged
        return {k: walk(v, k == "properties", stack) for k, v in node.items() if k != "title"}

    out: dict[str, Any] = walk(schema, False, ())
    if recursive:
        out["$defs"] = {k: walk(v, False, (k,)) for k, v in defs.items()}
    return out
