"""Anthropic's errors: over HTTP, and as the ``event: error`` of a stream.

The API answers a failed call with
``{"type": "error", "error": {"type": ..., "message": ...}, "request_id": "req_..."}``,
a ``request-id`` header and ``x-should-retry``; a stream that fails after it started
sends the same object as an ``event: error``, with HTTP 200.
"""

from __future__ import annotations

from ...neutral import Fault
from ...sse import SSEEvent
from ..base import Codec, ErrorResponse, RenderContext
from .render import event

__all__ = [
    "ERROR_MESSAGES",
    "ERROR_TYPES",
    "default_error_type",
    "error_event",
    "error_response",
]

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    409: "conflict_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
"""The ``error.type`` the API documents for each status. Other 4xx statuses use
``invalid_request_error`` (as the docs say), other 5xx ``api_error``."""

ERROR_MESSAGES: dict[str, str] = {
    "invalid_request_error": "Invalid request.",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API. "
    "Please go to Plans & Billing to upgrade or purchase credits.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "conflict_error": "Conflict",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit "
    "(https://docs.claude.com/en/api/rate-limits); see the response headers for current "
    "usage. Please reduce the prompt length or the maximum tokens requested, or try again "
    "later.",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}
"""The message the API usually sends with each error type (used when a fault has none)."""


def default_error_type(status: int) -> str:
    """The API's ``error.type`` for an HTTP ``status``."""
    if status in ERROR_TYPES:
        return ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def error_response(codec: Codec, fault: Fault, ctx: RenderContext) -> ErrorResponse:
    """The API's error for ``Fault.http(...)``: JSON body with ``request_id``,
    ``request-id`` header, ``x-should-retry`` (``true`` for 408, 409, 429 and
    5xx, as the API and the SDK's own policy agree), ``retry-after`` if given."""
    if fault.kind != "http" or fault.status is None:
        raise ValueError(f"error_response needs a Fault.http(...), got {fault.describe()}")
    status = fault.status
    kind = fault.error_type or default_error_type(status)
    message = (
        fault.message or ERROR_MESSAGES.get(kind) or ERROR_MESSAGES[default_error_type(status)]
    )
    drawn = ctx.ids.new("req_011C", 20)  # drawn even when given: ids keep their order
    request_id = fault.request_id or drawn
    retry = status in (408, 409, 429) or status >= 500
    headers = {
        "content-type": codec.json_content_type,
        "request-id": request_id,
        "x-should-retry": "true" if retry else "false",
    }
    if fault.retry_after is not None:
        seconds = fault.retry_after
        headers["retry-after"] = str(int(seconds)) if seconds.is_integer() else repr(seconds)
    body = {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": request_id,
    }
    return ErrorResponse(status=status, headers=headers, body=body)


def error_event(codec: Codec, fault: Fault, ctx: RenderContext) -> SSEEvent:
    """``event: error`` with ``{"type": "error", "error": {...}, "request_id": ...}``,
    sent with HTTP 200, as the live API sends it (``details`` null, the request id
    of the response: the fault's, or the one its headers carry); the SDK raises it
    as an ``APIStatusError`` carrying that body."""
    kind = fault.error_type or codec.event_error_type
    message = fault.message or ERROR_MESSAGES.get(kind, "Internal server error")
    error = {"details": None, "type": kind, "message": message}
    return event("error", {"error": error, "request_id": fault.request_id})
