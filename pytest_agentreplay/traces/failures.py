"""A failed model call in a trace, as the HTTP error the provider answered.

A span of a call that failed keeps ``error.type`` (the SDK's exception class, or the
HTTP status) and its status message (the exception's text). The status code and the
provider's message are read back from the forms the SDKs give them:

* openai: ``Error code: 429 - {'error': {'message': 'slow down', ...}}`` (or the
  plain message);
* anthropic: ``429 slow down (request_id: req_..., path: ..., type: rate_limit_error)``;
* google-genai: ``429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': ...}}``.

A call that failed without an HTTP answer (a timeout, a dropped connection) cannot be
replayed from a trace: it is reported, and a test injects it with ``agentreplay.inject``.
"""

from __future__ import annotations

import re

from ..neutral import Fault
from .spans import TraceSpan

__all__ = ["STATUS_BY_TYPE", "failure_fault", "failure_text"]

STATUS_BY_TYPE: dict[str, int] = {
    "BadRequestError": 400,
    "AuthenticationError": 401,
    "PermissionDeniedError": 403,
    "NotFoundError": 404,
    "ConflictError": 409,
    "UnprocessableEntityError": 422,
    "RateLimitError": 429,
    "InternalServerError": 500,
    "ServiceUnavailableError": 503,
    "DeadlineExceededError": 504,
    "OverloadedError": 529,
}
"""The HTTP status behind each exception class the SDKs raise for one."""

_OPENAI = re.compile(r"^Error code: (\d{3}) - (.*)$", re.S)
_LEADING = re.compile(r"^(\d{3}) (.*)$", re.S)
_QUOTED = re.compile(r"""['"]message['"]: (['"])(.*?)(?<!\\)\1""", re.S)
_ANTHROPIC_TAIL = re.compile(r"\s*\(request_id: [^)]*\)\s*$")
_ERROR_TYPE = re.compile(r"\btype: ([a-z_]+)\)\s*$")


def failure_text(span: TraceSpan) -> str:
    """The exception's text: the span status message, else its ``exception`` event's."""
    if span.error:
        return span.error
    for name, attributes in span.events:
        if name == "exception" and attributes.get("exception.message"):
            return str(attributes["exception.message"])
    return str(span.get("error.message") or "")


def failure_fault(span: TraceSpan) -> Fault | None:
    """The HTTP error the failed call got, as a :class:`Fault`; ``None`` when it got none
    (a timeout, a connection error) or the trace does not say which."""
    text = failure_text(span)
    status, message = _status_and_message(text)
    kind = str(span.get("error.type") or "").rsplit(".", 1)[-1]
    if status is None and kind.isdigit():
        status = int(kind)
    status = status or STATUS_BY_TYPE.get(kind)
    if status is None or not 400 <= status <= 599:
        return None
    match = _ERROR_TYPE.search(text)
    return Fault.http(
        status, message or kind or "error", error_type=match.group(1) if match else None
    )


def _status_and_message(text: str) -> tuple[int | None, str]:
    for pattern in (_OPENAI, _LEADING):
        match = pattern.match(text)
        if match:
            rest = match.group(2)
            quoted = _QUOTED.search(rest)
            message = quoted.group(2) if quoted else _ANTHROPIC_TAIL.sub("", rest)
            return int(match.group(1)), message.strip()
    return None, text.strip()
