"""A ``generateContent`` body back to a neutral :class:`~...neutral.Reply`.

The first candidate's text, thoughts (with their signatures) and function calls
become parts; images, code execution and grounding are left out. A prompt blocked
before any candidate is a refusal with no parts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...neutral import Part, Reply, StopReason, Thinking, Usage
from ..base import Codec
from .parts import neutral_parts, pick, text_or_call

__all__ = ["to_reply"]

_STOP_IN: dict[str, StopReason] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    # Blocked by a filter: the model's answer was withheld.
    "SAFETY": "refusal",
    "RECITATION": "refusal",
    "LANGUAGE": "refusal",
    "BLOCKLIST": "refusal",
    "PROHIBITED_CONTENT": "refusal",
    "SPII": "refusal",
    "IMAGE_SAFETY": "refusal",
    "IMAGE_PROHIBITED_CONTENT": "refusal",
    "IMAGE_RECITATION": "refusal",
    "MODEL_ARMOR": "refusal",
}
"""Neutral stop reasons of Gemini's ``finishReason`` values; the others
(``MALFORMED_FUNCTION_CALL``, ``OTHER``, ...) have no neutral twin."""


def to_reply(codec: Codec, body: Mapping[str, Any]) -> Reply:
    """The first candidate as a reply (see the module docstring)."""
    candidates = body.get("candidates")
    if candidates is not None and not isinstance(candidates, list):
        raise codec.error("must be a list", field="candidates")
    model = body.get("modelVersion")
    usage = _usage(codec, body.get("usageMetadata"))
    model_name = model if isinstance(model, str) else None
    if not candidates:
        feedback = body.get("promptFeedback")
        blocked = isinstance(feedback, Mapping) and bool(feedback.get("blockReason"))
        return Reply(usage=usage, stop="refusal" if blocked else None, model=model_name)
    candidate = candidates[0]
    if not isinstance(candidate, Mapping):
        raise codec.error("must be an object", field="candidates[0]")
    parts = _parts(codec, candidate.get("content"))
    return Reply(parts=parts, usage=usage, stop=_stop(candidate, parts), model=model_name)


def _parts(codec: Codec, content: Any) -> list[Part]:
    if content is None:
        return []
    if not isinstance(content, Mapping):
        raise codec.error("must be an object", field="candidates[0].content")
    raw = pick(content, "parts") or []
    if not isinstance(raw, list):
        raise codec.error("must be a list", field="candidates[0].content.parts")
    return neutral_parts(raw, "candidates[0].content.parts", _reply_part, Thinking)


def _stop(candidate: Mapping[str, Any], parts: list[Part]) -> StopReason | None:
    reason = candidate.get("finishReason")
    stop = _STOP_IN.get(reason) if isinstance(reason, str) else None
    if stop == "end_turn" and any(p.kind == "tool_call" for p in parts):
        return "tool_use"
    return stop


def _usage(codec: Codec, usage: Any) -> Usage | None:
    if not isinstance(usage, Mapping):
        return None
    thoughts = usage.get("thoughtsTokenCount")
    try:
        return Usage(
            input_tokens=usage.get("promptTokenCount") or 0,
            output_tokens=(usage.get("candidatesTokenCount") or 0) + (thoughts or 0),
            cache_read_input_tokens=usage.get("cachedContentTokenCount"),
            reasoning_tokens=thoughts,
        )
    except (ValueError, TypeError) as exc:
        raise codec.error(f"bad token counts: {exc}", field="usageMetadata") from None


def _reply_part(part: Mapping[str, Any], path: str) -> Part | None:
    """One part of an answer: text, a thought or a function call (``None`` for the
    kinds a reply cannot hold: images, code execution, ...)."""
    text = part.get("text")
    return text_or_call(part, text if isinstance(text, str) else None, path)
