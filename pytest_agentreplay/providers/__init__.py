"""Provider wire codecs: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
Gemini.

``codec_for("anthropic")`` gives a provider's codec; ``detect(method, path)``
tells which provider a request path belongs to (``None`` for anything that is
not a model call, e.g. ``/v1/models`` or ``/v1/messages/count_tokens``) without
importing any codec (:mod:`.routes`): replaying a cassette needs no codec, and
codecs build the pydantic reply model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .base import Codec, ErrorResponse, Folded, IdFactory, RenderContext
from .routes import detect

if TYPE_CHECKING:  # the provider names are the model's (pydantic): replay loads neither
    from ..neutral import Provider

__all__ = [
    "Codec",
    "ErrorResponse",
    "Folded",
    "IdFactory",
    "RenderContext",
    "codec_for",
    "detect",
]

# Each codec lives in its own module, imported on first use.
_CLASSES: dict[Provider, tuple[str, str]] = {
    "anthropic": (".anthropic", "AnthropicCodec"),
    "openai_chat": (".openai_chat", "OpenAIChatCodec"),
    "openai_responses": (".openai_responses", "OpenAIResponsesCodec"),
    "gemini": (".gemini", "GeminiCodec"),
}
_CODECS: dict[Provider, Codec] = {}


def codec_for(provider: Provider) -> Codec:
    """The codec of ``provider``; raises ``KeyError`` listing the known ones."""
    codec = _CODECS.get(provider)
    if codec is None:
        try:
            module_name, class_name = _CLASSES[provider]
        except KeyError:
            known = ", ".join(_CLASSES)
            raise KeyError(f"unknown provider {provider!r}; known: {known}") from None
        module = importlib.import_module(module_name, __name__)
        codec = _CODECS[provider] = getattr(module, class_name)()
    return codec
