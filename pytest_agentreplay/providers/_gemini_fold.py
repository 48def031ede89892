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
from typing import TYPE_CHECKING, Any

from .base import Folded

if TYPE_CHECKING:
    from ..errors import CodecError
    from ..sse import SSEEvent
    from .base import Codec

__all__ = ["fold_events", "merge_part"]

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


def fold_events(codec: Codec, events: Sequence[SSEEvent], *, strict: bool) -> Folded:
    """Join ``events`` into the final JSON body (see the module docstring)."""
    return _Folder(codec, events, strict).run()


class _Folder:
    """One fold: the candidates by index, the other top-level fields, the bookkeeping."""

    def __init__(self, codec: Codec, events: Sequence[SSEEvent], strict: bool) -> None:
        self.codec = codec
        self.events = events
        self.strict = strict
        self.candidates: dict[int, dict[str, Any]] = {}
        self.rest: dict[str, Any] = {}
        self.unknown: list[int] = []
        self.i = 0

    def run(self) -> Folded:
        for index, event in enumerate(self.events):
            self.i = index
            if event.event not in (None, "message"):
                self._unknown(f"event named {event.event!r}: Gemini streams send data only")
                continue
            data = self.codec.event_json(self.events, index)
            if not isinstance(data, dict):
                raise self._err(f"data must be a JSON object, got {type(data).__name__}", "data")
            if "error" in data:
                error = data["error"]
                return self._folded(dict(error) if isinstance(error, dict) else {"message": error})
            self._chunk(data)
        return self._folded(None)

    def _folded(self, error: dict[str, Any] | None) -> Folded:
        body: dict[str, Any] = {}
        if self.candidates:
            body["candidates"] = [self.candidates[k] for k in sorted(self.candidates)]
        body.update(self.rest)
        finished = bool(self.candidates) and all(
            "finishReason" in c for c in self.candidates.values()
        )
        feedback = body.get("promptFeedback")
        blocked = isinstance(feedback, dict) and bool(feedback.get("blockReason"))
        return Folded(
            body=body,
            complete=(finished or blocked) and error is None,
            error=error,
            unknown=self.unknown,
        )

    def _chunk(self, data: dict[str, Any]) -> None:
        for key, value in data.items():
            if key == "candidates":
                if not isinstance(value, list):
                    raise self._err("must be a list", "candidates")
                for n, candidate in enumerate(value):
                    self._candidate(candidate, f"candidates[{n}]")
            elif value not in ({}, []) or key not in self.rest:
                self.rest[key] = value

    def _candidate(self, raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            raise self._err("must be an object", path)
        index = raw.get("index", 0)
        if not isinstance(index, int) or isinstance(index, bool):
            raise self._err(f"must be an integer, got {index!r:.40}", f"{path}.index")
        slot = self.candidates.setdefault(index, {})
        for key, value in raw.items():
            if key == "content":
                self._content(slot, value, f"{path}.content")
            elif value not in ({}, []) or key not in slot:
                slot[key] = value

    def _content(self, slot: dict[str, Any], raw: Any, path: str) -> None:
        if not isinstance(raw, dict):
            raise self._err("must be an object", path)
        content = slot.setdefault("content", {})
        for key, value in raw.items():
            if key != "parts":
                content[key] = value
                continue
            if not isinstance(value, list):
                raise self._err("must be a list", f"{path}.parts")
            parts = content.setdefault("parts", [])
            for n, part in enumerate(value):
                self._part(parts, part, f"{path}.parts[{n}]")
            if not parts:
                del content["parts"]

    def _part(self, parts: list[dict[str, Any]], part: Any, path: str) -> None:
        if not isinstance(part, dict):
            raise self._err("must be an object", path)
        if "text" in part and not isinstance(part["text"], str):
            raise self._err(f"must be a string, got {part['text']!r:.40}", f"{path}.text")
        signature = part.get("thoughtSignature")
        if signature is not None and not isinstance(signature, str):
            raise self._err("must be a base64 string", f"{path}.thoughtSignature")
        merge_part(parts, part)

    def _unknown(self, why: str) -> None:
        if self.strict:
            raise self._err(f"{why}; not allowed with strict=True", "event")
        self.unknown.append(self.i)

    def _err(self, message: str, field: str) -> CodecError:
        return self.codec.error(message, event_index=self.i, field=field)
