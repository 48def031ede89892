"""What a model step reports about itself beyond its answer (:class:`~.events.StepDiagnostics`).

* **The prompt cache.** Anthropic caches a prompt where the request asks for it,
  OpenAI by itself; the usage of a call says whether it read from the cache or wrote
  to it. A cache can only serve a request that *extends* the one before it — the same
  provider, model, system prompt and tools, and the earlier messages unchanged, with
  new ones after them. A request that does not is a *rewrite*: it starts a new context
  epoch, and the step says why (:class:`ContextEpochs`). A retry resends the same
  request, and the next step of a turn extends it: neither is a rewrite; a credential
  refresh that switches provider and model is.
* **The cost.** The agent keeps no price list, so it never estimates one: absent, not 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .events import (
    CacheCapability,
    CacheOutcome,
    Citation,
    ContentPhase,
    PromptCache,
    RewriteReason,
    StepContent,
    StepDiagnostics,
    Usage,
)
from .store import Message

CACHE_CAPABILITY: dict[str, CacheCapability] = {"anthropic": "explicit", "openai": "automatic"}


def diagnostics(
    provider: str, usage: Usage | None, epoch: int, reasons: tuple[RewriteReason, ...]
) -> StepDiagnostics:
    """A step's diagnostics: its provider's prompt cache and what the call's usage says."""
    capability = CACHE_CAPABILITY.get(provider, "unsupported")
    cache = PromptCache(capability, cache_outcome(capability, usage), epoch, reasons)
    return StepDiagnostics(provider, cache)


def cache_outcome(capability: CacheCapability, usage: Usage | None) -> CacheOutcome:
    """Whether the call read from the prompt cache (``hit``, even in part), only wrote
    to it (``write``), or did neither (``miss``); ``unknown`` without usage."""
    if capability == "unsupported":
        return "unsupported"
    if usage is None:
        return "unknown"
    if usage.cache_read_tokens:
        return "hit"
    return "write" if usage.cache_write_tokens else "miss"


@dataclass(frozen=True)
class ContextKey:
    """What a prompt cache keys a request by: where it goes and the context it sends."""

    provider: str
    model: str
    system: str | None
    tools: tuple[str, ...]
    messages: tuple[Message, ...]


class ContextEpochs:
    """The context epochs of one session's requests, in the order they are sent."""

    def __init__(self) -> None:
        self.epoch = 0
        self._last: ContextKey | None = None

    def observe(self, key: ContextKey) -> tuple[int, tuple[RewriteReason, ...]]:
        """The epoch of a request about to be sent, and why it starts one (if it does)."""
        reasons = () if self._last is None else rewrite_reasons(self._last, key)
        if reasons:
            self.epoch += 1
        self._last = key
        return self.epoch, reasons


def rewrite_reasons(before: ContextKey, after: ContextKey) -> tuple[RewriteReason, ...]:
    """Why ``after`` does not extend ``before`` (nothing, when it does)."""
    fields: tuple[RewriteReason, ...] = ("provider", "model", "system", "tools")
    reasons = [name for name in fields if getattr(before, name) != getattr(after, name)]
    if after.messages[: len(before.messages)] != before.messages:
        reasons.append("history")
    return tuple(reasons)


def content_parts(
    texts: Sequence[tuple[int, str]], citations: Sequence[Citation], *, ends_turn: bool
) -> tuple[StepContent, ...]:
    """The text parts of an answer — ``(part index, text)`` of its one output — each
    with the citations whose span lies in it (spans count in the joined text)."""
    phase: ContentPhase = "final_answer" if ends_turn else "commentary"
    parts: list[StepContent] = []
    offset = 0
    for index, text in texts:
        end = offset + len(text)
        cited = tuple(c for c in citations if offset <= c.start and c.end <= end)
        parts.append(StepContent(0, index, phase, text, cited))
        offset = end
    return tuple(parts)
