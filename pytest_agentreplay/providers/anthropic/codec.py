"""The Anthropic Messages codec (``POST /v1/messages``, JSON or SSE with ``stream: true``).

Its roles are the modules beside it: :mod:`.request` parses what was asked,
:mod:`.render` (with :mod:`.blocks`) renders a reply, :mod:`.fold` folds a stream back,
:mod:`.reply` reads a body back, :mod:`.error_bodies` renders the API's errors.
"""

from __future__ import annotations

from typing import ClassVar

from ...neutral import Provider
from ..base import RenderContext
from ..roles import FolderCodec, Roles
from . import compose, error_bodies, fold, render, reply, request

__all__ = ["AnthropicCodec"]


class AnthropicCodec(FolderCodec):
    """Anthropic Messages: ``POST /v1/messages``, JSON or SSE (``stream: true``)."""

    provider: ClassVar[Provider] = "anthropic"
    roles: ClassVar[Roles] = Roles(request, render, fold, reply, error_bodies, compose)
    event_error_type: ClassVar[str] = "overloaded_error"
    request_id_header: ClassVar[str] = "request-id"

    def response_headers(self, ctx: RenderContext, *, streaming: bool) -> dict[str, str]:
        """Content type, ``request-id`` and, for streams, ``cache-control: no-cache``."""
        request_id = ctx.ids.new("req_011C", 20)
        if not streaming:
            return {"content-type": self.json_content_type, "request-id": request_id}
        return {
            "content-type": self.stream_content_type,
            "request-id": request_id,
            "cache-control": "no-cache",
        }
