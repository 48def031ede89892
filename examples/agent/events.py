"""What the agent tells the outside world while it works: one dataclass per event.

Every model-step event names its session, turn, model step and step index. A retry
is a *fresh* model step (a new ``step_id``) at the *same* ``step_index``; the next
step of a turn (after tool calls) has the next index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .errors import AgentError

StepOutcome = Literal["completed", "retrying", "failed", "interrupted"]
ToolOutcome = Literal["completed", "failed", "interrupted"]


@dataclass(frozen=True)
class Usage:
    """Tokens a model step (or a whole turn) used. ``cache_read_tokens`` are prompt
    tokens served from the provider's prompt cache (counted in ``input_tokens`` too on
    OpenAI); ``cache_write_tokens`` are the tokens written to it (Anthropic only)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


NO_USAGE = Usage()


@dataclass(frozen=True)
class Citation:
    """A web source the model cited for part of its answer: a ``web_search_result_location``
    citation of an Anthropic text block, a ``url_citation`` annotation of an OpenAI Chat
    message. ``start`` / ``end`` delimit the characters of the reply's text that the
    source supports (Anthropic cites whole text blocks: the block's span in the joined
    text); ``cited_text`` is the passage quoted from the source (Anthropic sends it,
    OpenAI does not)."""

    url: str
    title: str = ""
    cited_text: str = ""
    start: int = 0
    end: int = 0


CacheCapability = Literal["unsupported", "automatic", "explicit"]
CacheOutcome = Literal["unsupported", "unknown", "miss", "hit", "write"]
RewriteReason = Literal["provider", "model", "system", "tools", "history"]
ContentPhase = Literal["final_answer", "commentary"]


@dataclass(frozen=True)
class StepContent:
    """One text part of a step's answer. ``output_index``: the output of the call it
    belongs to (OpenAI's choice; Anthropic answers one message); ``part_index``: its
    place among that output's content blocks (a text after a provider-side search is
    not the first block); ``phase``: ``final_answer`` when the step ends the turn,
    ``commentary`` when it goes on to call tools; ``annotations``: the sources cited
    in this part."""

    output_index: int
    part_index: int
    phase: ContentPhase
    text: str
    annotations: tuple[Citation, ...] = ()


@dataclass(frozen=True)
class PromptCache:
    """What a step knows of the provider's prompt cache. ``capability``: whether the
    provider caches prompts, ``automatic`` (OpenAI) or where asked (``explicit``:
    Anthropic's ``cache_control``); ``outcome``: this call read from it (``hit``),
    only wrote to it (``write``), neither (``miss``) or cannot say (``unknown``: no
    usage, the call failed); ``context_epoch``: how many times the session's context
    was rewritten before this call — sent other than as an extension of the previous
    request, which a prompt cache cannot reuse — and ``rewrite_reasons``, why this
    call started a new epoch (empty when it did not)."""

    capability: CacheCapability
    outcome: CacheOutcome
    context_epoch: int = 0
    rewrite_reasons: tuple[RewriteReason, ...] = ()


@dataclass(frozen=True)
class StepDiagnostics:
    """How a step went, beyond its answer: the provider that made the call, its prompt
    cache, and what it cost when the agent can tell (``None``: it keeps no price list,
    and an estimate it cannot make is absent, not zero)."""

    provider: str
    prompt_cache: PromptCache
    estimated_cost_microusd: int | None = None


@dataclass(frozen=True, kw_only=True)
class StepEvent:
    """The ids every model-step event carries."""

    session_id: str
    turn_id: str
    step_id: str
    step_index: int


@dataclass(frozen=True, kw_only=True)
class ModelStepStarted(StepEvent):
    """A model call begins (the write-ahead intent is already durable)."""

    provider: str
    model: str
    at: float


@dataclass(frozen=True, kw_only=True)
class ModelStepCompleted(StepEvent):
    """A model call ended: exactly one of these per :class:`ModelStepStarted`.
    ``started_at`` repeats the start's ``at`` (a consumer that only sees the end can
    still time the step); ``stop_reason`` and ``tool_call_ids`` say, for a completed
    step, why the model stopped and which tool calls it asked for, ``end_turn`` whether
    its answer ends the turn (it asked for no tool), ``content`` the text parts of that
    answer; ``citations``, the web sources its text cites (see :class:`Citation`).
    ``retry_in``: when ``retrying`` after a backoff, the seconds until the retry (a
    user interface can say so). ``diagnostics``: the provider and its prompt cache."""

    outcome: StepOutcome
    at: float
    started_at: float
    provider: str
    stop_reason: str | None = None
    tool_call_ids: tuple[str, ...] = ()
    citations: tuple[Citation, ...] = ()
    usage: Usage | None = None
    text: str = ""
    error: AgentError | None = None
    retry_in: float | None = None
    end_turn: bool = False
    content: tuple[StepContent, ...] = ()
    diagnostics: StepDiagnostics | None = None


@dataclass(frozen=True, kw_only=True)
class MessageDelta(StepEvent):
    """A piece of streamed text, shown as it arrives."""

    text: str


@dataclass(frozen=True, kw_only=True)
class FinalMessage(StepEvent):
    """The agent's answer for the turn, from the step that produced it, with the web
    sources it cites."""

    text: str
    citations: tuple[Citation, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ToolBegin(StepEvent):
    """The model started a tool call (while streaming: before its arguments arrived)."""

    call_id: str
    name: str


@dataclass(frozen=True, kw_only=True)
class ToolEnd(StepEvent):
    """A tool call ended: exactly one of these per :class:`ToolBegin`."""

    call_id: str
    name: str
    outcome: ToolOutcome
    output: str = ""


@dataclass(frozen=True, kw_only=True)
class ServerToolBegin(StepEvent):
    """The provider started a tool it runs itself (a web search): the agent runs
    nothing, it only shows that the model is searching."""

    call_id: str
    name: str


@dataclass(frozen=True, kw_only=True)
class ServerToolEnd(StepEvent):
    """A provider-side tool ended: exactly one per :class:`ServerToolBegin`;
    ``interrupted`` when the call ended (a dropped stream, an interrupt) before its
    result arrived."""

    call_id: str
    name: str
    outcome: ToolOutcome


@dataclass(frozen=True, kw_only=True)
class TurnComplete:
    """The turn answered the user: the success event."""

    session_id: str
    turn_id: str
    text: str
    usage: Usage
    provider: str
    model: str


@dataclass(frozen=True, kw_only=True)
class TurnAborted:
    """The user interrupted the turn."""

    session_id: str
    turn_id: str
    reason: str = "interrupted"


@dataclass(frozen=True, kw_only=True)
class ErrorEvent:
    """The turn failed; ``error`` says how (and whether trying again may help)."""

    session_id: str
    turn_id: str
    error: AgentError


Event = (
    ModelStepStarted
    | ModelStepCompleted
    | MessageDelta
    | FinalMessage
    | ToolBegin
    | ToolEnd
    | ServerToolBegin
    | ServerToolEnd
    | TurnComplete
    | TurnAborted
    | ErrorEvent
)
