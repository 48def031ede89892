"""Gemini (``POST …/models/{model}:generateContent`` and ``:streamGenerateContent``),
for the Gemini API and Vertex AI.

One module per role, as in every provider folder (see :mod:`..roles`): ``request``,
``render``, ``fold``, ``reply``, ``errors`` (the parts requests and answers share in
``parts``), assembled by ``codec``.
"""

from __future__ import annotations

from .codec import GeminiCodec

__all__ = ["GeminiCodec"]
