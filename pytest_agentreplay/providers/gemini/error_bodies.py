"""Google's API errors, as the Gemini API and Vertex AI send them.

Every Google API answers a failed call with one JSON object,
``{"error": {"code": 429, "message": ..., "status": "RESOURCE_EXHAUSTED", "details": [...]}}``:
``code`` is the HTTP status, ``status`` the ``google.rpc.Code`` name, and ``details``
typed messages (``ErrorInfo``, ``QuotaFailure``, ``Help``, ``RetryInfo`` with its
``retryDelay``). No ``retry-after`` header: a client that backs off as the server says
reads ``RetryInfo``. The same object arrives as an SSE ``data:`` event, with HTTP 200,
when a stream fails after it started; google-genai raises it then as it would the
HTTP error (``ClientError`` for 4xx codes, ``ServerError`` for 5xx).
"""

from __future__ import annotations

from typing import Any

from ...neutral import Fault
from ...sse import SSEEvent
from ..base import ERROR_EVENT_STATUS, Codec, ErrorResponse, RenderContext
from ..roles import asked_model
from .render import sse_data

__all__ = [
    "DEFAULT_EVENT_STATUS",
    "STATUS_CODES",
    "as_http_error",
    "error_event",
    "error_object",
    "error_response",
    "google_status",
    "http_code",
    "retry_delay",
]

STATUS_CODES: dict[str, int] = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ABORTED": 409,
    "ALREADY_EXISTS": 409,
    "RESOURCE_EXHAUSTED": 429,
    "CANCELLED": 499,
    "UNKNOWN": 500,
    "INTERNAL": 500,
    "DATA_LOSS": 500,
    "NOT_IMPLEMENTED": 501,
    "UNIMPLEMENTED": 501,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
"""Each ``google.rpc.Code`` name with the HTTP status Google maps it to."""

_BY_STATUS: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    429: "RESOURCE_EXHAUSTED",
    499: "CANCELLED",
    500: "INTERNAL",
    501: "NOT_IMPLEMENTED",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}

_MESSAGES: dict[str, str] = {
    "INVALID_ARGUMENT": "Request contains an invalid argument.",
    "FAILED_PRECONDITION": "Precondition check failed.",
    "UNAUTHENTICATED": "Request had invalid authentication credentials. Expected OAuth 2 "
    "access token, login cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project.",
    "PERMISSION_DENIED": "Method doesn't allow unregistered callers (callers without "
    "established identity). Please use API Key or other form of API consumer identity "
    "to call this API.",
    "NOT_FOUND": "models/{model} is not found for API version v1beta, or is not supported "
    "for generateContent. Call ListModels to see the list of available models and their "
    "supported methods.",
    "RESOURCE_EXHAUSTED": "You exceeded your current quota, please check your plan and "
    "billing details. For more information on this error, head to: "
    "https://ai.google.dev/gemini-api/docs/rate-limits.",
    "INTERNAL": "An internal error has occurred. Please retry or report in "
    "https://developers.generativeai.google/guide/troubleshooting",
    "UNAVAILABLE": "The model is overloaded. Please try again later.",
    "DEADLINE_EXCEEDED": "The request timed out. Please try again.",
}
"""The message Google usually sends with each status (``{model}`` is filled in)."""

DEFAULT_EVENT_STATUS = "UNAVAILABLE"
"""An in-stream failure with no type: the model overloaded, Gemini's usual one."""

_QUOTA_METRIC = "generativelanguage.googleapis.com/generate_content_requests"
_HELP = {
    "RESOURCE_EXHAUSTED": (
        "Learn more about Gemini API quotas",
        "https://ai.google.dev/gemini-api/docs/rate-limits",
    ),
}


def google_status(error_type: str | None, code: int) -> str:
    """The ``status`` name for a fault: its ``error_type`` when that is a Google status
    (``"RESOURCE_EXHAUSTED"``), else the name Google gives ``code``. A type written for
    another provider (``"rate_limit_error"``) is read through the status it stands for,
    so one script faults every provider alike."""
    if error_type:
        if error_type.upper() in STATUS_CODES:
            return error_type.upper()
        if error_type.replace("_", "").isalpha() and error_type.isupper():
            return error_type  # a status of Google's that this table does not list
        code = http_code(error_type, code)
    if code in _BY_STATUS:
        return _BY_STATUS[code]
    return "INTERNAL" if code >= 500 else "FAILED_PRECONDITION"


def http_code(error_type: str | None, default: int) -> int:
    """The HTTP status an error of ``error_type`` is sent with (Google's table, then the
    cross-provider names of :data:`~.base.ERROR_EVENT_STATUS`, then ``default``)."""
    if error_type and error_type.upper() in STATUS_CODES:
        return STATUS_CODES[error_type.upper()]
    if error_type == "overloaded_error":  # Anthropic's 529: Google says 503 UNAVAILABLE
        return 503
    return ERROR_EVENT_STATUS.get(error_type or "", default)


def retry_delay(seconds: float) -> str:
    """A ``google.protobuf.Duration`` in JSON: ``"5s"``, ``"0.25s"``."""
    if float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{seconds:.3f}".rstrip("0") + "s"


def _details(status: str, model: str, retry_after: float | None) -> list[dict[str, Any]]:
    """The typed ``details`` Google attaches: which quota ran out and where to read
    about it (``QuotaFailure``, ``Help``), and when to retry (``RetryInfo``)."""
    details: list[dict[str, Any]] = []
    if status == "RESOURCE_EXHAUSTED":
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                "violations": [
                    {
                        "quotaMetric": _QUOTA_METRIC,
                        "quotaId": "GenerateRequestsPerMinutePerProjectPerModel",
                        "quotaDimensions": {"location": "global", "model": model},
                    }
                ],
            }
        )
    if status in _HELP:
        description, url = _HELP[status]
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.Help",
                "links": [{"description": description, "url": url}],
            }
        )
    if retry_after is not None:
        details.append(
            {
                "@type": "type.googleapis.com/google.rpc.RetryInfo",
                "retryDelay": retry_delay(retry_after),
            }
        )
    return details


def error_object(
    code: int, status: str, message: str | None, *, model: str, retry_after: float | None = None
) -> dict[str, Any]:
    """The ``error`` object: code, message, status and, when there are any, details."""
    text = (
        message
        or _MESSAGES.get(status)
        or _MESSAGES["INTERNAL" if code >= 500 else "INVALID_ARGUMENT"]
    )
    error: dict[str, Any] = {
        "code": code,
        "message": text.replace("{model}", model),
        "status": status,
    }
    details = _details(status, model, retry_after)
    if details:
        error["details"] = details
    return error


def error_response(codec: Codec, fault: Fault, ctx: RenderContext) -> ErrorResponse:
    """The HTTP error for ``Fault.http(...)``: Google's JSON body, its content type;
    ``retry_after`` becomes a ``RetryInfo`` detail (``retryDelay``), where Google says
    when to come back."""
    if fault.kind != "http" or fault.status is None:
        raise ValueError(f"error_response needs a Fault.http(...), got {fault.describe()}")
    status = google_status(fault.error_type, fault.status)
    error = error_object(
        fault.status, status, fault.message, model=asked_model(ctx), retry_after=fault.retry_after
    )
    headers = {"content-type": codec.json_content_type}
    return ErrorResponse(status=fault.status, headers=headers, body={"error": error})


def error_event(codec: Codec, fault: Fault, ctx: RenderContext) -> SSEEvent:
    """``data: {"error": {...}}`` in a stream sent with HTTP 200: google-genai raises
    ``ServerError`` (5xx codes) or ``ClientError`` (4xx) for it."""
    status = google_status(fault.error_type or codec.event_error_type, 500)
    code = http_code(status, 500)
    error = error_object(code, status, fault.message, model=asked_model(ctx))
    return SSEEvent(data=sse_data({"error": error}))


def as_http_error(codec: Codec, fault: Fault) -> Fault:
    """An in-stream error on a call that is not streamed: the same error over HTTP."""
    status = google_status(fault.error_type or codec.event_error_type, 500)
    return Fault.http(http_code(status, 500), fault.message, error_type=status)
