"""Which format a cassette file is in, told cheaply from its text or its parsed data,
and the home of that format.

Each foreign format has one home that knows it (:mod:`.vcrpy`, :mod:`.http_snapshot`,
:mod:`.raw_sse`): this module only asks each one, in order, whether a text is its own
(``sniff``), and hands a caller the home of a file's format (:func:`foreign_file`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, Protocol

from . import http_snapshot, raw_sse, vcrpy
from .shape import Loc, Reshaped

__all__ = ["ForeignFile", "Format", "detect_data", "detect_text", "foreign_file"]

Format = Literal["agentreplay", "vcrpy", "http-snapshot", "raw-sse"]


class ForeignFile(Protocol):
    """What the home of a foreign format with HTTP metadata tells about a file as it
    is written (``agentreplay lint`` and ``convert``), beside reading it."""

    def source_loc(self, index: int, *rest: str | int) -> Loc:
        """Where ``interactions[index].<rest>`` (our layout) is in such a file."""
        ...

    def stored_responses(self, document: Any) -> Iterator[tuple[int, Mapping[str, Any]]]:
        """The stored responses of a parsed document, by interaction index."""
        ...

    def sent_body(self, response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
        """The bytes the format's tool replays for a stored response, and whether they
        are the stored body itself."""
        ...

    def reshaped(self, document: Any) -> Reshaped:
        """What reading the file changes that its user may miss."""
        ...


_FOREIGN_FILES: dict[str, ForeignFile] = {"vcrpy": vcrpy, "http-snapshot": http_snapshot}


def detect_text(text: str) -> Format:
    """Tell the format from the text alone (cheap; a BOM and leading blank lines ignored)."""
    head = text.lstrip("\ufeff \t\r\n")
    if raw_sse.sniff(head):
        return "raw-sse"
    if http_snapshot.sniff(head):
        return "http-snapshot"
    return "vcrpy" if vcrpy.sniff(head, text) else "agentreplay"


def detect_data(data: Any) -> Format:
    """``vcrpy`` when vcrpy's home claims the parsed data, else ``agentreplay``."""
    return "vcrpy" if vcrpy.sniff_data(data) else "agentreplay"


def foreign_file(fmt: str) -> ForeignFile | None:
    """The home of a foreign format with HTTP metadata (``None``: ours, or a bare
    event stream, which has none)."""
    return _FOREIGN_FILES.get(fmt)
