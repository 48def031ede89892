"""The Gemini API wire format (``POST .../models/{model}:generateContent``).

One codec for the Gemini API (``generativelanguage.googleapis.com/v1beta/...``) and
Vertex AI (``.../v1/projects/{p}/locations/{l}/publishers/google/models/...``), which
speak the same JSON:

* ``:generateContent`` answers one ``GenerateContentResponse``: ``candidates`` (the
  reply's parts in ``content.parts``, ``finishReason``, ``index``), ``usageMetadata``,
  ``modelVersion``, ``responseId``;
* ``:streamGenerateContent?alt=sse`` answers ``data:``-only events, each a
  ``GenerateContentResponse`` with the next piece, framed with CRLF as Google frames
  them; no terminator: the last chunk carries the ``finishReason``;
* ``:countTokens`` is answered with a deterministic estimate (:meth:`count_tokens`);
* errors are Google's ``{"error": {"code", "message", "status", "details"}}``, over
  HTTP or, in a stream that already started, as a data event with HTTP 200.

Where the model is and whether to stream are in the path, so requests are parsed with
:meth:`GeminiCodec.parse_call`. Rendering, folding, request parsing and the error
catalogue live in ``_gemini_render``, ``_gemini_fold``, ``_gemini_request`` and
``_gemini_errors``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from pytest_agentreplay.neutral import (
    Fault,
    Part,
    Provider,
    Reply,
    Request,
    StopReason,
    Text,
    Thinking,
    Usage,
)
from pytest_agentreplay.providers import _gemini_errors as errors
from pytest_agentreplay.providers._gemini_fold import fold_events
from pytest_agentreplay.providers._gemini_render import iter_chunks, render_body
from pytest_agentreplay.providers._gemini_request import (
    neutral_parts,
    parse_call,
    pick,
    signature_of,
    tool_call,
)
from pytest_agentreplay.providers.base import (
    Codec,
    ErrorResponse,
    Folded,
    RenderContext,
    estimate_tokens,
    json_data,
)
from pytest_agentreplay.providers.routes import handles
from pytest_agentreplay.sse import LineEnd, SSEEvent

__all__ = ["GeminiCodec"]

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


# Characters ``str.splitlines`` breaks a line at that JSON leaves raw: google-genai
# reads a stream with httpx's ``iter_lines``, which splits on them, so a raw U+0085
# in a text cut the ``data:`` line in two and the SDK raised UnknownApiResponseError.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _data(chunk: dict[str, Any]) -> str:
    """A chunk as Google writes it in a ``data:`` line: ``", "`` never, ``": "`` always;
    no character a line reader would break the line at."""
    return json.dumps(chunk, ensure_ascii=False, separators=(",", ": ")).translate(_LINE_BREAKS)


class GeminiCodec(Codec):
    """Gemini ``generateContent`` / ``streamGenerateContent``, Gemini API and Vertex AI."""

    provider: ClassVar[Provider] = "gemini"
    event_error_type: ClassVar[str] = errors.DEFAULT_EVENT_STATUS
    stream_content_type: ClassVar[str] = "text/event-stream"
    json_content_type: ClassVar[str] = "application/json; charset=UTF-8"
    sse_line_end: ClassVar[LineEnd] = "\r\n"

    def handles(self, method: str, path: str) -> bool:
        """``POST .../models/{model}:generateContent`` or ``:streamGenerateContent``."""
        return handles("gemini", method, path)

    def parse_request(self, body: Mapping[str, Any]) -> Request:
        """The body alone: no model, not streamed (use :meth:`parse_call`)."""
        return parse_call("", body)

    def parse_call(self, method: str, target: str, body: Mapping[str, Any]) -> Request:
        """The request, with the model and the stream flag read from ``target``."""
        return parse_call(target, body)

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        """The ``GenerateContentResponse`` JSON ``generate_content`` receives."""
        return render_body(reply, ctx)

    def render_events(self, reply: Reply, ctx: RenderContext) -> list[SSEEvent]:
        """The stream for ``reply``; folds to exactly :meth:`render_body`'s JSON."""
        return list(self.iter_events(reply, ctx))

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        """:meth:`render_events`, lazily."""
        return (SSEEvent(data=_data(chunk)) for chunk in iter_chunks(reply, ctx))

    def fold_detailed(self, events: Sequence[SSEEvent], *, strict: bool = False) -> Folded:
        """The ``generateContent`` JSON the stream adds up to (see :mod:`._gemini_fold`)."""
        return fold_events(self, events, strict=strict)

    def to_reply(self, body: Mapping[str, Any]) -> Reply:
        """The first candidate as a reply: text, thoughts (with their signatures) and
        function calls become parts; images, code execution and grounding are left out.
        A prompt blocked before any candidate is a refusal with no parts."""
        candidates = body.get("candidates")
        if candidates is not None and not isinstance(candidates, list):
            raise self.error("must be a list", field="candidates")
        model = body.get("modelVersion")
        usage = self._usage_of(body.get("usageMetadata"))
        model_name = model if isinstance(model, str) else None
        if not candidates:
            feedback = body.get("promptFeedback")
            blocked = isinstance(feedback, Mapping) and bool(feedback.get("blockReason"))
            return Reply(usage=usage, stop="refusal" if blocked else None, model=model_name)
        candidate = candidates[0]
        if not isinstance(candidate, Mapping):
            raise self.error("must be an object", field="candidates[0]")
        parts = self._parts(candidate.get("content"))
        return Reply(parts=parts, usage=usage, stop=self._stop(candidate, parts), model=model_name)

    def _parts(self, content: Any) -> list[Part]:
        if content is None:
            return []
        if not isinstance(content, Mapping):
            raise self.error("must be an object", field="candidates[0].content")
        raw = pick(content, "parts") or []
        if not isinstance(raw, list):
            raise self.error("must be a list", field="candidates[0].content.parts")
        return neutral_parts(raw, "candidates[0].content.parts", _reply_part, Thinking)

    @staticmethod
    def _stop(candidate: Mapping[str, Any], parts: list[Part]) -> StopReason | None:
        reason = candidate.get("finishReason")
        stop = _STOP_IN.get(reason) if isinstance(reason, str) else None
        if stop == "end_turn" and any(p.kind == "tool_call" for p in parts):
            return "tool_use"
        return stop

    def _usage_of(self, usage: Any) -> Usage | None:
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
            raise self.error(f"bad token counts: {exc}", field="usageMetadata") from None

    def count_tokens(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The ``countTokens`` answer: the same estimate a reply's usage gets for a
        request of this size (``contents``, or a whole ``generateContentRequest``)."""
        request = body.get("generateContentRequest", body)
        if not isinstance(request, Mapping):  # a malformed body is still counted, not a crash
            request = body
        counted = {k: v for k, v in request.items() if k != "model"}
        total = estimate_tokens(json_data(counted))
        return {
            "totalTokens": total,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": total}],
        }

    def error_response(self, fault: Fault, ctx: RenderContext) -> ErrorResponse:
        """Google's error for ``Fault.http(...)``; ``retry_after`` becomes a ``RetryInfo``
        detail (``retryDelay``), where Google says when to come back."""
        return errors.error_response(fault, model=_model(ctx), content_type=self.json_content_type)

    def error_event(self, fault: Fault, ctx: RenderContext) -> SSEEvent:
        """``data: {"error": {...}}`` in a stream sent with HTTP 200: google-genai raises
        ``ServerError`` (5xx codes) or ``ClientError`` (4xx) for it."""
        status = errors.google_status(fault.error_type or self.event_error_type, 500)
        code = errors.http_code(status, 500)
        error = errors.error_object(code, status, fault.message, model=_model(ctx))
        return SSEEvent(data=_data({"error": error}))

    def as_http_error(self, fault: Fault) -> Fault:
        """An in-stream error on a call that is not streamed: the same error over HTTP."""
        status = errors.google_status(fault.error_type or self.event_error_type, 500)
        return Fault.http(errors.http_code(status, 500), fault.message, error_type=status)

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type; a stream is also ``content-disposition: attachment``, as Google
        sends it."""
        headers = super().response_headers(ctx, streaming=streaming)
        if streaming:
            headers["content-disposition"] = "attachment"
        return headers


def _model(ctx: RenderContext) -> str:
    """The model an error names (Google's 404 says which model it did not find)."""
    return ctx.request.model if ctx.request is not None and ctx.request.model else ctx.model


def _reply_part(part: Mapping[str, Any], path: str) -> Part | None:
    """One part of an answer: text, a thought or a function call (``None`` for the
    kinds a reply cannot hold: images, code execution, ...)."""
    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought"):
            return Thinking(text=text, signature=signature_of(part, path))
        return Text(text=text)
    call = pick(part, "functionCall")
    if call is not None:
        return tool_call(call, f"{path}.functionCall")
    return None
