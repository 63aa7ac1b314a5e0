"""Structured output on the wire: where each format asks for an answer that follows a JSON Schema.

One neutral :class:`~toolslip.core.messages.OutputSchema` (``Request.output``), one spelling per format:

=====================  ===========================================================================
``openai-chat``        ``response_format: {type: json_schema, json_schema: {name, schema, strict}}``
``openai-responses``   ``text: {format: {type: json_schema, name, schema, strict}}``
``anthropic``          ``output_config: {format: {type: json_schema, schema}}`` (the beta's
                       ``output_format`` is read too, and written back as it came)
``gemini``             ``generationConfig: {responseMimeType: "application/json",
                       responseJsonSchema}`` (the older ``responseSchema``, Gemini's OpenAPI subset,
                       is read too, and written back as it came)
``bedrock``            ``outputConfig: {textFormat: {type: json_schema, structure: {jsonSchema:
                       {schema, name, description}}}}``, the schema as JSON *text*
``ollama``             ``format: <the JSON Schema>`` (``format: "json"``, JSON with no schema, stays
                       verbatim in ``Settings.extra``)
``openai-functions``   none: the June-2023 API predates structured output (convert offers a
                       final-answer tool instead, see :mod:`toolslip.formats.conversion`)
=====================  ===========================================================================

Each row of :data:`FIELDS` is a pair of small functions, so a new format joins with one line. The formats
call :func:`output_to_wire` and :func:`output_from_wire` from their ``request_to_wire`` and
``request_from_wire``. :func:`strict_schema` is the rewrite OpenAI's ``strict: true`` requires
(``additionalProperties: false`` on every object, every property required, the optional ones nullable),
with a list of what cannot be made strict; :func:`drop_strict_nulls` undoes the nullable part on an
answer, so a field the caller left optional is absent again rather than ``null``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import CannotExpress
from ..core.messages import OutputSchema
from ._memo import RecentMemo
from ._wire import unstash
from .gemini_schema import from_gemini

__all__ = [
    "FIELDS",
    "FINAL_TOOL",
    "StrictSchema",
    "drop_strict_nulls",
    "native_field",
    "output_from_wire",
    "output_to_wire",
    "strict_schema",
]

Json = dict[str, Any]
FINAL_TOOL = "final_answer"
"""The final-answer tool that carries a structured answer where a format has no field for it (toolslip's
tool mode, and ``convert`` to such a format)."""
_NAME = re.compile(r"[^a-zA-Z0-9_-]")


def _schema_name(name: str) -> str:
    """A name OpenAI accepts (``^[a-zA-Z0-9_-]{1,64}$``)."""
    return _NAME.sub("_", name)[:64] or "answer"


# --- one row per format ---------------------------------------------------------------------------------


def _named(output: OutputSchema) -> Json:
    """The name, schema, description and strict flag, as both OpenAI APIs spell them."""
    spec: Json = {"name": _schema_name(output.name), "schema": dict(output.schema)}
    if output.description:
        spec["description"] = output.description
    if output.strict is not None:
        spec["strict"] = output.strict
    return spec


# The loop sends the same OutputSchema on every step: each spelling is built once per object.
_chat_field = RecentMemo(lambda output: {"type": "json_schema", "json_schema": _named(output)})
_responses_format = RecentMemo(lambda output: {"type": "json_schema", **_named(output)})
_anthropic_format = RecentMemo(lambda output: {"type": "json_schema", "schema": dict(output.schema)})


def _chat_to_wire(output: OutputSchema, body: Json) -> None:
    body["response_format"] = _chat_field(output)


def _chat_from_wire(extra: Json) -> OutputSchema | None:
    wire = extra.get("response_format")
    spec = wire.get("json_schema") if isinstance(wire, dict) and wire.get("type") == "json_schema" else None
    if not isinstance(spec, dict) or not _plain(spec, {"name", "schema", "strict", "description"}):
        return None  # json_object, text, or a spelling with more in it: kept verbatim in Settings.extra
    del extra["response_format"]
    return _read(spec)


def _responses_to_wire(output: OutputSchema, body: Json) -> None:
    body["text"] = {**(body.get("text") or {}), "format": _responses_format(output)}  # next to text.verbosity


def _responses_from_wire(extra: Json) -> OutputSchema | None:
    text = extra.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    if not _plain(fmt, {"type", "name", "schema", "strict", "description"}):
        return None
    rest = {k: v for k, v in text.items() if k != "format"}  # type: ignore[union-attr]  # a dict, checked above
    if rest:
        extra["text"] = rest
    else:
        del extra["text"]
    return _read(fmt)


def _anthropic_to_wire(output: OutputSchema, body: Json) -> None:
    fmt = _anthropic_format(output)
    if output.name == _BETA:
        body["output_format"] = fmt
    else:
        body["output_config"] = {**(body.get("output_config") or {}), "format": fmt}  # next to effort, if any


_BETA = "output_format"
"""The name an answer read from the beta's ``output_format`` carries, so it is written back the same way
(Anthropic's schemas have no name of their own)."""


def _anthropic_from_wire(extra: Json) -> OutputSchema | None:
    config = extra.get("output_config")
    fmt = config.get("format") if isinstance(config, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and _plain(fmt, {"type", "schema"}):
        rest = {k: v for k, v in config.items() if k != "format"}  # type: ignore[union-attr]  # a dict
        if rest:
            extra["output_config"] = rest
        else:
            del extra["output_config"]
        return OutputSchema(name="answer", schema=fmt["schema"])
    beta = extra.get("output_format")
    if isinstance(beta, dict) and beta.get("type") == "json_schema" and _plain(beta, {"type", "schema"}):
        del extra["output_format"]
        return OutputSchema(name=_BETA, schema=beta["schema"])
    return None


_JSON = "application/json"


def _gemini_fields(output: OutputSchema) -> Json:
    """The two ``generationConfig`` keys: the older ``responseSchema`` if that is how the schema came (and
    it still says the same), else ``responseJsonSchema``, which takes any JSON Schema."""
    kept = unstash(output.extra, "gemini")
    legacy = kept.get("responseSchema")
    if isinstance(legacy, dict) and from_gemini(legacy) == output.schema:
        fields = {"responseMimeType": _JSON, "responseSchema": legacy}
    else:
        fields = {"responseMimeType": _JSON, "responseJsonSchema": dict(output.schema)}
    return {_SNAKE_KEYS[k]: v for k, v in fields.items()} if kept.get("snake") else fields


_SNAKE_KEYS = {
    "responseMimeType": "response_mime_type",
    "responseSchema": "response_schema",
    "responseJsonSchema": "response_json_schema",
}
"""The snake_case spelling of the keys (the service reads either; Python SDKs send it), written back as read."""


_gemini_memo = RecentMemo(_gemini_fields)


def _gemini_to_wire(output: OutputSchema, body: Json) -> None:
    body["generationConfig"] = {**(body.get("generationConfig") or {}), **_gemini_memo(output)}  # next to knobs


def _gemini_from_wire(extra: Json) -> OutputSchema | None:
    config = extra.get("generationConfig")
    if not isinstance(config, dict):
        return None
    snake = _SNAKE_KEYS["responseMimeType"] in config
    names = {v: k for k, v in _SNAKE_KEYS.items()} if snake else {k: k for k in _SNAKE_KEYS}
    said = {names.get(k, k): v for k, v in config.items()}
    if said.get("responseMimeType") != _JSON:
        return None  # text, an enum (text/x.enum), or no generationConfig left after its knobs
    schema, legacy = said.get("responseJsonSchema"), said.get("responseSchema")
    kept: Json = {"snake": True} if snake else {}
    if isinstance(schema, dict) and legacy is None:
        key = "responseJsonSchema"
        output = OutputSchema(name="answer", schema=schema, extra={"gemini": kept} if kept else {})
    elif isinstance(legacy, dict) and schema is None:
        key = "responseSchema"
        output = OutputSchema(name="answer", schema=from_gemini(legacy), extra={"gemini": {**kept, key: legacy}})
    else:
        return None  # JSON mode with no schema (or both spellings at once): kept verbatim
    rest = {k: v for k, v in config.items() if names.get(k, k) not in ("responseMimeType", key)}
    if rest:
        extra["generationConfig"] = rest
    else:
        del extra["generationConfig"]
    return output


def _bedrock_text_format(output: OutputSchema) -> Json:
    kept = unstash(output.extra, "bedrock")
    text = kept.get("schema")
    if not isinstance(text, str) or _parsed(text) != output.schema:  # Converse wants the schema as JSON text
        text = json.dumps(output.schema, ensure_ascii=False)
    spec: Json = {"schema": text}
    if not kept.get("unnamed"):
        spec["name"] = output.name
    if output.description:
        spec["description"] = output.description
    return {"type": "json_schema", "structure": {"jsonSchema": spec}}


_bedrock_format = RecentMemo(_bedrock_text_format)


def _bedrock_to_wire(output: OutputSchema, body: Json) -> None:
    body["outputConfig"] = {**(body.get("outputConfig") or {}), "textFormat": _bedrock_format(output)}


def _bedrock_from_wire(extra: Json) -> OutputSchema | None:
    config = extra.get("outputConfig")
    fmt = config.get("textFormat") if isinstance(config, dict) else None
    if not isinstance(config, dict) or not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
        return None
    if not fmt.keys() <= {"type", "structure"}:
        return None
    structure = fmt.get("structure")
    spec = structure.get("jsonSchema") if isinstance(structure, dict) and structure.keys() == {"jsonSchema"} else None
    if not isinstance(spec, dict) or not spec.keys() <= {"schema", "name", "description"}:
        return None
    text, name, description = spec.get("schema"), spec.get("name"), spec.get("description")
    schema = _parsed(text) if isinstance(text, str) else None
    if not isinstance(schema, dict) or not isinstance(name, str | None) or not isinstance(description, str | None):
        return None  # not JSON text of an object: sent on verbatim, for the service to judge
    if description == "" or name == "":
        return None  # an empty name or description would not come back: kept verbatim
    rest = {k: v for k, v in config.items() if k != "textFormat"}
    if rest:
        extra["outputConfig"] = rest
    else:
        del extra["outputConfig"]
    kept: Json = {"schema": text} if name is not None else {"schema": text, "unnamed": True}
    return OutputSchema(name=name or "answer", schema=schema, description=description or "", extra={"bedrock": kept})


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _ollama_to_wire(output: OutputSchema, body: Json) -> None:
    body["format"] = dict(output.schema)


def _ollama_from_wire(extra: Json) -> OutputSchema | None:
    schema = extra.get("format")
    if not isinstance(schema, dict):
        return None  # "json" (any JSON) or absent: kept verbatim
    del extra["format"]
    return OutputSchema(name="answer", schema=schema)


@dataclass(frozen=True, slots=True)
class NativeField:
    """How one format writes and reads ``Request.output``; ``field`` names it in messages."""

    field: str
    to_wire: Callable[[OutputSchema, Json], None]
    from_wire: Callable[[Json], OutputSchema | None]


FIELDS: dict[str, NativeField] = {
    "openai-chat": NativeField("response_format", _chat_to_wire, _chat_from_wire),
    "openai-responses": NativeField("text.format", _responses_to_wire, _responses_from_wire),
    "anthropic": NativeField("output_config.format", _anthropic_to_wire, _anthropic_from_wire),
    "gemini": NativeField("generationConfig.responseJsonSchema", _gemini_to_wire, _gemini_from_wire),
    "bedrock": NativeField("outputConfig.textFormat", _bedrock_to_wire, _bedrock_from_wire),
    "ollama": NativeField("format", _ollama_to_wire, _ollama_from_wire),
}
"""Format name -> its structured-output field. A format not listed has none."""


def native_field(fmt: str) -> str | None:
    """The name of ``fmt``'s structured-output field, or ``None`` when it has none."""
    row = FIELDS.get(fmt)
    return row.field if row is not None else None


def output_to_wire(fmt: str, output: OutputSchema | None, body: Json) -> None:
    """Write ``output`` into ``body`` in ``fmt``'s spelling; raise :class:`CannotExpress` where it has none."""
    if output is None:
        return
    row = FIELDS.get(fmt)
    if row is None:
        raise CannotExpress(
            f"{fmt} has no structured-output field; offer a final-answer tool instead "
            "(Agent(output_mode='tool'), or toolslip.convert, which does so)",
            "output",
        )
    row.to_wire(output, body)


def output_from_wire(fmt: str, extra: Json) -> OutputSchema | None:
    """Take ``fmt``'s structured-output field out of a request's leftover fields (``extra``), if it is
    there in a spelling the neutral form holds; anything else stays in ``extra`` and goes back verbatim."""
    row = FIELDS.get(fmt)
    return row.from_wire(extra) if row is not None and extra else None


def _plain(spec: Mapping[str, Any], known: set[str]) -> bool:
    return spec.keys() <= known and isinstance(spec.get("schema"), dict)


def _read(spec: Mapping[str, Any]) -> OutputSchema:
    name, strict, description = spec.get("name"), spec.get("strict"), spec.get("description")
    return OutputSchema(
        name=name if isinstance(name, str) else "answer",
        schema=spec["schema"],
        strict=strict if isinstance(strict, bool) else None,
        description=description if isinstance(description, str) else "",
    )


# --- the strict rewrite ---------------------------------------------------------------------------------

# Keywords OpenAI's strict mode rejects: each is dropped from the strict schema and reported.
_UNSUPPORTED = frozenset(
    {"not", "if", "then", "else", "patternProperties", "dependentRequired", "dependentSchemas"}
    | {"unevaluatedProperties", "propertyNames", "minProperties", "maxProperties", "default"}
)


@dataclass(frozen=True, slots=True)
class StrictSchema:
    """The strict form of a schema, and each thing that could not be carried into it (``path: what``)."""

    schema: Json
    problems: tuple[str, ...]


def strict_schema(schema: Mapping[str, Any]) -> StrictSchema:
    """The schema OpenAI's ``strict: true`` accepts: every object closed (``additionalProperties: false``)
    with every property required, a property that was optional made nullable instead, and keywords strict
    mode rejects dropped. ``problems`` says what changed meaning: a free-form map (an object with no
    properties or open ``additionalProperties``) cannot be strict, and a dropped keyword no longer checks."""
    problems: list[str] = []
    out = _strict(schema, "$", problems)
    return StrictSchema(schema=out, problems=tuple(problems))


def _strict(node: Any, path: str, problems: list[str]) -> Any:
    if isinstance(node, list):
        return [_strict(n, f"{path}[{i}]", problems) for i, n in enumerate(node)]
    if not isinstance(node, Mapping):
        return node
    out: Json = {}
    for key, value in node.items():
        if key in _UNSUPPORTED:
            if key != "default":  # a default only documents: nothing is lost but the hint
                problems.append(f"{path}: {key!r} is not supported by strict mode and was dropped")
            continue
        if key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
            out[key] = {k: _strict(v, f"{path}.{k}", problems) for k, v in value.items()}
        elif isinstance(value, Mapping | list) and key != "enum" and key != "const":
            out[key] = _strict(value, f"{path}.{key}", problems)
        else:
            out[key] = value
    if out.get("type") == "object" or "properties" in out:
        properties: Json = out.get("properties") or {}
        extra = node.get("additionalProperties")
        if not properties or extra not in (None, False):
            problems.append(f"{path}: an object with free-form keys cannot be strict; it was closed")
        required = set(node.get("required") or ())
        out["properties"] = {name: sub if name in required else _nullable(sub) for name, sub in properties.items()}
        out["required"] = list(properties)
        out["additionalProperties"] = False
    return out


def _nullable(schema: Any) -> Any:
    """``schema`` or null."""
    if not isinstance(schema, dict) or _allows_null(schema):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(schema.get("anyOf"), list):
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _allows_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(isinstance(s, Mapping) and _allows_null(s) for s in schema.get("anyOf") or ())


def drop_strict_nulls(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` with the ``null`` of each optional property that did not allow null removed.

    ``schema`` is the original (not strict) schema: where it made a property optional, the strict one made
    it required and nullable, so a strict model writes ``null`` there; the caller's type expects the key
    absent (its default). ``$ref`` into the root's ``$defs`` is followed.
    """
    defs: Mapping[str, Any] = schema.get("$defs") or {}
    return _drop(value, schema, defs, 0)


def _drop(value: Any, schema: Any, defs: Mapping[str, Any], depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 32:
        return value
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _drop(value, defs.get(ref.removeprefix("#/$defs/")), defs, depth + 1)
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        required = set(schema.get("required") or ())
        out = {}
        for key, item in value.items():
            sub = schema["properties"].get(key)
            if item is None and key not in required and not (isinstance(sub, Mapping) and _allows_null(sub)):
                continue
            out[key] = _drop(item, sub, defs, depth + 1)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_drop(v, schema["items"], defs, depth + 1) for v in value]
    for branch in schema.get("anyOf") or schema.get("oneOf") or ():
        if isinstance(value, dict) and isinstance(branch, Mapping):
            value = _drop(value, branch, defs, depth + 1)
    return value
