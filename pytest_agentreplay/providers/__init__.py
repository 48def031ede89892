"""Provider wire codecs: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
Gemini.

``codec_for("anthropic")`` gives a provider's codec (:mod:`.registry`); ``detect(method, path)``
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

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .base import Codec, ErrorResponse, Folded, IdFactory, RenderContext
    from .formats import unspoken
    from .registry import codec_for
    from .routes import detect, target, token_count

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

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".base": ("Codec", "ErrorResponse", "Folded", "IdFactory", "RenderContext"),
            ".formats": ("unspoken",),
            ".registry": ("codec_for",),
            ".routes": ("detect", "target", "token_count"),
        },
    )
