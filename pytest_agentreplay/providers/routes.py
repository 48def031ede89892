"""Which provider a request path belongs to, without loading any codec.

Replay asks this for every request (matching drops a provider's body noise, a
miss is reported as a model call), so it lives apart from the codecs, which
build the pydantic reply model and are imported only when a response is
rendered. Each codec's ``handles`` is the function here. The provider names
(:data:`~..neutral.Provider`) are the model's; they are imported for type checking
only, so that detecting a provider loads no pydantic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    from ..neutral import Provider

__all__ = ["detect", "gemini_method", "handles", "target", "token_count"]


def target(url: str) -> str:
    """The path and query of ``url``: where a request was sent, as a codec reads it
    (Gemini's model and stream flag are there, not in the body)."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


_NOT_RESPONSE_CALLS = frozenset({"input_tokens", "compact", "cancel", "input_items"})


def _anthropic(method: str, path: str) -> bool:
    """``POST .../v1/messages`` under any prefix (proxies, gateways); not
    ``/v1/messages/count_tokens`` or ``/v1/messages/batches...``."""
    if method.upper() != "POST":
        return False
    path = path.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return path == "/v1/messages" or path.endswith("/v1/messages")


def _openai_chat(method: str, path: str) -> bool:
    """``POST`` to any path ending in ``/chat/completions`` (prefixes allowed);
    not the stored-completion endpoints ``/chat/completions/{id}[/messages]``."""
    segments = path.rstrip("/").split("/")
    return method.upper() == "POST" and segments[-2:] == ["chat", "completions"]


def _openai_responses(method: str, path: str) -> bool:
    """``POST .../responses`` (create) and ``GET .../responses/{id}`` (retrieve,
    which streams a background response when the query says ``stream=true``).

    Refuses ``/responses/input_tokens``, ``/responses/compact``,
    ``/responses/{id}/cancel``, ``/responses/{id}/input_items`` and DELETE.
    """
    segments = [s for s in path.split("?", 1)[0].split("/") if s]
    verb = method.upper()
    if verb == "POST":
        return bool(segments) and segments[-1] == "responses"
    if verb == "GET":
        return (
            len(segments) >= 2
            and segments[-2] == "responses"
            and segments[-1] not in _NOT_RESPONSE_CALLS
        )
    return False


# The collections a Gemini model lives in: ``models/`` (Gemini API, Vertex publisher
# models), ``tunedModels/`` (Gemini API tuned models), ``endpoints/`` (Vertex deployments).
_GEMINI_COLLECTIONS = frozenset({"models", "tunedModels", "endpoints"})
_GEMINI_CALLS = frozenset({"generateContent", "streamGenerateContent"})


def gemini_method(path: str) -> tuple[str, str] | None:
    """``(model, method)`` of a Gemini path, ``.../models/{model}:{method}``, or ``None``.

    Any prefix is allowed (``/v1beta``, ``/v1``, Vertex's
    ``/v1/projects/{p}/locations/{l}/publishers/google``, a gateway's); the colon may
    arrive percent-encoded (``%3A``), as some HTTP clients send it."""
    segments = [s for s in path.split("?", 1)[0].split("#", 1)[0].split("/") if s]
    if len(segments) < 2 or segments[-2] not in _GEMINI_COLLECTIONS:
        return None
    model, colon, method = unquote(segments[-1]).rpartition(":")
    if not colon or not model or not method:
        return None
    return model, method


def _gemini(method: str, path: str) -> bool:
    """``POST .../models/{model}:generateContent`` and ``:streamGenerateContent``;
    not ``:countTokens`` (see :func:`token_count`), ``:embedContent`` or the rest."""
    found = gemini_method(path)
    return method.upper() == "POST" and found is not None and found[1] in _GEMINI_CALLS


_HANDLES: dict[Provider, Callable[[str, str], bool]] = {
    "anthropic": _anthropic,
    "openai_chat": _openai_chat,
    "openai_responses": _openai_responses,
    "gemini": _gemini,
}


def token_count(method: str, path: str) -> Provider | None:
    """The provider whose token-counting endpoint ``path`` is, if a fake answers it.

    Gemini's ``POST .../models/{model}:countTokens`` is answered from the request
    alone (pydantic-ai calls it before a request to enforce usage limits): no
    script reply is used and no model call is logged."""
    found = gemini_method(path)
    if method.upper() == "POST" and found is not None and found[1] == "countTokens":
        return "gemini"
    return None


def handles(provider: Provider, method: str, path: str) -> bool:
    """Whether ``method path`` is a model call of ``provider``."""
    return _HANDLES[provider](method, path)


def detect(method: str, path: str) -> Provider | None:
    """The provider whose model-call endpoint ``path`` is, if any."""
    for provider, check in _HANDLES.items():
        if check(method, path):
            return provider
    return None
