"""Fake models that speak the providers' real wire formats.

A :class:`FakeModel` answers the model calls that real SDKs and frameworks make,
over their real HTTP clients, from a script of :class:`~..neutral.Reply` objects
(or a function). The request path picks the wire format (``/v1/messages``:
Anthropic, ``/chat/completions``: OpenAI Chat, ``/responses``: OpenAI
Responses) and the request's ``stream`` flag picks JSON or SSE, so one script
serves every provider. It can hold a call (``block``), cut the first streams
(``interrupt``), or fail every call (``fail_with``), and it records what it was
asked (``calls``, ``requests``) and how each call ended (``log``).

It refuses surprises: a call after the script ran out raises
:class:`UnexpectedModelCall` (a pytest failure no ``except Exception`` or retry
loop swallows) showing the call number and the request; replies left
unconsumed fail the test too (``check_unused=False`` opts out).

:class:`FakeModel` is in :mod:`.fake_model`; what it serves and what it saw are
:mod:`.script`'s (the script, interrupts, holds, the call log); :mod:`.serving`
scopes it to a block; :mod:`.listening` serves it on a real port
(:class:`FakeServer`); :mod:`.twin` is the fake that serves a recording.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..providers.catalog import DEFAULT_HOSTS
    from ..transport.chunking import ChunkingSpec
    from .errors import UnexpectedModelCall
    from .fake_model import FakeModel
    from .listening import FakeServer
    from .script import HTTPCall, ScriptItem

__all__ = [
    "DEFAULT_HOSTS",
    "ChunkingSpec",
    "FakeModel",
    "FakeServer",
    "HTTPCall",
    "ScriptItem",
    "UnexpectedModelCall",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            ".fake_model": ("FakeModel",),
            ".listening": ("FakeServer",),
            ".errors": ("UnexpectedModelCall",),
            ".script": ("HTTPCall", "ScriptItem"),
            "..providers.catalog": ("DEFAULT_HOSTS",),
            "..transport.chunking": ("ChunkingSpec",),
        },
    )
