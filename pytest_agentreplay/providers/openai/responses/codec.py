"""The OpenAI Responses API wire format (``POST /v1/responses``).

The same format is spoken by OpenRouter (``/api/v1/responses``), Azure
(``/openai/v1/responses``) and DeepSeek (``/responses``), and by the
background-mode resume endpoint ``GET /v1/responses/{id}?stream=true``.

What the API sends, and what this codec reproduces:

* a non-streaming ``Response`` object whose ``output`` is a list of items
  (``reasoning``, ``message`` with ``output_text`` / ``refusal`` parts,
  ``function_call``), request options echoed back, ``usage`` with token details;
* a stream of ``event:`` + ``data:`` records, each data payload carrying its
  ``type`` and a ``sequence_number``: ``response.created``,
  ``response.in_progress``, then per item ``response.output_item.added`` /
  content or summary parts / deltas / ``*.done`` / ``response.output_item.done``,
  and finally ``response.completed`` (or ``response.incomplete``) holding the
  whole response again. OpenAI sends no ``[DONE]`` sentinel (OpenRouter does);
* HTTP errors as ``{"error": {"message", "type", "param", "code"}}`` with an
  ``x-request-id`` header, and in-stream failures as an ``event: error`` record.

Rendering lives in :mod:`.render`, folding a stream back into the final body in
:mod:`.fold` (its event catalogue in :mod:`.events`), request parsing in
:mod:`.request`, the way back from a body to a neutral reply in :mod:`.reply`, the
errors in :mod:`.error_bodies`; this module assembles the codec.
"""

from __future__ import annotations

from typing import ClassVar

from ....neutral import Provider
from ...roles import Roles
from ..common import OpenAICodec
from . import compose, error_bodies, fold, render, reply, request

__all__ = ["OpenAIResponsesCodec"]


class OpenAIResponsesCodec(OpenAICodec):
    """Neutral replies ⇄ the OpenAI Responses API (JSON bodies and SSE streams)."""

    provider: ClassVar[Provider] = "openai_responses"
    roles: ClassVar[Roles] = Roles(request, render, fold, reply, error_bodies, compose)
