"""OpenAI Chat Completions (``POST …/chat/completions``), also spoken by most
OpenAI-compatible hosts.

One module per role, as in every provider folder (see :mod:`...roles`): ``request``,
``render``, ``fold``, ``reply``, ``error_bodies``, assembled by ``codec``; what OpenAI's server
adds to both of its formats is in :mod:`..common`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...._lazy import lazy_exports

if TYPE_CHECKING:
    from .codec import OpenAIChatCodec

__all__ = ["OpenAIChatCodec"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(__name__, {".codec": ("OpenAIChatCodec",)})
