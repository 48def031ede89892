"""The backstop on the cassette itself: what a scan of its text cannot see.

The text scan (:mod:`.scan`) reads what a file holds, as it holds it. Two things a
reader of the file gets are not there as text (issue 18):

- the bytes of a ``body_b64`` (a binary upload with text parts, a body kept
  compressed): decoded here (:func:`.bodies.opaque_text`) and scanned; one the plugin
  cannot decode is a finding itself, for an unread body must not be written;
- a stream's text as the client assembles it from the deltas (:mod:`.assembled`): a
  key echoed a few characters per event.

Each finding names the field (``interactions[2].response.body_b64``,
``interactions[0].response.events[14]``) and the kind, never the value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..cassettes.cassette import Cassette, RecordedRequest, RecordedResponse
from .assembled import split_hits
from .bodies import opaque_text
from .errors import UnreadableBodyError
from .scan import Hit

__all__ = ["deep_findings"]

Find = Callable[[str], list[Hit]]


def deep_findings(cassette: Cassette, find: Find) -> Iterator[tuple[str, str]]:
    """``(where, kind)`` for each secret in the opaque bodies and assembled streams of
    ``cassette``, in order."""
    for n, interaction in enumerate(cassette.interactions):
        for name in ("request", "response"):
            side = getattr(interaction, name)
            yield from _opaque(f"interactions[{n}].{name}", side, find)
        events = interaction.response.events
        if events is not None and len(events) > 1:
            for hit in split_hits(events, find):
                where = f"interactions[{n}].response.events[{hit.first}]"
                kind = (
                    f"{hit.kind} (split across events {hit.first}-{hit.last}, as a client "
                    f"assembles their {hit.key!r} values)"
                )
                yield where, kind


def _opaque(
    where: str, side: RecordedRequest | RecordedResponse, find: Find
) -> Iterator[tuple[str, str]]:
    try:
        text = opaque_text(side)
    except UnreadableBodyError as exc:
        yield f"{where}.body_b64", f"unreadable: {exc.reason}"
        return
    if text is not None:
        for kind in dict.fromkeys(hit.kind for hit in find(text)):
            yield f"{where}.body_b64", f"{kind} (in the decoded bytes)"
