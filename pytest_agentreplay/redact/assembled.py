"""A stream's text as the client assembles it, for the backstop.

A provider can echo a secret a few characters per delta (issue 18: a key from an
environment variable, split over twenty ``content_block_delta`` events). Each event
alone holds no key shape, so the scan of the cassette text passes it. A client,
though, concatenates the deltas: ``delta.text`` for Anthropic, ``choices[0].delta.
content`` or a tool call's ``arguments`` for OpenAI Chat, ``delta`` for Responses,
and so on for any provider. :func:`split_hits` rebuilds, provider-agnostically, the
text each JSON key takes across a stream's events, in order, and reports the secrets
in it that span two or more events (one inside a single event is the text scan's to
find).

It must stay cheap on a 50,000-event stream, so no event is parsed: one regular
expression reads every ``"key": "string"`` pair of an event in one pass (in C).
Values are kept as their JSON text (escapes included), the form the key shapes
already handle. It must stay small, too: each key's text is scanned a window
at a time (:data:`WINDOW` characters, the windows overlapping by :data:`OVERLAP`),
never held whole (issue 18: the whole stream's data, joined, and every key's values
cost twice the body when a 50 MB stream was recorded).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..cassettes.cassette import RecordedEvent
from .scan import Hit

__all__ = ["OVERLAP", "WINDOW", "WINDOW_VALUES", "SplitHit", "split_hits"]

WINDOW = 1 << 17
"""Characters of one key's assembled text scanned at once (or fewer, in
:data:`WINDOW_VALUES` values: a short value costs an object of 50 bytes)."""
WINDOW_VALUES = 4096
OVERLAP = 1 << 13
"""Characters each window repeats of the one before: a secret shorter than this that
straddles two windows is whole in the second."""
_BATCH = 1024  # events between two checks of whether a window is full
# Unrolled and possessive: an alternation per character was ten times slower.
_PAIR = re.compile(r'"([^"\\]{1,128}+)"\s*+:\s*+"([^"\\]*+(?:\\.[^"\\]*+)*+)"')
_PLAIN = "data"  # the key of events whose data is not JSON: the data itself is the text

Find = Callable[[str], list[Hit]]


@dataclass(frozen=True)
class SplitHit:
    """A secret the client would assemble from events ``first`` to ``last`` of a stream,
    under JSON key ``key`` (``data`` for plain-text events)."""

    first: int
    last: int
    key: str
    kind: str


class _Assembly:
    """One key's values across a stream, scanned a window at a time. Hits are kept
    back until the key's values differ: a key with one value repeated
    (``"type": "content_block_delta"``) assembles nothing a client reads."""

    def __init__(self, key: str, find: Find) -> None:
        self.key, self.find = key, find
        self.values: list[str] = []  # appended to by split_hits directly: it is hot
        self.owners: list[int] = []  # the event each value came from
        self.differs = False
        self.hits: dict[tuple[int, str], SplitHit] = {}  # by first event and kind

    def settle(self) -> None:
        """After a batch of events: note whether the values differ yet, and scan the
        window once it is full."""
        values = self.values
        if not self.differs and values and values.count(values[0]) != len(values):
            self.differs = True
        if len(values) >= WINDOW_VALUES or sum(map(len, values)) >= WINDOW:
            self.scan()
            self._keep_overlap()

    def scan(self) -> None:
        if len(self.values) < 2:
            return
        found = self.find("".join(self.values))
        if not found:
            return
        ends = list(itertools.accumulate(map(len, self.values)))
        for hit in found:
            first = bisect.bisect_right(ends, hit.start)
            last = bisect.bisect_left(ends, hit.end)
            if first != last:
                self._keep(SplitHit(self.owners[first], self.owners[last], self.key, hit.kind))

    def _keep(self, split: SplitHit) -> None:
        """One hit per first event and kind, the longest: a window that ends inside a
        key can see its head as a key already, and the next window the whole key."""
        place = (split.first, split.kind)
        known = self.hits.get(place)
        if known is None or known.last < split.last:
            self.hits[place] = split

    def _keep_overlap(self) -> None:
        """Drop the values before the last :data:`OVERLAP` characters (whole values:
        their owners stay known), keeping at most half a window of them: one-character
        deltas would otherwise keep a whole window, and every value added after it
        would scan it again."""
        kept, size, least = len(self.values), 0, len(self.values) - WINDOW_VALUES // 2
        while kept > max(least, 1) and size < OVERLAP:
            kept -= 1
            size += len(self.values[kept])
        self.values, self.owners = self.values[kept:], self.owners[kept:]


def split_hits(events: Sequence[RecordedEvent], find: Find) -> Iterator[SplitHit]:
    """The secrets ``find`` sees in each key's assembled text that span events, by key
    in order of first appearance, then by position."""
    keys: dict[str | None, _Assembly] = {}  # None: plain data, kept apart from a "data" key
    for n, event in enumerate(events):
        data = event.data
        pairs: list[tuple[str | None, str]] = _PAIR.findall(data)
        if data[:1] not in ("{", "["):
            pairs.append((None, data))
        for key, value in pairs:
            assembly = keys.get(key)
            if assembly is None:
                assembly = keys[key] = _Assembly(_PLAIN if key is None else key, find)
            assembly.values.append(value)
            assembly.owners.append(n)
        if n % _BATCH == _BATCH - 1:
            for each in keys.values():
                each.settle()
    for each in keys.values():
        each.settle()
        each.scan()
        if each.differs:
            yield from each.hits.values()
