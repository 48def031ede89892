"""Anthropic Messages (``POST …/v1/messages``): the codec and its error catalogue.

One module per role, as in every provider folder (see :mod:`..roles`): ``request``,
``render`` (content blocks in ``blocks``), ``fold``, ``reply``, ``error_bodies``, assembled by
``codec``. What the rest of the plugin knows about Anthropic (host, paths, a minimal
body, body noise) is its entry in :mod:`..catalog`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .codec import AnthropicCodec
    from .error_bodies import ERROR_MESSAGES, ERROR_TYPES, default_error_type

__all__ = ["ERROR_MESSAGES", "ERROR_TYPES", "AnthropicCodec", "default_error_type"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".codec": ("AnthropicCodec",),
            ".error_bodies": (
                "ERROR_MESSAGES",
                "ERROR_TYPES",
                "default_error_type",
            ),
        },
    )
