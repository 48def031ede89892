"""Which provider a request path belongs to, without loading any codec.

Replay asks this for every request (matching drops a provider's body noise, a
miss is reported as a model call), so it lives apart from the codecs, which
build the pydantic reply model and are imported only when a response is
rendered. Each provider's path test is its catalog entry's
(:attr:`~.catalog.ProviderFacts.handles`); each codec's ``handles`` is
:func:`handles`. The provider names (:data:`~..neutral.Provider`) are the model's;
they are imported for type checking only, so that detecting a provider loads no
pydantic.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .catalog import CATALOG, facts

if TYPE_CHECKING:
    from ..neutral import Provider

__all__ = ["detect", "handles", "target", "token_count"]


def target(url: str) -> str:
    """The path and query of ``url``: where a request was sent, as a codec reads it
    (Gemini's model and stream flag are there, not in the body)."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


@lru_cache(maxsize=512)
def token_count(method: str, path: str) -> Provider | None:
    """The provider whose token-counting endpoint ``path`` is, if a fake answers it.

    Gemini's ``POST .../models/{model}:countTokens`` is answered from the request
    alone (pydantic-ai calls it before a request to enforce usage limits): no
    script reply is used and no model call is logged."""
    for provider, entry in CATALOG.items():
        if entry.counts_tokens is not None and entry.counts_tokens(method, path):
            return provider
    return None


def handles(provider: Provider, method: str, path: str) -> bool:
    """Whether ``method path`` is a model call of ``provider``."""
    return facts(provider).handles(method, path)


@lru_cache(maxsize=512)
def detect(method: str, path: str) -> Provider | None:
    """The provider whose model-call endpoint ``path`` is, if any. Remembered per
    ``method path`` (the catalog never changes): a fake and replay ask it on every
    request, and a test's requests go to a handful of paths."""
    for provider, entry in CATALOG.items():
        if entry.handles(method, path):
            return provider
    return None
