"""Request knobs whose *values* are spelled differently by each format, for ``toolslip.convert``.

A row of ``_conversion_settings.SHARED_FIELDS`` renames a field; the converters here also translate its value,
through a neutral value: Chat's effort word (``"low"``) for ``reasoning_effort``, Anthropic's object
(``{"type": "enabled", "budget_tokens": 2048}``) for ``thinking``. A converter returns ``None`` for a
value the other side has no exact spelling of, which ``convert`` then reports (an effort is not a token
budget, so neither is ever guessed from the other).

Sources of the spellings:

- Gemini ``generationConfig.thinkingConfig``: ``thinkingBudget`` (tokens; 0 turns thinking off, -1 lets the
  model decide), ``includeThoughts`` (return the thought summaries), ``thinkingLevel`` (``MINIMAL``,
  ``LOW``, ``MEDIUM``, ``HIGH``: Gemini 3's; which levels a model takes is the model's, as for OpenAI's
  efforts), https://ai.google.dev/gemini-api/docs/thinking and
  https://ai.google.dev/api/generate-content#ThinkingConfig.
- Ollama ``think`` on ``/api/chat``: ``true``/``false``, or ``"low"``/``"medium"``/``"high"`` for models
  that take an effort (gpt-oss), https://docs.ollama.com/capabilities/thinking.
- Gemini ``toolConfig.functionCallingConfig``: ``allowedFunctionNames`` is set only with mode ``ANY``,
  https://ai.google.dev/api/caching#FunctionCallingConfig; OpenAI's ``allowed_tools`` choice,
  https://platform.openai.com/docs/guides/function-calling#tool-choice.
- Bedrock Converse's ``serviceTier``: ``{"type": "priority" | "default" | "flex" | "reserved"}``,
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ServiceTier.html.
- Bedrock Converse passes Anthropic's own ``thinking`` object to Claude in
  ``additionalModelRequestFields``, unchanged:
  https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

Convert: TypeAlias = Callable[[Any], Any]
"""One value to another spelling; ``None`` when it has none."""


def _words(words: tuple[str, ...], *, upper: bool = False) -> tuple[Convert, Convert]:
    """(to wire, from wire) for an enumeration of the same words, read back whatever their case."""

    def to_wire(value: Any) -> Any:
        return (value.upper() if upper else value) if isinstance(value, str) and value in words else None

    def from_wire(value: Any) -> Any:
        word = value.lower() if isinstance(value, str) else None
        return word if word in words else None

    return to_wire, from_wire


_DISABLED = {"type": "disabled"}
_LEAST_BUDGET = 1024
"""Anthropic refuses a smaller thinking budget (https://platform.claude.com/docs/en/build-with-claude/extended-thinking)."""


def _budget(thinking: Any) -> int | None:
    """The token budget of Anthropic's ``{"type": "enabled", "budget_tokens": N}``, and nothing else."""
    if not isinstance(thinking, Mapping) or thinking.keys() != {"type", "budget_tokens"}:
        return None
    budget = thinking["budget_tokens"]
    return budget if thinking["type"] == "enabled" and type(budget) is int and budget > 0 else None


def _thinking_to_gemini(thinking: Any) -> Any:
    # Anthropic returns the thinking it was given a budget for, so the thoughts are asked for too.
    if thinking == _DISABLED:
        return {"thinkingBudget": 0}
    budget = _budget(thinking)
    return None if budget is None else {"thinkingBudget": budget, "includeThoughts": True}


def _thinking_from_gemini(config: Any) -> Any:
    if isinstance(config, Mapping) and config.get("includeThoughts") is False:
        config = {k: v for k, v in config.items() if k != "includeThoughts"}  # the default: no thoughts back
    if config == {"thinkingBudget": 0}:
        return _DISABLED
    if not isinstance(config, Mapping) or config.keys() != {"thinkingBudget", "includeThoughts"}:
        return None  # -1 (the model decides), a level, or thoughts not returned: Anthropic has none of them
    budget = config["thinkingBudget"]
    ok = config["includeThoughts"] is True and type(budget) is int and budget >= _LEAST_BUDGET
    return {"type": "enabled", "budget_tokens": budget} if ok else None


def _thinking_to_think(thinking: Any) -> Any:
    return False if thinking == _DISABLED else None  # Ollama's think has no budget


def _think_to_thinking(think: Any) -> Any:
    return _DISABLED if think is False else None


def _names(tools: Any, *, nested: bool) -> list[str] | None:
    """The function names of an OpenAI ``allowed_tools`` list (Chat nests each name in ``function``)."""
    names = []
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping) or tool.get("type") != "function":
            return None
        if nested:
            fn = tool.get("function") if tool.keys() == {"type", "function"} else None
            name = fn.get("name") if isinstance(fn, Mapping) and fn.keys() == {"name"} else None
        else:
            name = tool.get("name") if tool.keys() == {"type", "name"} else None
        if not isinstance(name, str):
            return None
        names.append(name)
    return names or None


# An allowed-tools choice whose mode is "required" is Gemini's ANY with its allowedFunctionNames; with mode
# "auto" Gemini has no spelling (allowedFunctionNames is only for ANY), so only the required one is mapped.
# Its neutral value is the list of names.


def _required_from_responses(choice: Any) -> Any:
    if not isinstance(choice, Mapping) or choice.keys() != {"type", "mode", "tools"}:
        return None
    ok = choice["type"] == "allowed_tools" and choice["mode"] == "required"
    return _names(choice["tools"], nested=False) if ok else None


def _required_from_chat(choice: Any) -> Any:
    if not isinstance(choice, Mapping) or choice.keys() != {"type", "allowed_tools"}:
        return None
    inner = choice["allowed_tools"]
    if choice["type"] != "allowed_tools" or not isinstance(inner, Mapping) or inner.keys() != {"mode", "tools"}:
        return None
    return _names(inner["tools"], nested=True) if inner["mode"] == "required" else None


def _required_from_gemini(config: Any) -> Any:
    if not isinstance(config, Mapping) or config.keys() != {"mode", "allowedFunctionNames"} or config["mode"] != "ANY":
        return None
    names = config["allowedFunctionNames"]
    return names if isinstance(names, list) and names and all(isinstance(n, str) for n in names) else None


_ALLOWED: dict[str, tuple[Convert, Convert]] = {
    "openai-responses": (
        lambda names: {
            "type": "allowed_tools",
            "mode": "required",
            "tools": [{"type": "function", "name": n} for n in names],
        },
        _required_from_responses,
    ),
    "openai-chat": (
        lambda names: {
            "type": "allowed_tools",
            "allowed_tools": {
                "mode": "required",
                "tools": [{"type": "function", "function": {"name": n}} for n in names],
            },
        },
        _required_from_chat,
    ),
    "gemini": (lambda names: {"mode": "ANY", "allowedFunctionNames": list(names)}, _required_from_gemini),
}


_TIERS = ("default", "flex", "priority")
"""The service tiers OpenAI and Bedrock both sell under the same word (OpenAI's auto and scale, Bedrock's
reserved, are their own)."""


def _tier_from_bedrock(tier: Any) -> Any:
    ok = isinstance(tier, Mapping) and tier.keys() == {"type"} and tier["type"] in _TIERS
    return tier["type"] if ok else None


def _summary_to_gemini(summary: Any) -> Any:
    # Responses' summary "auto" asks for the reasoning's summary at whatever detail the model gives, as
    # includeThoughts does; "concise" and "detailed" have no Gemini spelling.
    return True if summary == "auto" else False if summary == "off" else None


def _summary_from_gemini(include: Any) -> Any:
    return "auto" if include is True else "off" if include is False else None


_FORMATS = {"json": {"type": "json_object"}, "text": {"type": "text"}}
_JSON_OBJECT: tuple[Convert, Convert] = (
    lambda mode: _FORMATS.get(mode),
    lambda value: next((mode for mode, spelled in _FORMATS.items() if spelled == value), None),
)
"""JSON mode as OpenAI spells it: Chat's ``response_format`` and Responses' ``text.format`` objects."""


def _mime() -> tuple[Convert, Convert]:
    types = {"json": "application/json", "text": "text/plain"}
    back = {v: k for k, v in types.items()}
    return (lambda mode: types.get(mode), lambda value: back.get(value) if isinstance(value, str) else None)


def _modalities(*, upper: bool) -> tuple[Convert, Convert]:
    """A list of output kinds (``["text", "audio"]``; Gemini's are upper case), as the same lower-case words."""
    words = ("text", "audio", "image")

    def to_wire(kinds: Any) -> Any:
        return [k.upper() if upper else k for k in kinds] if isinstance(kinds, tuple) else None

    def from_wire(value: Any) -> Any:
        if not isinstance(value, list) or not value:
            return None
        kinds = tuple(v.lower() if isinstance(v, str) else "" for v in value)
        return kinds if all(k in words for k in kinds) else None

    return to_wire, from_wire


DEFAULTS: dict[str, Any] = {"json_mode": "text", "modalities": ("text",), "reasoning_summary": "off"}
"""Neutral values that ask for what every format does unasked (plain text out, text only, no reasoning
summary): a target with no spelling for them leaves them out, and loses nothing."""


CONVERTERS: dict[tuple[str, str], tuple[Convert, Convert]] = {
    ("service_tier", "bedrock"): (lambda word: {"type": word} if word in _TIERS else None, _tier_from_bedrock),
    **{("allowed_tools", fmt): pair for fmt, pair in _ALLOWED.items()},
    ("reasoning_effort", "gemini"): _words(("minimal", "low", "medium", "high"), upper=True),
    ("reasoning_effort", "ollama"): _words(("low", "medium", "high")),
    ("reasoning_summary", "gemini"): (_summary_to_gemini, _summary_from_gemini),
    ("reasoning_summary", "openai-responses"): (lambda s: None if s == "off" else s, lambda s: s),  # off: null
    ("reasoning_effort", "anthropic"): _words(("low", "medium", "high")),
    ("json_mode", "openai-chat"): _JSON_OBJECT,
    ("json_mode", "openai-responses"): _JSON_OBJECT,
    ("json_mode", "gemini"): _mime(),
    ("json_mode", "ollama"): (
        lambda mode: "json" if mode == "json" else None,
        lambda v: "json" if v == "json" else None,
    ),
    ("modalities", "openai-chat"): _modalities(upper=False),
    ("modalities", "gemini"): _modalities(upper=True),
    ("thinking", "gemini"): (_thinking_to_gemini, _thinking_from_gemini),
    ("thinking", "ollama"): (_thinking_to_think, _think_to_thinking),
}
"""(shared field, format) -> (neutral value to the format's, the format's to neutral); absent: the same value."""


def to_format(shared: str, fmt: str, value: Any) -> Any:
    """``value`` (neutral) as format ``fmt`` spells it; ``None`` when it has no spelling of that value."""
    pair = CONVERTERS.get((shared, fmt))
    return value if pair is None else pair[0](value)


def from_format(shared: str, fmt: str, value: Any) -> Any:
    """``value`` (as format ``fmt`` spells it) in neutral form; ``None`` when it has no neutral one."""
    pair = CONVERTERS.get((shared, fmt))
    return value if pair is None else pair[1](value)
