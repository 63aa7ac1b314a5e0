"""The seed's weather tool: the smallest complete tool-calling example (fake data, works offline).

toolslip run --tools examples/weather.py "What's the weather in Beijing?"
"""

from __future__ import annotations

from typing import Literal

from toolslip import tool

FAKE_TEMPERATURES = {"北京": 28, "上海": 31, "哈尔滨": 19}
"""Celsius, keyed by the Chinese city name; a real tool would call a weather service here."""

ENGLISH_NAMES = {"beijing": "北京", "shanghai": "上海", "harbin": "哈尔滨"}


@tool(effects="read_only")
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, object]:
    """Get the current weather in a city. Use only when the user asks about the weather, temperature,
    whether it is cold, or whether to take an umbrella.

    Args:
        city: The city's name, e.g. 北京 (Beijing) or 上海 (Shanghai).
        unit: The temperature unit; celsius unless the user asks for fahrenheit.
    """
    key = ENGLISH_NAMES.get(city.strip().lower(), city.strip())
    celsius = FAKE_TEMPERATURES.get(key)
    if celsius is None:
        return {"error": f"no data for {city}; known cities: {', '.join(FAKE_TEMPERATURES)}"}
    temp = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": key, "temp": temp, "unit": unit, "desc": "cloudy"}
