"""The request knobs with no neutral slot, for ``toolslip.convert``: translated to the target, or reported.

A request's ``Settings.extra`` holds the body fields no neutral slot takes (``top_k``, ``reasoning_effort``,
Gemini's ``generationConfig``...). :data:`SHARED_FIELDS` says how each format spells the knobs several of
them have; :func:`translate_settings` writes each field the target has in its spelling (the *values*
through ``_knob_values``) and reports the rest through the plan; :func:`unsaid_stream` says the streaming
default of a body without ``stream`` where the target's default is the other one. Everything else the
conversion checks (messages, tools, structured output) is in ``conversion`` and ``_conversion_parts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..core.messages import Settings, UseTool
from ._conversion_plan import URL_MODEL, Plan
from ._gemini_media import camel
from ._knob_values import DEFAULTS, from_format, to_format
from ._wire import EMPTY_VALUES

__all__ = ["SHARED_FIELDS", "translate_settings", "unsaid_stream"]


SHARED_FIELDS: dict[str, dict[str, str]] = {
    "stream": {"openai-chat": "stream", "openai-responses": "stream", "anthropic": "stream", "ollama": "stream"},
    "top_p": {
        "openai-chat": "top_p",
        "openai-responses": "top_p",
        "anthropic": "top_p",
        "gemini": "generationConfig.topP",
        "bedrock": "inferenceConfig.topP",
        "ollama": "options.top_p",
    },
    "top_k": {
        "anthropic": "top_k",
        "gemini": "generationConfig.topK",
        "bedrock": "additionalModelRequestFields.top_k",
        "ollama": "options.top_k",
    },
    "seed": {"openai-chat": "seed", "gemini": "generationConfig.seed", "ollama": "options.seed"},
    "frequency_penalty": {
        "openai-chat": "frequency_penalty",
        "gemini": "generationConfig.frequencyPenalty",
        "ollama": "options.frequency_penalty",
    },
    "presence_penalty": {
        "openai-chat": "presence_penalty",
        "gemini": "generationConfig.presencePenalty",
        "ollama": "options.presence_penalty",
    },
    "n": {"openai-chat": "n", "gemini": "generationConfig.candidateCount"},
    "logprobs": {"openai-chat": "logprobs", "gemini": "generationConfig.responseLogprobs", "ollama": "logprobs"},
    "top_logprobs": {
        "openai-chat": "top_logprobs",
        "openai-responses": "top_logprobs",
        "gemini": "generationConfig.logprobs",
        "ollama": "top_logprobs",
    },
    "allowed_tools": {
        "openai-chat": "tool_choice",
        "openai-responses": "tool_choice",
        "gemini": "toolConfig.functionCallingConfig",
    },
    "user": {"openai-chat": "user", "openai-responses": "user", "anthropic": "metadata.user_id"},
    "metadata": {"openai-chat": "metadata", "openai-responses": "metadata"},
    "service_tier": {"openai-chat": "service_tier", "openai-responses": "service_tier", "bedrock": "serviceTier"},
    "json_mode": {
        "openai-chat": "response_format",
        "openai-responses": "text.format",
        "gemini": "generationConfig.responseMimeType",
        "ollama": "format",
    },
    "modalities": {"openai-chat": "modalities", "gemini": "generationConfig.responseModalities"},
    "reasoning_effort": {
        "openai-chat": "reasoning_effort",
        "openai-responses": "reasoning.effort",
        "anthropic": "output_config.effort",
        "gemini": "generationConfig.thinkingConfig.thinkingLevel",
        "ollama": "think",
    },
    "reasoning_summary": {
        "openai-responses": "reasoning.summary",
        "gemini": "generationConfig.thinkingConfig.includeThoughts",
    },
    "thinking": {
        "anthropic": "thinking",
        "gemini": "generationConfig.thinkingConfig",
        "bedrock": "additionalModelRequestFields.thinking",
        "ollama": "think",
    },
}
"""Request fields with no neutral slot that mean the same in several formats: neutral name -> spelling.

``json_mode`` is JSON mode without a schema (a schema is structured output, read apart by ``structured``);
``modalities`` what the answer may hold (text, audio, images). ``metadata.user_id`` is Anthropic's one
metadata key; OpenAI's ``metadata`` is a free map of strings. A dotted spelling is a key inside an object
field (``generationConfig.thinkingConfig.thinkingLevel``): the rest of that object (Responses'
``reasoning.summary``) is reported like any field the target has no slot for. Where the formats spell the
*values* differently too (an effort word, a thinking budget), the value is translated by ``_knob_values``
and refused when the target has no exact spelling of it, unless it asks for what every format does unasked
(``_knob_values.DEFAULTS``): then it is left out, and reported.
Legacy functions spell everything as Chat does.

Sources: Gemini ``GenerationConfig`` (https://ai.google.dev/api/generate-content#generationconfig: ``seed``,
``topK``, ``presencePenalty``, ``frequencyPenalty``, ``candidateCount``, ``responseLogprobs``, ``logprobs``
= how many top candidates, ``thinkingConfig``); Ollama's ``options`` and top-level ``think``,
``logprobs``, ``top_logprobs`` (https://docs.ollama.com/api/chat); Bedrock Converse takes the knobs
outside ``inferenceConfig`` in the model's own spelling in ``additionalModelRequestFields``, where
Anthropic's models read ``top_k`` and ``thinking``
(https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference-call.html); Converse's
``serviceTier`` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ServiceTier.html);
Anthropic's ``output_config.effort`` (https://platform.claude.com/docs/en/build-with-claude/effort); JSON
mode: Chat's ``response_format: {"type": "json_object"}``, Responses' ``text.format``, Gemini's
``responseMimeType: "application/json"``, Ollama's ``format: "json"`` (https://docs.ollama.com/api/chat).
"""


def _said_elsewhere(key: str, value: Any, settings: Settings) -> bool:
    """Whether a body field says nothing (an empty list of tools, a null stop) or what a neutral slot already
    says (``Settings.stop``; Chat's untyped spelling of the named choice that ``Settings.tool_choice`` holds,
    Mistral's ``"any"`` for ``"required"``)."""
    if value in EMPTY_VALUES or (key == "stop" and (value,) == settings.stop):
        return True
    if key == "tool_choice" and value == "any":
        return settings.tool_choice == "required"  # Mistral's word for it
    return key == "tool_choice" and isinstance(settings.tool_choice, UseTool)


def translate_settings(plan: Plan, settings: Settings) -> Settings:
    """The body fields with no neutral slot, translated where the target has them, reported where not."""
    if plan.family:
        return settings
    extra: dict[str, Any] = {}
    max_tokens = settings.max_tokens
    for key, value in settings.extra.items():
        if _said_elsewhere(key, value, settings) or (key == "model" and plan.source == "gemini"):
            continue  # (a model Gemini's body names is the request's model, written where the target names it)
        anyway = _said_anyway(plan.target, key, value)
        if anyway is not None:
            plan.note(f"settings.extra.{key}", *anyway)
            continue
        if key in _NESTED_SETTINGS and isinstance(value, Mapping):
            _nested(plan, key, value, extra)
            continue
        if key == "max_completion_tokens" and max_tokens is None and type(value) is int:
            max_tokens = value  # Chat's newer name for the output limit
            continue
        for name, spell in SHARED_FIELDS.items():
            head, _, inner = spell.get(_family(plan.source), "").partition(".")
            if inner and key == head and isinstance(value, Mapping) and inner in value:
                rest = dict(value)
                if _put(plan, extra, name, rest.pop(inner)):
                    value = {k: v for k, v in rest.items() if v not in EMPTY_VALUES}
        if value in EMPTY_VALUES or _translated(plan, extra, key, value):
            continue  # all of it said in the target's own spelling
        what = (
            f"a tool_choice of type {value.get('type')!r}"
            if key == "tool_choice" and isinstance(value, Mapping)
            else _unsaid(plan, key, value)
        )
        if plan.cannot(f"settings.extra.{key}", what):
            extra[key] = value  # pragma: no cover - mark keeps nothing for a field
    if max_tokens == settings.max_tokens and extra == settings.extra:
        return settings
    return replace(settings, max_tokens=max_tokens, extra=extra)


_STREAMS_BY_ENDPOINT = {
    "gemini": "Gemini streams by its endpoint, :streamGenerateContent?alt=sse",
    "bedrock": "Converse streams by its endpoint, /converse-stream",
}
"""Targets whose body has no ``stream`` field: the caller picks the endpoint (the transports and ``serve`` do)."""
_USAGE_IN_EVERY_STREAM = frozenset({"anthropic", "openai-responses", "gemini", "bedrock", "ollama"})
"""Targets whose streams always end with the token counts (``message_delta``, ``response.completed``,
``usageMetadata``, the ``metadata`` event, the last ``done`` line), which Chat asks for with ``include_usage``."""


def _said_anyway(target: str, key: str, value: Any) -> tuple[str, str] | None:
    """(what, how handled) for a body field the target does without: it asks for what the target does
    anyway, or the target says it outside the body. ``None`` for any other field."""
    if key == "n" and value == 1 and type(value) is int:
        return "request field 'n' (1, one answer: every format's default)", "left out"
    if key == "stream" and target in _STREAMS_BY_ENDPOINT and type(value) is bool:
        if value:
            return f"request field 'stream' (true: {_STREAMS_BY_ENDPOINT[target]})", "left out of the body"
        return "request field 'stream' (false: one answer, the endpoint's default)", "left out"
    if key == "stream_options" and value == {"include_usage": True} and target in _USAGE_IN_EVERY_STREAM:
        what = f"request field 'stream_options' (include_usage: {target} streams always report usage at their end)"
        return what, "left out"
    if key == "keep_alive" and target != "ollama":
        return "request field 'keep_alive' (how long Ollama keeps the model loaded; the answer is the same)", "left out"
    if key == "cache_control" and isinstance(value, Mapping) and value.get("type") == "ephemeral":
        # Anthropic's automatic caching: a hint for its prompt cache, as a block's cache_control is.
        return "request field 'cache_control' (a prompt-cache hint; the answer is the same without it)", "left out"
    return None


def unsaid_stream(plan: Plan, source: Settings, settings: Settings, request: bool) -> Settings:
    """Say the default of a request body with no ``stream`` field (``source``) where the target's default is
    the other one: Ollama streams unless told ``"stream": false``, the OpenAI formats and Anthropic answer
    once. ``request`` is False for a tool list, which says nothing of streaming."""
    where = "settings.extra.stream"
    if not request or "stream" in source.extra:
        return settings
    if plan.target == "ollama" and plan.source not in URL_MODEL:  # Gemini's, Converse's endpoint says it
        plan.note(where, "request field 'stream' (absent: one answer; Ollama streams unless told)", "set to false")
        return replace(settings, extra={**settings.extra, "stream": False})
    if plan.source != "ollama":
        return settings
    if plan.target in _STREAMS_BY_ENDPOINT:
        what = f"request field 'stream' (absent: Ollama streams; {_STREAMS_BY_ENDPOINT[plan.target]})"
        plan.note(where, what, "left out of the body")
        return settings
    plan.note(where, "request field 'stream' (absent: Ollama streams by default)", "set to true")
    return replace(settings, extra={**settings.extra, "stream": True})


_NESTED_SETTINGS = frozenset(
    {"generationConfig", "inferenceConfig", "options", "toolConfig", "additionalModelRequestFields"}
)
"""Gemini's, Converse's and Ollama's objects of knobs: each knob in them is translated or reported alone."""


def _nested(plan: Plan, head: str, value: Mapping[str, Any], extra: dict[str, Any]) -> None:
    source = _family(plan.source)
    for key, inner in _camel(source, value).items():
        if inner in EMPTY_VALUES:
            continue
        inner = _camel(source, inner) if isinstance(inner, Mapping) else inner
        spelled = f"{head}.{key}"
        if _translated(plan, extra, spelled, inner):
            continue
        if isinstance(inner, Mapping) and any(
            s.get(source, "").startswith(f"{spelled}.") for s in SHARED_FIELDS.values()
        ):
            _nested(plan, spelled, inner, extra)  # Gemini's thinkingConfig: its keys are knobs of their own
            continue
        plan.cannot(f"settings.extra.{spelled}", _unsaid(plan, spelled, inner))


def _camel(source: str, knobs: Mapping[str, Any]) -> Mapping[str, Any]:
    """Gemini's knobs in camelCase: its API reads ``thinking_budget`` as ``thinkingBudget``, and SDKs send either."""
    return camel(dict(knobs))[0] if source == "gemini" else knobs


def _family(fmt: str) -> str:
    return "openai-chat" if fmt == "openai-functions" else fmt


def _sharing(plan: Plan, spelled: str) -> list[str]:
    """The shared fields the source spells ``spelled`` and the target has."""
    source, target = _family(plan.source), _family(plan.target)
    return [n for n, spell in SHARED_FIELDS.items() if spell.get(source) == spelled and target in spell]


def _translated(plan: Plan, extra: dict[str, Any], spelled: str, value: Any) -> bool:
    """Whether the body field ``spelled`` was written into ``extra`` in the target's spelling (or left out
    because it asks for the default every format has)."""
    source = _family(plan.source)
    return any(_put(plan, extra, name, value) for name, spell in SHARED_FIELDS.items() if spell.get(source) == spelled)


def _unsaid(plan: Plan, spelled: str, value: Any) -> str:
    """What a refusal of the body field ``spelled`` says: the value, when the target has the field."""
    if _sharing(plan, spelled):
        return f"the value {value!r} of request field {spelled!r} (no exact spelling of it in {plan.target})"
    return f"request field {spelled!r}"


def _put(plan: Plan, extra: dict[str, Any], shared: str, value: Any) -> bool:
    """Spell shared field ``shared`` for the target in ``extra``; False when the target has no such field or
    no exact spelling of ``value``."""
    spelling = SHARED_FIELDS[shared].get(_family(plan.target))
    neutral = from_format(shared, _family(plan.source), value)
    spelled = None if neutral is None or spelling is None else to_format(shared, _family(plan.target), neutral)
    if spelling is None or spelled is None:
        if neutral is None or neutral != DEFAULTS.get(shared):
            return False
        source = SHARED_FIELDS[shared][_family(plan.source)]
        plan.note(
            f"settings.extra.{source}", f"request field {source!r} ({value!r}: every format's default)", "left out"
        )
        return True
    *heads, last = spelling.split(".")
    at = extra
    for head in heads:
        at[head] = dict(at.get(head) or {})  # a copy: the source's own objects are never changed
        at = at[head]
    at[last] = spelled
    return True
