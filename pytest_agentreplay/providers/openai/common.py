"""What OpenAI's server adds to every answer, shared by the Chat Completions and
Responses folders: its HTTP errors, its request ids and its version header, and the
codec base (:class:`OpenAICodec`) that puts the last two on every response; and how
both APIs take a function tool and its call's arguments in a request.

Both APIs sit behind the same server, which answers a failed request with
``{"error": {"message", "type", "param", "code"}}``, an ``x-request-id`` and, for
rate limits, ``retry-after``. OpenAI sends no ``x-should-retry``: the SDK retries
by status (408, 409, 429, 5xx), honouring ``retry-after-ms`` before
``retry-after``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ...neutral import Fault, Tool
from ..base import ErrorResponse, RenderContext
from ..roles import FolderCodec, asked_model

__all__ = [
    "OPENAI_VERSION",
    "OpenAICodec",
    "error_headers",
    "error_object",
    "error_response",
    "function_definition",
    "json_arguments",
    "request_id",
    "response_headers",
]

OPENAI_VERSION = "2020-10-01"

# The ``type`` values OpenAI uses; a Fault's ``error_type`` outside them is a ``code``.
_TYPES = frozenset(
    {
        "invalid_request_error",
        "server_error",
        "requests",
        "tokens",
        "insufficient_quota",
        "request_forbidden",
    }
)
_SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"
# status → (type, code, message); ``{model}`` is filled in.
_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request: the request body is not valid."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "request_forbidden",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    409: (
        "invalid_request_error",
        None,
        "The request conflicts with another request in progress. Please try again.",
    ),
    413: (
        "invalid_request_error",
        "request_too_large",
        "Request too large. Please reduce the size of your request.",
    ),
    422: ("invalid_request_error", None, "The request could not be processed."),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for {model} on requests per min (RPM). "
        "Visit https://platform.openai.com/account/rate-limits to learn more.",
    ),
    500: ("server_error", None, _SERVER_ERROR),
    502: ("server_error", None, "Bad gateway."),
    503: ("server_error", None, "The engine is currently overloaded, please try again later."),
    504: ("server_error", None, "Gateway timeout."),
}


def request_id(ctx: RenderContext) -> str:
    """An ``x-request-id`` value in OpenAI's shape."""
    return ctx.ids.hex("req_", 32)


def _default(status: int) -> tuple[str, str | None, str]:
    if status in _DEFAULTS:
        return _DEFAULTS[status]
    if status >= 500:
        return "server_error", None, _SERVER_ERROR
    return "invalid_request_error", None, "The request could not be completed."


def error_object(fault: Fault, status: int, model: str) -> dict[str, Any]:
    """The ``error`` object for ``fault``: the status's usual type, code and message;
    ``fault.error_type`` replaces the type when it is one of OpenAI's types, else
    the code (``model_not_found``, ``context_length_exceeded``...)."""
    kind, code, message = _default(status)
    if fault.error_type in _TYPES:
        kind = fault.error_type
        code = "insufficient_quota" if kind == "insufficient_quota" else code
    elif fault.error_type:
        code = fault.error_type
    text = fault.message if fault.message is not None else message.format(model=model)
    return {"message": text, "type": kind, "param": None, "code": code}


def error_headers(fault: Fault, ctx: RenderContext) -> dict[str, str]:
    """Content type, request id, API version and, when given, ``retry-after``
    (whole seconds, rounded up) with ``retry-after-ms`` for a fractional value."""
    headers = {
        "content-type": "application/json; charset=utf-8",
        "x-request-id": request_id(ctx),
        "openai-version": OPENAI_VERSION,
    }
    if fault.retry_after is not None:
        seconds = fault.retry_after
        headers["retry-after"] = str(math.ceil(seconds))
        if seconds != math.ceil(seconds):
            headers["retry-after-ms"] = str(round(seconds * 1000))
    return headers


def error_response(fault: Fault, ctx: RenderContext) -> ErrorResponse:
    """The whole HTTP error for ``Fault.http(...)`` (naming the model the request named)."""
    if fault.kind != "http" or fault.status is None:
        raise ValueError(f"error_response needs a Fault.http(...), got {fault.describe()}")
    body = {"error": error_object(fault, fault.status, asked_model(ctx))}
    return ErrorResponse(status=fault.status, headers=error_headers(fault, ctx), body=body)


def response_headers(ctx: RenderContext) -> dict[str, str]:
    """What a successful answer carries besides its content type: OpenAI's
    ``x-request-id`` and ``openai-version``."""
    return {"x-request-id": request_id(ctx), "openai-version": OPENAI_VERSION}


class OpenAICodec(FolderCodec):
    """A codec of one of OpenAI's formats: its answers carry OpenAI's headers."""

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type plus OpenAI's ``x-request-id`` and ``openai-version``."""
        headers = super().response_headers(ctx, streaming=streaming)
        return {**headers, **response_headers(ctx)}


def function_definition(tool: Tool) -> dict[str, Any]:
    """A tool as both APIs define a function: name, description, JSON-schema parameters."""
    out: dict[str, Any] = {
        "name": tool.name,
        "parameters": dict(tool.parameters) or {"type": "object", "properties": {}},
    }
    if tool.description is not None:
        out["description"] = tool.description
    return out


def json_arguments(args: dict[str, Any]) -> str:
    """A tool call's arguments as the JSON text both APIs carry (compact, as sent)."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
