"""OpenAI Chat Completions wire codec (``POST .../chat/completions``).

Speaks the format of api.openai.com and of the OpenAI-compatible hosts that
reuse it (Azure ``/openai/deployments/{d}/chat/completions``, OpenRouter
``/api/v1/chat/completions``, Groq ``/openai/v1/chat/completions``, Mistral,
DeepSeek, local servers):

* non-streaming: one ``chat.completion`` JSON object;
* streaming: ``data:``-only ``chat.completion.chunk`` events — a first chunk with
  ``delta.role`` ``"assistant"``, content / refusal deltas, tool-call deltas
  (``index``, ``id``, ``type`` and ``function.name`` first, then
  ``function.arguments`` fragments), a finish chunk with ``finish_reason``, a
  usage chunk with ``choices: []`` *only* when the request set
  ``stream_options.include_usage``, and finally ``data: [DONE]``. Chunks carry
  OpenAI's ``obfuscation`` padding unless ``stream_options.include_obfuscation``
  is false;
* errors: ``{"error": {"message", "type", "param", "code"}}`` with an
  ``x-request-id`` header; in a stream, a ``data:`` object with an ``error`` key
  (what the SDK turns into ``openai.APIError``).

Citations: the text parts' citations are the message's ``url_citation``
``annotations`` (what OpenAI's search models send), spans counted in the joined
content, streamed as one ``annotations`` delta after the content. Provider-side
tools: Chat Completions has no item for them, so a reply holding a
:class:`~....neutral.ServerToolCall` is refused (``Codec.check_renders``).

Thinking: OpenAI's Chat Completions API has no reasoning field, so
:class:`~....neutral.Thinking` parts are *not rendered* by default.
``OpenAIChatCodec(reasoning_field="reasoning_content")`` (DeepSeek) or
``"reasoning"`` (Groq, OpenRouter) renders them the way those hosts do. Folding
and :meth:`OpenAIChatCodec.to_reply` always keep reasoning that a host sent
(``reasoning_content`` / ``reasoning`` deltas, Mistral ``thinking`` parts).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from ...roles import Roles
from ..common import OpenAICodec
from . import compose, error_bodies, fold, render, reply, request
from .render import ReasoningField

__all__ = ["OpenAIChatCodec"]


class OpenAIChatCodec(OpenAICodec):
    """The OpenAI Chat Completions format (see the module docstring)."""

    provider: ClassVar[Literal["openai_chat"]] = "openai_chat"
    roles: ClassVar[Roles] = Roles(request, render, fold, reply, error_bodies, compose)

    def __init__(self, *, reasoning_field: ReasoningField | None = None) -> None:
        self.reasoning_field = reasoning_field
