"""OpenAI Chat Completions (``POST …/chat/completions``), also spoken by most
OpenAI-compatible hosts.

One module per role, as in every provider folder (see :mod:`...roles`): ``request``,
``render``, ``fold``, ``reply``, ``errors``, assembled by ``codec``; what OpenAI's server
adds to both of its formats is in :mod:`..common`.
"""

from __future__ import annotations

from .codec import OpenAIChatCodec

__all__ = ["OpenAIChatCodec"]
