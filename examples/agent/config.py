"""How a session is set up: which provider and model, and the tools the agent may use."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

Provider = Literal["anthropic", "openai"]
DEFAULT_MODELS: dict[Provider, str] = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o"}


@dataclass(frozen=True)
class SessionConfig:
    """One session's settings.

    ``provider`` picks the SDK (``anthropic`` Messages or ``openai`` Chat
    Completions), ``model`` the model (empty: the provider's entry in
    :data:`DEFAULT_MODELS`); ``base_url`` points the SDK elsewhere than the provider (a
    proxy, a local server). ``stream`` chooses the streaming or the JSON path. A dropped stream or a
    failing server is retried ``retry_limit`` times, each in a fresh model step, after
    ``backoff`` seconds (doubling each time; a provider's ``retry-after`` wins).

    ``stream_error`` says what an error the provider reports in the middle of a
    stream (an ``error`` event after the 200), and that is not retried, does:
    ``"fail_turn"`` writes the call's completion (with the error) and ends the turn
    in an error turn; ``"leave_intent"`` writes no completion and leaves the turn
    running, as a durable runtime does: the call's intent dangles, and
    :meth:`Agent.resume` re-issues it once.
    """

    provider: Provider = "anthropic"
    model: str = ""
    api_key: str = "test-key"
    base_url: str | None = None
    stream: bool = True
    system: str | None = None
    max_tokens: int = 1024
    retry_limit: int = 2
    backoff: float = 0.01
    max_steps: int = 8
    stream_error: Literal["fail_turn", "leave_intent"] = "fail_turn"


@dataclass(frozen=True)
class Tool:
    """A tool the model may call: a JSON schema for its arguments and a function."""

    name: str
    description: str
    parameters: dict[str, Any]
    run: Callable[..., Awaitable[str]]
