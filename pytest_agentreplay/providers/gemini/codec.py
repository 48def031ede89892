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
:meth:`GeminiCodec.parse_call`. Rendering, folding, request parsing, reading an answer
back and the error catalogue live in :mod:`.render`, :mod:`.fold`, :mod:`.request`,
:mod:`.reply` and :mod:`.error_bodies` (the parts the last three read alike in :mod:`.parts`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...neutral import Fault, Provider
from ...sse import LineEnd
from ..base import RenderContext, estimate_tokens, json_data
from ..roles import FolderCodec, Roles
from . import compose, error_bodies, fold, render, reply, request

__all__ = ["GeminiCodec"]


class GeminiCodec(FolderCodec):
    """Gemini ``generateContent`` / ``streamGenerateContent``, Gemini API and Vertex AI."""

    provider: ClassVar[Provider] = "gemini"
    roles: ClassVar[Roles] = Roles(request, render, fold, reply, error_bodies, compose)
    event_error_type: ClassVar[str] = error_bodies.DEFAULT_EVENT_STATUS
    stream_content_type: ClassVar[str] = "text/event-stream"
    json_content_type: ClassVar[str] = "application/json; charset=UTF-8"
    sse_line_end: ClassVar[LineEnd] = "\r\n"

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

    def as_http_error(self, fault: Fault) -> Fault:
        """An in-stream error on a call that is not streamed: the same error over HTTP."""
        return error_bodies.as_http_error(self, fault)

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type; a stream is also ``content-disposition: attachment``, as Google
        sends it."""
        headers = super().response_headers(ctx, streaming=streaming)
        if streaming:
            headers["content-disposition"] = "attachment"
        return headers
