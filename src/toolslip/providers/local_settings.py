"""Which request settings the embedded model honours, which it ignores (and says so), which it refuses.

``toolslip serve --model local`` receives whatever the official SDKs and agent frameworks send, and the wire
formats leave every field they do not map into ``Settings.extra`` in the wire's own spelling. Refusing the
fields the model cannot act on made every OpenAI Agents SDK request fail (it always sends
``"include": []``), so each field of the SDKs' request types falls in one of three groups here:

* honoured: the sampling options llama.cpp has (``seed``, ``top_p``, ``top_k``, penalties...), the output
  limits (``max_completion_tokens``, ``max_tool_calls``), and a field whose value asks for what the model
  does anyway (``"include": []``, ``"response_format": {"type": "text"}``, ``"thinking": {"type":
  "disabled"}``...);
* ignored: everything else the services define (bookkeeping ids, caching, reasoning effort, logprobs,
  audio...). The answer lists them (``ModelResponse.extra[IGNORED]``), and ``serve`` shows them in its log
  line and the ``x-toolslip-ignored`` header;
* refused: a key no service defines (a typo such as ``mirostat``), as a :class:`ConfigError` naming it,
  which ``serve`` answers with a 400 like the real services.

Structured output (``response_format`` / ``text.format`` / ``output_config`` / Gemini's ``generationConfig``
/ Converse's ``outputConfig`` / Ollama's ``format`` with a JSON schema) is read by the formats into
``Request.output``; what still arrives here in those fields (JSON mode with no schema) is reported as
ignored, never refused.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import ConfigError
from ..core.messages import Settings, ToolSpec, UseTool
from ..formats._knob_values import from_format
from ..formats.conversion import SHARED_FIELDS

__all__ = ["SAMPLING_KEYS", "Triage", "capped", "offer", "triage"]

SAMPLING_KEYS = frozenset(
    {"seed", "top_p", "top_k", "min_p", "repeat_penalty", "presence_penalty", "frequency_penalty"}
)
"""Sampling options a request may pass through ``Settings.extra``, under their llama.cpp names."""

# Fields the formats already turned into Settings (they stay in extra only to round-trip an empty or
# one-string spelling), and the services' names of the output limit.
_MAPPED = frozenset(
    {"tools", "tool_choice", "parallel_tool_calls", "stop", "stop_sequences", "system", "temperature", "max_tokens"}
)
_LIMITS = ("max_completion_tokens", "max_output_tokens")

# Values that ask for exactly what the model does anyway: accepted silently.
_DEFAULTS: Mapping[str, tuple[Any, ...]] = {
    "include": ([],),
    "response_format": ({"type": "text"},),
    "text": ({"format": {"type": "text"}}, {}),
    "thinking": ({"type": "disabled"},),
    "modalities": (["text"],),
    "truncation": ("disabled",),
    "logprobs": (False,),
    "top_logprobs": (0,),
    "n": (1,),
    "store": (False,),
    "background": (False,),
    "metadata": ({},),
}

# Every other field of the official SDKs' request types (openai.types.chat.completion_create_params,
# openai.types.responses.response_create_params, anthropic.types.message_create_params), and what
# frameworks add (OpenAI's older "functions"). The model cannot act on them; they are reported, not refused.
_KNOWN = frozenset(
    {
        # OpenAI Chat Completions
        "audio",
        "function_call",
        "functions",
        "logit_bias",
        "logprobs",
        "metadata",
        "modalities",
        "moderation",
        "n",
        "prediction",
        "prompt_cache_key",
        "prompt_cache_options",
        "prompt_cache_retention",
        "reasoning_effort",
        "response_format",
        "safety_identifier",
        "service_tier",
        "store",
        "top_logprobs",
        "user",
        "verbosity",
        "web_search_options",
        # OpenAI Responses
        "access_programs",
        "background",
        "background_options",
        "context_management",
        "image",
        "include",
        "prompt",
        "reasoning",
        "text",
        "truncation",
        # Anthropic Messages
        "cache_control",
        "container",
        "diagnostics",
        "inference_geo",
        "mcp_servers",
        "output_config",
        "output_format",
        "speed",
        "thinking",
        "user_profile_id",
        "workspace_id",
        # Gemini, Bedrock Converse and Ollama (their objects of knobs are opened by _opened): what their
        # readers leave in Settings.extra, among it what toolslip.convert writes (an allowed-names
        # toolConfig, Converse's serviceTier)
        "cachedContent",
        "safetySettings",
        "toolConfig",
        "additionalModelResponseFieldPaths",
        "guardrailConfig",
        "performanceConfig",
        "promptVariables",
        "requestMetadata",
        "serviceTier",
        "format",
        "keep_alive",
        # What Converse's outputConfig holds besides a JSON schema (read into Request.output)
        "outputConfig",
    }
)


_NATIVE_KNOBS = {
    "generationConfig": "gemini",
    "inferenceConfig": "bedrock",
    "additionalModelRequestFields": "bedrock",
    "options": "ollama",
}
"""Gemini's, Converse's and Ollama's objects of knobs, which their readers keep whole in ``Settings.extra``."""


def _shared(spelled: str, fmt: str, value: Any) -> tuple[str, Any]:
    """(name, value) of a knob of format ``fmt`` that ``toolslip.convert`` knows, in its shared name and
    neutral value (Gemini's ``thinkingConfig: {thinkingBudget: 0}`` is ``thinking: {type: disabled}``);
    else ``spelled`` and ``value`` as they are."""
    for name, spellings in SHARED_FIELDS.items():
        neutral = from_format(name, fmt, value) if spellings.get(fmt) == spelled else None
        if neutral is not None:
            return name, neutral
    return spelled, value


def _opened(extra: Mapping[str, Any]) -> dict[str, Any]:
    """``extra`` with the native objects of knobs opened, each knob in its shared name (Gemini's ``topK`` is
    ``top_k``) or, for one toolslip does not translate, its dotted path: a service's field, only ignored."""
    out = dict(_shared(k, "ollama", v) if k == "think" else (k, v) for k, v in extra.items())
    for head, fmt in _NATIVE_KNOBS.items():
        knobs = out.pop(head, None)
        for key, value in knobs.items() if isinstance(knobs, Mapping) else ():
            name, neutral = _shared(f"{head}.{key}", fmt, value)
            out[name] = neutral
    return out


@dataclass(frozen=True, slots=True)
class Triage:
    """A request's settings sorted out: llama.cpp's options, the call limit, and the fields ignored."""

    options: dict[str, Any]
    """``max_tokens``, ``temperature``, ``stop`` and the sampling options, in llama.cpp's names."""
    max_tool_calls: int | None
    """The Responses API's ``max_tool_calls``: at most this many calls in one answer."""
    ignored: tuple[str, ...]
    """Fields present, not null, and not acted on (sorted)."""


def triage(settings: Settings, *, max_tokens: int, temperature: float, seed: int | None) -> Triage:
    """Sort ``settings`` into llama.cpp options and ignored fields; ``ConfigError`` for a key nobody defines.

    ``max_tokens``, ``temperature`` and ``seed`` are the model's own defaults, used where the request
    sets none; with no seed on either, one is drawn for this request.
    """
    extra = {k: v for k, v in _opened(settings.extra).items() if v is not None}
    if extra.get("n", 1) != 1:  # serve asks once per choice; a direct caller would silently get one
        raise ConfigError("the local model returns one choice per request; drop n or ask again for more")
    known = {k for k in extra if "." in k}  # inside a native object of knobs: a service's own field
    unknown = set(extra) - SAMPLING_KEYS - _MAPPED - _KNOWN - known - {*_LIMITS, "max_tool_calls"}
    if unknown:
        raise ConfigError(
            f"the local model does not understand settings {sorted(unknown)}; "
            f"it accepts {sorted(SAMPLING_KEYS)} and the OpenAI and Anthropic request fields"
        )
    limit = next((extra[k] for k in _LIMITS if isinstance(extra.get(k), int)), None)
    options: dict[str, Any] = {
        "max_tokens": settings.max_tokens or limit or max_tokens,
        "temperature": temperature if settings.temperature is None else settings.temperature,
        "seed": secrets.randbelow(2**31) if seed is None else seed,
        "stop": list(settings.stop),
    }
    options.update((k, v) for k, v in extra.items() if k in SAMPLING_KEYS)
    calls = extra.get("max_tool_calls")
    ignored = sorted(k for k, v in extra.items() if k in _KNOWN | known and v not in _DEFAULTS.get(k, ()))
    return Triage(options=options, max_tool_calls=calls if isinstance(calls, int) else None, ignored=tuple(ignored))


def capped(max_calls: int | None, asked: int | None) -> int | None:
    """Calls per turn under a request's ``max_tool_calls`` (``asked``), at least one."""
    return max_calls if asked is None else max(1, min(max_calls or asked, asked))


def offer(specs: tuple[ToolSpec, ...], settings: Settings) -> tuple[tuple[ToolSpec, ...], bool, int | None]:
    """Which tools the grammar allows, whether a text answer is allowed, and how many calls per turn."""
    choice = settings.tool_choice
    # One call per turn unless parallel calls are asked for: the 0.5B model otherwise fills its output
    # limit with copies of the same call.
    max_calls = None if settings.parallel_tool_calls else 1
    if choice == "none":
        return (), True, max_calls
    if isinstance(choice, UseTool):
        chosen = tuple(s for s in specs if s.name == choice.name)
        if not chosen:
            raise ConfigError(f"tool_choice names {choice.name!r}, which is not among the offered tools")
        return chosen, False, max_calls
    return specs, choice != "required" or not specs, max_calls
