"""Small builders shared by the matching tests."""

from __future__ import annotations

import json
from typing import Any

from pytest_agentreplay.cassettes.cassette import RecordedRequest

ANTHROPIC = "https://api.anthropic.com/v1/messages"
CHAT = "https://api.openai.com/v1/chat/completions"
RESPONSES = "https://api.openai.com/v1/responses"


def req(
    url: str = ANTHROPIC,
    body: Any = None,
    *,
    method: str = "POST",
    text: str | None = None,
    headers: dict[str, str] | None = None,
) -> RecordedRequest:
    """A request with a parsed JSON ``body``, or a raw ``text`` body."""
    return RecordedRequest(method=method, url=url, headers=headers or {}, json=body, body=text)


def conversation(city: str = "Leeds", *, turns: int = 1, **extra: Any) -> dict[str, Any]:
    """An Anthropic request body after a weather tool call for ``city``."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What's the weather?"}]
    for turn in range(turns):
        messages += [
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me check."},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{turn}",
                        "name": "weather",
                        "input": {"city": city},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": f"toolu_{turn}", "content": "Sunny, 21C"}
                ],
            },
        ]
    body = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 1024,
        "temperature": 0.2,
        "messages": messages,
        "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
    }
    body.update(extra)
    return body


def as_text(body: Any, **dumps: Any) -> str:
    return json.dumps(body, **dumps)
