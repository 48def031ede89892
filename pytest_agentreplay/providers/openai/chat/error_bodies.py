"""OpenAI Chat Completions errors: OpenAI's HTTP error (:mod:`..common`), and the
``data: {"error": {...}}`` a stream fails with."""

from __future__ import annotations

from ....neutral import Fault
from ....sse import SSEEvent
from ...base import Codec, ErrorResponse, RenderContext, json_data
from .. import common

__all__ = ["error_event", "error_response"]


def error_response(codec: Codec, fault: Fault, ctx: RenderContext) -> ErrorResponse:
    """OpenAI's error JSON for ``Fault.http(...)`` (see :mod:`..common`)."""
    return common.error_response(fault, ctx)


def error_event(codec: Codec, fault: Fault, ctx: RenderContext) -> SSEEvent:
    """The mid-stream error OpenAI sends: ``data: {"error": {...}}`` with no event
    name; the SDK raises ``openai.APIError`` with that object as ``body``."""
    return SSEEvent(data=json_data({"error": common.error_object(fault, 500, ctx.model)}))
