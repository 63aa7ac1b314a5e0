"""What a model's usage costs, in US dollars, from the maintained ``genai-prices`` library.

No price table is kept here: prices change every month and genai-prices (pydantic's, updated with each
provider's list prices) already knows them, cache reads and writes included. It is the optional
``prices`` extra (``pip install 'toolslip[prices]'``) and is imported only when a paid model's cost is
asked for, since importing it takes about a second.

A model string's provider prefix names genai-prices' provider; the local and scripted models cost
nothing. A model genai-prices does not know (a self-hosted server behind ``openai:NAME@URL``) has no
price: ``None``, never a guess.
"""

from __future__ import annotations

import importlib.util

from ..core.errors import ConfigError
from ..core.messages import Usage

__all__ = ["PRICES_HINT", "cost", "prices_installed"]

PRICES_HINT = "pip install 'toolslip[prices]'"

_PROVIDERS = {
    "openai": "openai",
    "openai-responses": "openai",
    "azure": "azure",
    "anthropic": "anthropic",
    "gemini": "google",
    "bedrock": "aws",
}
_FREE = frozenset({"local", "scripted"})
"""Providers that run on this machine: nothing is billed."""


def prices_installed() -> bool:
    return importlib.util.find_spec("genai_prices") is not None


def cost(model: str, usage: Usage, *, required: bool = False) -> float | None:
    """US dollars ``usage`` costs on ``model`` (a model string such as ``openai:gpt-4o-mini``).

    ``None`` when the price is unknown; with ``required`` that is a :class:`ConfigError` saying why
    (a budget in dollars cannot be kept without a price). A fallback chain (``a,b,c``) costs what its
    dearest model would charge: its steps may be answered by any of them, and a budget must not be passed.
    """
    if "," in model:
        prices = [cost(part.strip(), usage, required=required) for part in model.split(",")]
        return None if None in prices else max(p for p in prices if p is not None)
    provider, _, name = model.partition(":")
    if provider in _FREE:
        return 0.0
    name = name.partition("@")[0]
    provider_id = _PROVIDERS.get(provider)
    if provider_id is None or not name:
        if required:
            raise ConfigError(f"no price is known for model {model!r}, so a cost limit cannot be kept; drop --max-cost")
        return None
    if not prices_installed():
        if required:
            raise ConfigError(f"a cost limit needs the price library: {PRICES_HINT}")
        return None
    return _price(provider_id, name, usage, required)


def _price(provider_id: str, name: str, usage: Usage, required: bool) -> float | None:
    from genai_prices import Usage as PriceUsage
    from genai_prices import calc_price

    # Our input_tokens leave out cache reads and writes (Anthropic's reading); genai-prices counts
    # them inside input_tokens, as OpenAI does, and prices the cached share at its own rate.
    priced = PriceUsage(
        input_tokens=usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
    )
    try:
        return float(calc_price(priced, name, provider_id=provider_id).total_price)
    except LookupError:
        if required:
            raise ConfigError(
                f"genai-prices has no price for {name!r} at {provider_id}, so a cost limit cannot be kept; "
                f"drop --max-cost or upgrade genai-prices"
            ) from None
        return None
