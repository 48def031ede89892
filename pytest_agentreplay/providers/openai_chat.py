"""``from pytest_agentreplay.providers.openai_chat import OpenAIChatCodec``: the import
path the docs have always shown, kept. The codec lives in :mod:`.openai.chat`."""

from __future__ import annotations

from .openai.chat import OpenAIChatCodec

__all__ = ["OpenAIChatCodec"]
