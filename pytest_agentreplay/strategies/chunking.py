"""Strategies for the ways a byte stream is cut into network chunks."""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from ..transport.chunking import Chunking
from .profile import register_profiles

__all__ = ["chunkings"]

register_profiles()


def chunkings(*, max_size: int = 16, max_sizes: int = 6) -> SearchStrategy[Chunking]:
    """Ways to cut a byte stream into network chunks, as :class:`Chunking` objects —
    chunkers for ``FakeModel(chunking=...)``, ``fake.chunker`` or the cassette
    settings' ``chunking``, and ``chunking.split(data)`` for raw bytes.

    Each cuts at a repeating pattern of up to ``max_sizes`` sizes (1 to
    ``max_size`` bytes), and may also cut at every event boundary, between the
    CR and LF of every CRLF, and after the first byte of every multi-byte UTF-8
    character (a BOM included): the places decoders get wrong. Reassembled, the
    chunks are always the original bytes.

    Shrinks toward ``Chunking()``, the whole body in one chunk, keeping only the
    cuts the failure needs.
    """
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    return st.builds(
        Chunking,
        sizes=st.lists(st.integers(1, max_size), max_size=max_sizes).map(tuple),
        events=st.booleans(),
        crlf=st.booleans(),
        utf8=st.booleans(),
    )
