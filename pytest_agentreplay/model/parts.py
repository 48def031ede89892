"""What a message is made of: text, tool calls, thinking, tool results, token usage.

The parts a model can say (:data:`Part`: :class:`Text`, :class:`ToolCall`,
:class:`Thinking`) and the parts a request may also hold (:class:`ToolResult`,
:class:`Other`), plus :class:`Usage`. They are the leaves of the model: replies,
faults and requests are built from them, and they import nothing else of the
package.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

__all__ = [
    "Frozen",
    "MessagePart",
    "Other",
    "Part",
    "StopReason",
    "Text",
    "Thinking",
    "ToolCall",
    "ToolResult",
    "Usage",
]


StopReason = Literal["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal"]
"""Why a reply ended, in neutral terms; each codec maps it to its provider's words
(``end_turn`` → ``stop`` / ``completed``, ``tool_use`` → ``tool_calls``, ...)."""


class Frozen(BaseModel):
    """The base of every model type: immutable, and a typo in a field name is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Usage(Frozen):
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


class Text(Frozen):
    """Assistant (or user) text."""

    kind: Literal["text"] = "text"
    text: str


class ToolCall(Frozen):
    """A call the model asks the agent to make. ``id`` is generated when omitted."""

    kind: Literal["tool_call"] = "tool_call"
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None


class Thinking(Frozen):
    """Reasoning the model exposes (Anthropic thinking, OpenAI reasoning summaries)."""

    kind: Literal["thinking"] = "thinking"
    text: str
    signature: str | None = None


class ToolResult(Frozen):
    """The agent's answer to a :class:`ToolCall`, as found in a request."""

    kind: Literal["tool_result"] = "tool_result"
    tool_call_id: str
    content: str = ""
    is_error: bool = False


class Other(Frozen):
    """A request part this model does not interpret (images, documents, ...), kept raw."""

    kind: Literal["other"] = "other"
    type: str
    data: dict[str, Any] = Field(default_factory=dict)


Part = Annotated[Text | ToolCall | Thinking, Field(discriminator="kind")]
"""A part of a reply: what a model can say."""

MessagePart = Annotated[
    Text | ToolCall | Thinking | ToolResult | Other, Field(discriminator="kind")
]
"""A part of a request's message: what a model can say, plus tool results and the rest."""
