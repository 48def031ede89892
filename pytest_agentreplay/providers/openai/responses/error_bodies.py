"""OpenAI Responses errors: OpenAI's HTTP error (:mod:`..common`), and the
``event: error`` record a stream fails with."""

from __future__ import annotations

from ....neutral import Fault
from ....sse import SSEEvent
from ...base import Codec, ErrorResponse, RenderContext, json_data
from .. import common

__all__ = ["error_event", "error_response"]

# Error types whose usual ``code`` is not the type itself (for in-stream errors).
_CODE_FOR_TYPE: dict[str, str | None] = {
    "requests": "rate_limit_exceeded",
    "tokens": "rate_limit_exceeded",
    "invalid_request_error": None,
    "server_error": None,
}


def error_response(codec: Codec, fault: Fault, ctx: RenderContext) -> ErrorResponse:
    """OpenAI's error JSON for ``Fault.http(...)`` (see :mod:`..common`)."""
    return common.error_response(fault, ctx)


def error_event(codec: Codec, fault: Fault, ctx: RenderContext) -> SSEEvent:
    """The ``event: error`` record the live API sends mid-stream.

    The live API nests the details under ``error`` (the API reference
    documents them flat, but the server does not send that shape); the
    nested object is also what makes the official SDK raise ``APIError``
    instead of yielding the event. ``sequence_number`` is the event's place
    in the stream (``after_events``).
    """
    error_type = fault.error_type or codec.event_error_type
    message = fault.message or "An error occurred while processing your request."
    payload = {
        "type": "error",
        "sequence_number": fault.after_events or 0,
        "error": {
            "type": error_type,
            "code": _CODE_FOR_TYPE.get(error_type, error_type),
            "message": message,
            "param": None,
        },
    }
    return SSEEvent(data=json_data(payload), event="error")
