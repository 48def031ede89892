"""``from pytest_agentreplay.providers.openai_responses import OpenAIResponsesCodec``:
the import path of earlier releases, kept. The codec lives in :mod:`.openai.responses`."""

from __future__ import annotations

from .openai.responses import OpenAIResponsesCodec

__all__ = ["OpenAIResponsesCodec"]
