"""A failed model call in a trace, as the HTTP error the provider answered.

A span of a call that failed keeps ``error.type`` (the SDK's exception class, or the
HTTP status) and its status message (the exception's text). The status code and the
provider's message are read back from the forms the SDKs give them:

* openai: ``Error code: 429 - {'error': {'message': 'slow down', ...}}`` (or the
  plain message);
* anthropic: ``429 slow down (request_id: req_..., path: ..., type: rate_limit_error)``;
* google-genai: ``429 RESOURCE_EXHAUSTED. {'error': {'code': 429, 'message': ...}}``.

A call that failed without an HTTP answer is told by the exception's class (or its
text): a timeout (``APITimeoutError``, ``httpx.ReadTimeout``) becomes
:meth:`~..neutral.Fault.timeout`, struck before any response; a dropped connection
(``APIConnectionError``, ``httpx.RemoteProtocolError``) :meth:`~..neutral.Fault.cut`,
struck after the headers ("peer closed connection without sending complete message
body"): a trace says no more of when either struck. A streamed call the SDK failed with an
error that has no status (OpenAI's ``APIError``, Anthropic's ``APIStatusError`` of an
``event: error``) failed inside its stream: :meth:`~..neutral.Fault.error_event`. What
none of these says is reported, and a test injects it with ``agentreplay.inject``.
"""

from __future__ import annotations

import re

from ..neutral import Fault
from .spans import TraceSpan

__all__ = [
    "CUT_TYPES",
    "IN_STREAM_TYPES",
    "STATUS_BY_TYPE",
    "TIMEOUT_TYPES",
    "failure_fault",
    "failure_text",
]

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

TIMEOUT_TYPES = frozenset(
    {
        "APITimeoutError",  # openai, anthropic
        "TimeoutException",  # httpx, httpx2 (and each of the four below)
        "ReadTimeout",
        "ConnectTimeout",
        "WriteTimeout",
        "PoolTimeout",
        "TimeoutError",  # Python's; aiohttp's ServerTimeoutError is one
        "ServerTimeoutError",
    }
)
"""Exception classes of a call that timed out waiting for its answer."""

CUT_TYPES = frozenset(
    {
        "APIConnectionError",  # openai, anthropic
        "RemoteProtocolError",  # httpx, httpx2: the peer closed the connection
        "ReadError",
        "ConnectError",
        "ServerDisconnectedError",  # aiohttp
        "ClientPayloadError",
        "ConnectionError",
        "ConnectionResetError",
    }
)
"""Exception classes of a call whose connection dropped (or never opened)."""

IN_STREAM_TYPES = frozenset({"APIError", "APIStatusError"})
"""Exception classes an SDK raises for an error event inside a stream (no HTTP status)."""

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


def failure_fault(span: TraceSpan, *, streamed: bool) -> Fault | None:
    """How the failed call failed, as a :class:`Fault`: the HTTP error it got, a
    timeout or a dropped connection, or an error inside its stream (``streamed``: the
    call is being written as a stream); ``None`` when the trace does not say which."""
    text = failure_text(span)
    status, message = _status_and_message(text)
    kind = str(span.get("error.type") or "").rsplit(".", 1)[-1]
    if status is None and kind.isdigit():
        status = int(kind)
    status = status or STATUS_BY_TYPE.get(kind)
    match = _ERROR_TYPE.search(text)
    error_type = match.group(1) if match else None
    if status is not None and 400 <= status <= 599:
        return Fault.http(status, message or kind or "error", error_type=error_type)
    if kind in TIMEOUT_TYPES or (not kind and "timed out" in text.lower()):
        return Fault.timeout()
    if kind in CUT_TYPES:
        return Fault.cut(after_events=0)
    if kind in IN_STREAM_TYPES and streamed:
        return Fault.error_event(error_type, _ANTHROPIC_TAIL.sub("", message) or kind)
    return None


def _status_and_message(text: str) -> tuple[int | None, str]:
    for pattern in (_OPENAI, _LEADING):
        match = pattern.match(text)
        if match:
            rest = match.group(2)
            quoted = _QUOTED.search(rest)
            message = quoted.group(2) if quoted else _ANTHROPIC_TAIL.sub("", rest)
            return int(match.group(1)), message.strip()
    return None, text.strip()
