"""Two small tools for the examples: the weather in a city, and a web search."""

from __future__ import annotations

from .config import Tool

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
QUERY = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


async def weather(city: str) -> str:
    return f"Sunny, 21 °C in {city}."


async def web_search(query: str) -> str:
    return f"Top result for {query!r}: rain expected tomorrow."


WEATHER = Tool("weather", "Current weather in a city.", CITY, weather)
WEB_SEARCH = Tool("web_search", "Search the web.", QUERY, web_search)
