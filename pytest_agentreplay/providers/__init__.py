"""Provider wire codecs: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
Gemini.

``codec_for("anthropic")`` gives a provider's codec; ``detect(method, path)``
tells which provider a request path belongs to (``None`` for anything that is
not a model call, e.g. ``/v1/models`` or ``/v1/messages/count_tokens``) without
importing any codec (:mod:`.routes`): replaying a cassette needs no codec, and
codecs build the pydantic reply model.

Each provider has a folder (``anthropic/``, ``openai/chat/``, ``openai/responses/``,
``gemini/``) with one module per role (:mod:`.roles`) and an entry in
:mod:`.catalog`, the facts the rest of the plugin reads about it. Outside this package,
code uses what this module exports, :mod:`.base` and :mod:`.catalog` only (an
import-linter contract keeps it so).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from .base import Codec, ErrorResponse, Folded, IdFactory, RenderContext
from .catalog import facts
from .formats import unspoken
from .routes import detect, target, token_count

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
    "target",
    "token_count",
    "unspoken",
]

_CODECS: dict[Provider, Codec] = {}


def codec_for(provider: Provider) -> Codec:
    """The codec of ``provider``; raises ``KeyError`` listing the known ones."""
    codec = _CODECS.get(provider)
    if codec is None:
        module_name, class_name = facts(provider).codec  # each imported on first use
        module = importlib.import_module(module_name, __name__)
        codec = _CODECS[provider] = getattr(module, class_name)()
    return codec
