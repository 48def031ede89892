"""Provider-neutral data model: what a model said, how it failed, what it was asked.

Every wire codec in :mod:`.providers` translates between these
types and one provider's JSON / SSE format, so one script of :class:`Reply`
objects serves Anthropic Messages, OpenAI Chat Completions and OpenAI Responses
alike. The types are pydantic models so they validate user input early (a typo
in a script fails at construction, not deep inside a stream) and serialize into
run logs and snapshots unchanged.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt, model_validator

# Defined with the routes, which replay reads without loading this (pydantic) model.
from .providers.routes import PROVIDERS, Provider

__all__ = [
    "PROVIDERS",
    "Fault",
    "FaultKind",
    "Message",
    "ModelCall",
    "Other",
    "Outcome",
    "Part",
    "Provider",
    "Reply",
    "Request",
    "StopReason",
    "Text",
    "Thinking",
    "Tool",
    "ToolCall",
    "ToolResult",
    "Usage",
]


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]
"""Why a reply ended, in neutral terms; each codec maps it to its provider's words
(``end_turn`` → ``stop`` / ``completed``, ``tool_use`` → ``tool_calls``, ...)."""

FaultKind = Literal["http", "cut", "error_event", "stall", "timeout", "empty", "truncate"]
Outcome = Literal["completed", "cut", "error_event", "http_error", "timeout", "cancelled"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(_Model):
    """Token counts reported by the provider.

    The cache fields exist on Anthropic (``cache_creation_input_tokens``,
    ``cache_read_input_tokens``) and OpenAI (cached prompt tokens, reasoning
    tokens); a codec renders the ones its provider has and ignores the rest.
    ``input_tokens`` is the whole prompt (OpenAI's ``prompt_tokens``): cached tokens
    are counted inside it and reported again in ``cache_read_input_tokens``.
    """

    input_tokens: NonNegativeInt = 0
    output_tokens: NonNegativeInt = 0
    cache_creation_input_tokens: NonNegativeInt | None = None
    cache_read_input_tokens: NonNegativeInt | None = None
    reasoning_tokens: NonNegativeInt | None = None


class Text(_Model):
    """Assistant (or user) text."""

    kind: Literal["text"] = "text"
    text: str


class ToolCall(_Model):
    """A call the model asks the agent to make. ``id`` is generated when omitted."""

    kind: Literal["tool_call"] = "tool_call"
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Thinking(_Model):
    """Reasoning the model exposes (Anthropic thinking, OpenAI reasoning summaries)."""

    kind: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None


class ToolResult(_Model):
    """The agent's answer to a :class:`ToolCall`, as found in a request."""

    kind: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: str = ""
    is_error: bool = False


class Other(_Model):
    """A request part this model does not interpret (images, documents, ...), kept raw."""

    kind: Literal["other"] = "other"
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


Part = Annotated[Text | ToolCall | Thinking, Field(discriminator="kind")]
"""A part of a reply: what a model can say."""

MessagePart = Annotated[
    Text | ToolCall | Thinking | ToolResult | Other, Field(discriminator="kind")
]


class Fault(_Model):
    """A way a provider call fails. Build one with the class methods, not directly.

    ``after_events`` counts SSE events delivered before the fault strikes (for
    streams); non-streaming calls fail before the body for every kind except
    ``empty`` and ``truncate``.
    """

    kind: FaultKind
    status: int | None = None
    message: str | None = None
    error_type: str | None = None
    retry_after: float | None = None
    after_events: NonNegativeInt | None = None

    @classmethod
    def http(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> Fault:
        """An HTTP error response in the provider's own error format.

        ``error_type`` defaults to the provider's type for ``status``
        (for 429: ``rate_limit_error`` on Anthropic, ``requests`` with code
        ``rate_limit_exceeded`` on OpenAI). ``message`` defaults to the
        provider's usual message for that status.
        """
        if not 400 <= status <= 599:
            raise ValueError(f"Fault.http status must be 400-599, got {status}")
        return cls(
            kind="http",
            status=status,
            message=message,
            retry_after=retry_after,
            error_type=error_type,
        )

    @classmethod
    def cut(cls, after_events: int = 0) -> Fault:
        """The connection drops after ``after_events`` events (``RemoteProtocolError``)."""
        return cls(kind="cut", after_events=after_events)

    @classmethod
    def error_event(
        cls,
        error_type: str | None = None,
        message: str | None = None,
        *,
        after_events: int = 0,
    ) -> Fault:
        """The provider's in-stream error event, sent with HTTP 200 after ``after_events``.

        ``error_type`` and ``message`` default to the provider's own words for an
        overloaded / failing server (``overloaded_error`` for Anthropic,
        ``server_error`` for OpenAI).
        """
        return cls(
            kind="error_event", error_type=error_type, message=message, after_events=after_events
        )

    @classmethod
    def stall(cls, after_events: int = 0) -> Fault:
        """The stream stops sending after ``after_events`` events and holds until
        the fake is released or the client hangs up."""
        return cls(kind="stall", after_events=after_events)

    @classmethod
    def timeout(cls, after_events: int | None = None) -> Fault:
        """A read timeout: before the response (``None``) or after ``after_events``."""
        return cls(kind="timeout", after_events=after_events)

    @classmethod
    def truncate(cls, after_events: int = 0) -> Fault:
        """The stream ends cleanly after ``after_events`` events, without the
        provider's closing events (no stop reason, no ``[DONE]``): what a proxy or
        gateway that closes a stream early delivers. No error is raised; an agent
        must notice that the answer never finished. A non-streaming call gets its
        whole JSON body (a truncated JSON body would be a different failure)."""
        return cls(kind="truncate", after_events=after_events)

    @classmethod
    def empty(cls) -> Fault:
        """A 200 response with no content: no text, no tool calls."""
        return cls(kind="empty")

    def describe(self) -> str:
        """A short human description, used in logs and failure messages."""
        where = "" if self.after_events is None else f" after {self.after_events} events"
        if self.kind == "http":
            return f"HTTP {self.status}" + (f" ({self.message})" if self.message else "")
        if self.kind == "error_event":
            return f"in-stream {self.error_type or 'error'}{where}"
        return f"{self.kind}{where}"


class Reply(_Model):
    """What the model answers to one call: parts, usage, stop reason, optional fault.

    ``usage`` and ``stop`` are derived when omitted (usage is estimated from the
    request and reply sizes; stop is ``tool_use`` when the reply has a tool call).
    """

    parts: list[Part] = Field(default_factory=list)
    usage: Usage | None = None
    stop: StopReason | None = None
    model: str | None = None
    fault: Fault | None = None

    @classmethod
    def text(
        cls,
        text: str,
        *,
        usage: Usage | None = None,
        stop: StopReason | None = None,
        model: str | None = None,
        fault: Fault | None = None,
    ) -> Reply:
        """A plain text answer."""
        return cls(parts=[Text(text=text)], usage=usage, stop=stop, model=model, fault=fault)

    @classmethod
    def tool_call(
        cls,
        name: str,
        args: dict[str, Any] | None = None,
        *,
        id: str | None = None,
        text: str | None = None,
        usage: Usage | None = None,
        model: str | None = None,
        fault: Fault | None = None,
    ) -> Reply:
        """A single tool call, optionally preceded by ``text``."""
        parts: list[Text | ToolCall | Thinking] = [] if text is None else [Text(text=text)]
        parts.append(ToolCall(name=name, args=args or {}, id=id))
        return cls(parts=parts, usage=usage, model=model, fault=fault)

    @classmethod
    def failure(cls, fault: Fault) -> Reply:
        """A reply that is only a fault (what a bare :class:`Fault` in a script means)."""
        return cls(fault=fault)

    @property
    def text_content(self) -> str:
        """All text parts joined, as an agent would display them."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool calls of the reply, in order."""
        return [p for p in self.parts if isinstance(p, ToolCall)]

    @property
    def stop_reason(self) -> StopReason:
        """``stop`` if given, else ``tool_use`` when there is a tool call, else ``end_turn``."""
        if self.stop is not None:
            return self.stop
        return "tool_use" if self.tool_calls else "end_turn"


class Tool(_Model):
    """A tool offered to the model in a request."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class Message(_Model):
    """One message of a request's conversation, in neutral form."""

    role: Literal["system", "developer", "user", "assistant", "tool"]
    parts: list[MessagePart] = Field(default_factory=list)

    @property
    def text(self) -> str:
        """The text parts joined."""
        return "".join(p.text for p in self.parts if isinstance(p, Text))


class Request(_Model):
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
        """Text of the last user message, or ``None`` when there is none."""
        for message in reversed(self.messages):
            if message.role == "user":
                return message.text
        return None

    @property
    def tool_results(self) -> list[ToolResult]:
        """Every tool result sent back to the model, in order."""
        return [p for m in self.messages for p in m.parts if isinstance(p, ToolResult)]


class ModelCall(_Model):
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

    @model_validator(mode="after")
    def _outcome_matches_status(self) -> ModelCall:
        if self.outcome == "http_error" and (self.status or 0) < 400:
            raise ValueError(f"outcome http_error needs status >= 400, got {self.status}")
        return self
