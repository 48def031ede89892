"""What can go wrong in a turn, classified the way a user interface needs it.

:func:`classify` turns whatever the ``anthropic`` and ``openai`` SDKs (or their HTTP
library, ``httpx2``) raise into one :class:`AgentError`: a ``kind``, a message that
is safe to show, whether trying again may help (``retryable``), the HTTP status and
``retry-after`` when the provider sent them, and whether the runtime retries it by
itself (``transient``: a dropped stream, a timeout, an overloaded or failing server).
:func:`retry_delay` says how long to wait before such a retry.

A stream that fails after its 200 (a dropped connection, an in-stream error event)
raises an exception that has lost the response it came in: the clients wrap it in a
:class:`MidStreamError` holding that response's headers, so that its ``retry-after``
and request id are not lost either.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, Literal

import anthropic
import httpx2
import openai

ErrorKind = Literal["auth", "model_not_found", "provider", "bad_request", "no_response"]

INTERRUPTED = "The model's response was interrupted. Please try again."
UNAVAILABLE = "The model provider is unavailable right now. Please try again."
AUTH = "The model provider rejected the credentials."
NO_RESPONSE = "The model did not answer."

MAX_RETRY_WAIT = 60.0
"""The longest wait before a retry, whatever ``retry-after`` asks: a header of a day,
or ``inf``, must not hang a turn (the user can always try again later)."""

_MODEL_NOT_FOUND = re.compile(r"model.*(not found|does not exist|unknown)|unknown model", re.I)
# Error types (Anthropic) and codes (OpenAI) that say the credentials were refused.
_AUTH = {"authentication_error", "permission_error", "invalid_api_key", "token_invalidated"}
_CONNECTION_ERRORS = (
    httpx2.TransportError,
    anthropic.APIConnectionError,
    openai.APIConnectionError,
)
_SDK_ERRORS = (anthropic.APIError, openai.APIError)
# The provider's request-id header: Anthropic's, then OpenAI's.
_REQUEST_ID_HEADERS = ("request-id", "x-request-id")


class MidStreamError(Exception):
    """A model call that failed after its response began (HTTP 200): ``cause`` is what
    the SDK raised, ``headers`` the headers of that response. The SDKs raise a dropped
    stream (``httpx2.RemoteProtocolError``) and OpenAI's error chunk (``APIError``)
    without the response, so an overloaded provider's ``retry-after`` and the id of
    the failed request would be lost without it."""

    def __init__(self, cause: BaseException, headers: Mapping[str, str]) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.headers = headers


SDK_ERRORS = (*_SDK_ERRORS, httpx2.TransportError)
"""What the SDKs (and their HTTP library) raise when a model call fails."""

PROVIDER_ERRORS = (*SDK_ERRORS, MidStreamError)
"""What a model call raises when the provider (or the connection to it) fails."""


class AgentError(Exception):
    """A failed model step or turn, as the user sees it."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: str | None = None,
        transient: bool = False,
        provider_text: str = "",
        request_id: str | None = None,
    ) -> None:
        super().__init__(message)
        # What the provider said, verbatim (its error body as text), and the request
        # id it gave: for the logs and for support, never shown to the user.
        self.provider_text = provider_text
        self.request_id = request_id
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status = status
        self.retry_after = retry_after
        self.transient = transient

    def __repr__(self) -> str:
        return (
            f"AgentError({self.kind!r}, {self.message!r}, retryable={self.retryable}, "
            f"status={self.status}, retry_after={self.retry_after!r})"
        )

    def as_json(self) -> dict[str, Any]:
        """The error as the write-ahead log stores it (:meth:`from_json` reads it back)."""
        return {
            "kind": self.kind,
            "message": self.message,
            "retryable": self.retryable,
            "status": self.status,
            "retry_after": self.retry_after,
            "transient": self.transient,
            "provider_text": self.provider_text,
            "request_id": self.request_id,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentError:
        return cls(
            data["kind"],
            data["message"],
            retryable=data["retryable"],
            status=data["status"],
            retry_after=data["retry_after"],
            transient=data["transient"],
            provider_text=data.get("provider_text", ""),  # absent in older logs
            request_id=data.get("request_id"),
        )


def no_response() -> AgentError:
    """The model ended its reply without answering (empty, cut short, or only history)."""
    return AgentError("no_response", NO_RESPONSE, retryable=True)


def classify(exc: BaseException) -> AgentError:
    """The :class:`AgentError` for an exception a model call raised (one of
    :data:`PROVIDER_ERRORS`), carrying the provider's error body as text and its
    request id. A :class:`MidStreamError` is classified as its cause, with the
    ``retry-after`` and request id of the response it failed in (unless the cause
    names its own)."""
    if isinstance(exc, MidStreamError):
        error = classify(exc.cause)
        error.retry_after = error.retry_after or _retry_after(exc.headers)
        error.request_id = error.request_id or _request_id(exc.headers)
        return error
    error = _classify(exc)
    if not isinstance(exc, AgentError):
        error.provider_text = _provider_text(exc)
        error.request_id = getattr(exc, "request_id", None)
    return error


def _request_id(headers: Mapping[str, str]) -> str | None:
    """The provider's request id, from either provider's header."""
    return next((headers[name] for name in _REQUEST_ID_HEADERS if headers.get(name)), None)


def _provider_text(exc: BaseException) -> str:
    """The provider's error, as text: the JSON of its error body (an HTTP error's, or a
    stream's error event's), else the exception's own words."""
    body = getattr(exc, "body", None)
    if body is None:
        return str(exc)
    return body if isinstance(body, str) else json.dumps(body, sort_keys=True)


def _classify(exc: BaseException) -> AgentError:
    if isinstance(exc, AgentError):
        return exc
    if isinstance(exc, _CONNECTION_ERRORS):
        # The provider's internals ("peer closed connection without sending complete
        # message body") are no use to the user: say what happened, generically.
        return AgentError("provider", INTERRUPTED, retryable=True, transient=True)
    error_type, message, code = _fields(getattr(exc, "body", None))
    status = getattr(exc, "status_code", 200)
    if status != 200:  # an HTTP error response
        headers = exc.response.headers  # type: ignore[attr-defined]
        return _from_status(status, message, code, _retry_after(headers))
    # An error reported inside a stream that began with HTTP 200 (Anthropic's
    # ``event: error``, an OpenAI ``error`` chunk): its type says what happened.
    return _from_type(error_type, message, code)


def _retry_after(headers: Mapping[str, str]) -> str | None:
    """The provider's ``retry-after``, in seconds as sent; OpenAI's finer
    ``retry-after-ms``, when present, wins (as in the OpenAI SDK's own retries)."""
    millis = headers.get("retry-after-ms")
    try:
        seconds = float(millis) / 1000 if millis else math.nan
    except ValueError:
        seconds = math.nan
    if math.isfinite(seconds) and seconds >= 0:
        return f"{seconds:g}"
    return headers.get("retry-after")


def retry_delay(retry: int, backoff: float, retry_after: str | None) -> float:
    """Seconds to wait before retry number ``retry`` (1, 2, ...): ``backoff``, doubled
    at each retry, or longer when the provider's ``retry-after`` asks for it; never
    more than :data:`MAX_RETRY_WAIT`."""
    return min(max(backoff * 2.0 ** (retry - 1), _seconds(retry_after)), MAX_RETRY_WAIT)


def _seconds(retry_after: str | None) -> float:
    """A ``retry-after`` value in seconds: a number, or an HTTP date; 0 when it is
    absent, unreadable, negative or not finite."""
    if not retry_after:
        return 0.0
    try:
        seconds = float(retry_after)
    except ValueError:
        seconds = _seconds_until(retry_after)
    return seconds if math.isfinite(seconds) and seconds > 0 else 0.0


def _seconds_until(http_date: str) -> float:
    """Seconds from now to an HTTP date (``Wed, 21 Oct 2026 07:28:00 GMT``), or 0."""
    try:
        when = parsedate_to_datetime(http_date)
    except (TypeError, ValueError):
        return 0.0
    if when.tzinfo is None:  # "-0000": UTC with no zone given (RFC 5322)
        when = when.replace(tzinfo=timezone.utc)
    return (when - datetime.now(timezone.utc)).total_seconds()


def _fields(body: Any) -> tuple[str, str, str]:
    """(error type, message, code) from either provider's error body (Anthropic's
    wraps the error in ``{"type": "error", "error": {...}}``; the OpenAI SDK unwraps it)."""
    error = (body.get("error") or body) if isinstance(body, dict) else {}
    if not isinstance(error, dict):
        error = {"message": str(error)}
    return (
        str(error.get("type") or ""),
        str(error.get("message") or ""),
        str(error.get("code") or ""),
    )


def _from_status(status: int, message: str, code: str, retry_after: str | None) -> AgentError:
    if status in (401, 403):
        return AgentError("auth", AUTH, retryable=False, status=status)
    if status == 404 or code == "model_not_found" or _MODEL_NOT_FOUND.search(message):
        return AgentError("model_not_found", message, retryable=False, status=status)
    if status == 429:  # surfaced, not retried here: a quota does not come back in seconds
        return AgentError(
            "provider", message, retryable=True, status=status, retry_after=retry_after
        )
    if status == 408 or status >= 500:  # a timeout, an overloaded or failing server
        return AgentError(
            "provider",
            UNAVAILABLE,
            retryable=True,
            status=status,
            retry_after=retry_after,
            transient=True,
        )
    return AgentError("bad_request", message, retryable=False, status=status)


def _from_type(error_type: str, message: str, code: str) -> AgentError:
    if error_type in _AUTH or code in _AUTH:
        return AgentError("auth", AUTH, retryable=False)
    if error_type == "not_found_error" or code == "model_not_found":
        return AgentError("model_not_found", message, retryable=False)
    if error_type == "invalid_request_error":
        return AgentError("bad_request", message, retryable=False)
    if error_type == "rate_limit_error":
        return AgentError("provider", message, retryable=True)
    return AgentError("provider", UNAVAILABLE, retryable=True, transient=True)
