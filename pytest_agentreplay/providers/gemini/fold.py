"""Fold a Gemini ``streamGenerateContent`` stream into the ``generateContent`` JSON.

Each event of a Gemini stream is a whole ``GenerateContentResponse`` holding the
newest piece of each candidate: text a few words at a time (thoughts as parts with
``thought: true``), a function call whole, and on the last chunk the
``finishReason``; ``usageMetadata`` is repeated with running totals. google-genai
hands these chunks to the caller one by one and leaves the joining to it; the fold
joins them as the API's non-streaming answer holds them (:func:`merge_part`):
consecutive text of one kind is one part, a ``thoughtSignature`` stays on the part
it came with, a function call is a part of its own, and the empty text part Gemini 3
ends its streams with carries nothing. For everything else the last value wins,
except that an empty object or list never replaces what came before
(``groundingMetadata`` arrives empty, then full).

A data event ``{"error": {...}}`` (sent with HTTP 200 when a stream fails after it
started; google-genai raises it) stops the fold: ``Folded.error`` is the ``error``
object. A stream is ``complete`` once every candidate has its ``finishReason``, or
the prompt was blocked (``promptFeedback.blockReason``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...sse import SSEEvent
from ..base import Codec, Folded
from ..roles import EventFolder

__all__ = ["fold", "merge_part"]

_TEXT_KEYS = frozenset({"text", "thought", "thoughtSignature"})


def _text_only(part: Mapping[str, Any]) -> bool:
    return isinstance(part.get("text"), str) and part.keys() <= _TEXT_KEYS


def merge_part(parts: list[dict[str, Any]], new: Mapping[str, Any]) -> None:
    """Add the streamed part ``new`` to ``parts`` as the non-streaming answer holds it.

    Text joins the text part before it when both are thoughts or both are not, unless
    ``new`` brings a signature of its own (a signature seals what comes before it); an
    empty text part with a signature hands it to the text before it, if that has none;
    an empty text part without one is dropped."""
    last = parts[-1] if parts else None
    if _text_only(new):
        signature, text = new.get("thoughtSignature"), new["text"]
        if last is not None and _text_only(last) and last.get("thought") == new.get("thought"):
            if signature is None:
                last["text"] += text
                return
            if text == "" and "thoughtSignature" not in last:
                last["thoughtSignature"] = signature
                return
        if text == "" and signature is None:
            return
    parts.append(dict(new))


def fold(codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
    """Join ``events`` into the final JSON body (see the module docstring)."""
    return _Folder(codec, events, strict=strict).run()


class _Folder(EventFolder):
    """One fold: the candidates by index, the other top-level fields, the bookkeeping."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> None:
        super().__init__(codec, events, strict=strict)
        self.candidates: dict[int, dict[str, Any]] = {}
        self.rest: dict[str, Any] = {}
        self.error: dict[str, Any] | None = None

    def step(self, event: SSEEvent) -> bool:
        if event.event not in (None, "message"):
            self.skip(f"event named {event.event!r}: Gemini streams send data only")
            return False
        data = self.data()
        if "error" in data:
            error = data["error"]
            self.error = dict(error) if isinstance(error, dict) else {"message": error}
            return True
        self._chunk(data)
        return False

    def result(self) -> Folded:
        body: dict[str, Any] = {}
        if self.candidates:
            body["candidates"] = [self.candidates[k] for k in sorted(self.candidates)]
        body.update(self.rest)
        finished = bool(self.candidates) and all(
            "finishReason" in c for c in self.candidates.values()
        )
        feedback = body.get("promptFeedback")
        blocked = isinstance(feedback, dict) and bool(feedback.get("blockReason"))
        error = self.error
        return self.folded(body, complete=(finished or blocked) and error is None, error=error)

    def _chunk(self, data: dict[str, Any]) -> None:
        for key, value in data.items():
            if key == "candidates":
                if not isinstance(value, list):
                    raise self.fail("must be a list", "candidates")
                for n, candidate in enumerate(value):
                    self._candidate(candidate, f"candidates[{n}]")
            elif value not in ({}, []) or key not in self.rest:
                self.rest[key] = value

    def _candidate(self, raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            raise self.fail("must be an object", path)
        index = raw.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            raise self.fail(f"must be an integer, got {index!r:.40}", f"{path}.index")
        slot = self.candidates.setdefault(index, {})
        for key, value in raw.items():
            if key == "content":
                self._content(slot, value, f"{path}.content")
            elif value not in ({}, []) or key not in slot:
                slot[key] = value

    def _content(self, slot: dict[str, Any], raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            raise self.fail("must be an object", path)
        content = slot.setdefault("content", {})
        for key, value in raw.items():
            if key != "parts":
                content[key] = value
                continue
            if not isinstance(value, list):
                raise self.fail("must be a list", f"{path}.parts")
            parts = content.setdefault("parts", [])
            for n, part in enumerate(value):
                self._part(parts, part, f"{path}.parts[{n}]")
            if not parts:
                del content["parts"]

    def _part(self, parts: list[dict[str, Any]], part: Any, path: str) -> None:
        if not isinstance(part, dict):
            raise self.fail("must be an object", path)
        if "text" in part and not isinstance(part["text"], str):
            raise self.fail(f"must be a string, got {part['text']!r:.40}", f"{path}.text")
        signature = part.get("thoughtSignature")
        if signature is not None and not isinstance(signature, str):
            raise self.fail("must be a base64 string", f"{path}.thoughtSignature")
        merge_part(parts, part)
