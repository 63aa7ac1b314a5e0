"""The seed's first example: one read-only tool, one question.

toolslip run examples/weather.py "What's the weather in Beijing?"
"""

from typing import Literal

from toolslip import tool

# A real tool would call a weather API; fixed data keeps the example offline and reproducible.
FAKE_TEMPERATURES = {"北京": 28, "上海": 31, "哈尔滨": 19}
ENGLISH_NAMES = {"beijing": "北京", "shanghai": "上海", "harbin": "哈尔滨"}


@tool(effects="read_only", trusted_output=True)
def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> dict[str, object]:
    """Get the current weather (temperature and sky) of one city.

    Use only when the user asks about the weather, the temperature, whether it is cold, or whether to
    take an umbrella. An unknown city returns an "error" field: say that no data exists, do not guess.

    Args:
        city: City name in Chinese or English, e.g. 北京 or Beijing.
        unit: Temperature unit; celsius unless the user asks for fahrenheit.
    """
    name = ENGLISH_NAMES.get(city.strip().lower(), city.strip())
    celsius = FAKE_TEMPERATURES.get(name)
    if celsius is None:
        return {"error": f"no weather data for {city}"}
    temp = celsius if unit == "celsius" else round(celsius * 9 / 5 + 32)
    return {"city": name, "temp": temp, "unit": unit, "desc": "cloudy"}
