"""What a model was asked, and how each call went: :class:`Request`, :class:`ModelCall`.

A :class:`Request` is a provider request parsed into neutral form (the codecs in
:mod:`..providers` parse them); a :class:`ModelCall` is the log entry of one call
as a fake model or a cassette served it. :data:`Provider` names the wire formats;
it is defined here, with the model, and the request routes
(:mod:`..providers.routes`) use it only for type checking, so that detecting a
provider on the replay path loads no pydantic.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, NonNegativeInt, model_validator

from .parts import Frozen, MessagePart, Text, ToolResult
from .replies import Reply

__all__ = ["PROVIDERS", "Message", "ModelCall", "Outcome", "Provider", "Request", "Tool"]

Provider = Literal["anthropic", "openai_chat", "openai_responses", "gemini"]
"""A provider wire format: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
Gemini ``generateContent``."""

PROVIDERS: tuple[Provider, ...] = ("anthropic", "openai_chat", "openai_responses", "gemini")
"""Every :data:`Provider`, in order."""

Outcome = Literal["completed", "cut", "error_event", "http_error", "timeout", "cancelled"]
"""How a model call ended, as its log entry says."""


class Tool(Frozen):
    """A tool offered to the model in a request."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class Message(Frozen):
    """One message of a request's conversation, in neutral form."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    parts: list[MessagePart] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))


class Request(Frozen):
    """A provider request parsed into neutral form, with the raw JSON kept."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    provider: Provider
    model: str | None = None
    system: str | None = None
    messages: list[Message] = Field(default_factory=list)
    tools: list[Tool] = Field(default_factory=list)
    stream: bool = False
    raw: dict[str, Any] = Field(default_factory=dict)

    @property
    def last_user_text(self) -> str | None:
        """Text of the last message the user wrote, or ``None`` when there is none.

        A message that only carries tool results is not the user's: Anthropic and
        Gemini send tool results in a ``user`` message, OpenAI in ``tool`` messages,
        and issue 20 saw this read ``""`` after a tool round on Anthropic and the
        question on OpenAI. It means the question on every provider.
        """
        for message in reversed(self.messages):
            if message.role == "user" and not _only_tool_results(message):
                return message.text
        return None

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result sent back to the model, in order."""
        return [p for m in self.messages for p in m.parts if isinstance(p, ToolResult)]


def _only_tool_results(message: Message) -> bool:
    return bool(message.parts) and all(isinstance(p, ToolResult) for p in message.parts)


class ModelCall(Frozen):
    """One model call as the fake or the cassette served it: the log entry.

    ``status`` is ``None`` when no response started (cancelled while held, read
    timeout before the status line); ``events_sent`` counts SSE events delivered.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    index: NonNegativeInt
    provider: Provider
    method: str = "POST"
    url: str
    streaming: bool
    request: Request
    status: int | None = None
    outcome: Outcome
    events_sent: NonNegativeInt = 0
    reply: Reply | None = None
    error: str | None = None
    client: str | None = None
    """The client library that sent the call, read from its headers
    (``anthropic 2.17.0 (python, CPython 3.12.3)``, ``node fetch (node)``...)."""

    @model_validator(mode="after")
    def _outcome_matches_status(self) -> ModelCall:
        if self.outcome == "http_error" and (self.status or 0) < 400:
            raise ValueError(f"outcome http_error needs status >= 400, got {self.status}")
        return self
