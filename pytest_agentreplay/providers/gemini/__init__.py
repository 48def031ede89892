"""Gemini (``POST …/models/{model}:generateContent`` and ``:streamGenerateContent``),
for the Gemini API and Vertex AI.

One module per role, as in every provider folder (see :mod:`..roles`): ``request``,
``render``, ``fold``, ``reply``, ``error_bodies`` (the parts requests and answers share in
``parts``), assembled by ``codec``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..._lazy import lazy_exports

if TYPE_CHECKING:
    from .codec import GeminiCodec

__all__ = ["GeminiCodec"]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(__name__, {".codec": ("GeminiCodec",)})
