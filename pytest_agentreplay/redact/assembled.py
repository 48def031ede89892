"""A stream's text as the client assembles it, for the backstop.

A provider can echo a secret a few characters per delta (issue 18: a key from an
environment variable, split over twenty ``content_block_delta`` events). Each event
alone holds no key shape, so the scan of the cassette text passes it. A client,
though, concatenates the deltas: ``delta.text`` for Anthropic, ``choices[0].delta.
content`` or a tool call's ``arguments`` for OpenAI Chat, ``delta`` for Responses,
and so on for any provider. :func:`pieces` rebuilds, provider-agnostically, the text
each JSON key takes across a stream's events, in order, and :func:`split_hits` reports
the secrets in it that span two or more events (one inside a single event is the text
scan's to find).

It must stay cheap on a 50,000-event stream, so no event is parsed: one regular
expression reads every ``"key": "string"`` pair of the stream's data in one pass (in
C), and only keys whose values differ are joined and scanned. Values are kept as
their JSON text (escapes included), the form the key shapes already handle.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..cassettes.model import RecordedEvent
from .scan import Hit

__all__ = ["SplitHit", "pieces", "split_hits"]

# Unrolled and possessive: an alternation per character was ten times slower.
_STRING = r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"'
_KEY = re.compile(r'"([^"\\]{1,128}+)"\s*+:\s*+"')
_PLAIN = "data"  # the key of events whose data is not JSON: the data itself is the text


@dataclass(frozen=True)
class SplitHit:
    """A secret the client would assemble from events ``first`` to ``last`` of a stream,
    under JSON key ``key`` (``data`` for plain-text events)."""

    first: int
    last: int
    key: str
    kind: str


def pieces(events: Sequence[RecordedEvent]) -> dict[str, list[str]]:
    """Each JSON key's string values across the events, in order (the data of events
    that are not JSON under ``data``); keys with one value, or one value repeated
    (``"type": "content_block_delta"``), are left out: nothing can be split there."""
    joined = _joined(events)
    grouped: dict[str, list[str]] = {}
    for key in set(_KEY.findall(joined)):
        values = _pattern(key).findall(joined)
        if len(values) > 1 and values.count(values[0]) != len(values):
            grouped[key] = values
    plain = [e.data for e in events if e.data[:1] not in ("{", "[")]
    if len(plain) > 1:
        grouped[_PLAIN] = plain
    return grouped


def _pattern(key: str) -> re.Pattern[str]:
    return re.compile('"' + re.escape(key) + r'"\s*+:\s*+' + _STRING)


def _joined(events: Sequence[RecordedEvent]) -> str:
    return "\n".join(event.data for event in events)


def split_hits(
    events: Sequence[RecordedEvent], find: Callable[[str], list[Hit]]
) -> Iterator[SplitHit]:
    """The secrets ``find`` sees in each key's assembled text that span events."""
    for key, values in pieces(events).items():
        hits = find("".join(values))
        if not hits:
            continue
        ends = list(itertools.accumulate(map(len, values)))
        owners = _owners(key, events)
        for hit in hits:
            first = bisect.bisect_right(ends, hit.start)
            last = bisect.bisect_left(ends, hit.end)
            if first != last:
                yield SplitHit(owners[first], owners[last], key, hit.kind)


def _owners(key: str, events: Sequence[RecordedEvent]) -> list[int]:
    """The index of the event each value of ``key`` came from (only when a hit is found)."""
    if key == _PLAIN:
        return [n for n, e in enumerate(events) if e.data[:1] not in ("{", "[")]
    starts = list(itertools.accumulate((len(e.data) + 1 for e in events), initial=0))
    found = _pattern(key).finditer(_joined(events))
    return [bisect.bisect_right(starts, match.start()) - 1 for match in found]
