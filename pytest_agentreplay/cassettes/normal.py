"""A cassette re-checked, and two cassettes compared, one event at a time.

The writer re-checks what it is about to save (a value changed since the cassette
was built) and verifies that the text it wrote loads back as the same cassette.
Both used to go through the whole cassette as plain data at once: a 50 MB recorded
stream was held again as a dict per event, then twice more as one JSON string each,
and recording it peaked at 26 times the body (issue 18). Here a stream's events are
re-checked and compared one by one; only the rest of an interaction (its request,
headers, a JSON body) goes through plain data, where a JSON body's NaN must equal
itself.
"""

from __future__ import annotations

import json
from typing import Any

from .cassette import Cassette, Interaction, RecordedEvent, RecordedResponse
from .checks import each, inside, keys
from .errors import CassetteValueError

__all__ = ["EventCheck", "normalized", "same", "same_data", "without_events"]


def normalized(cassette: Cassette) -> Cassette:
    """``cassette`` re-checked as a file's data would be (names lower-cased, wire-only
    headers dropped); raises ``CassetteValueError`` naming the path of a bad value."""
    interactions = each(list(cassette.interactions), _interaction, "interactions")
    return Cassette(interactions=interactions, version=cassette.version)


def _interaction(interaction: Interaction) -> Interaction:
    events = interaction.response.events
    data = _shell(interaction).to_data()
    if events is not None:
        checked = inside(("response",), lambda e: each(e, _event, "events"), list(events))
        data["response"]["events"] = checked  # built already: taken as they are
    return Interaction._from_data(data)


def _event(event: RecordedEvent) -> RecordedEvent:
    """``event`` itself when checking it again changes nothing (the usual case: a copy
    of each event of a big stream was held through the write), else the checked copy."""
    data = event.to_data()
    checked = RecordedEvent._from_data(keys(data, RecordedEvent._KEYS, ("data",)))
    return event if type(event) is RecordedEvent and checked.to_data() == data else checked


def _shell(interaction: Interaction) -> Interaction:
    """The interaction without its events (an empty list keeps it a stream)."""
    response = interaction.response
    if response.events is None:
        return interaction
    return interaction.replace(response=without_events(response))


def without_events(response: RecordedResponse) -> RecordedResponse:
    """``response`` with an empty event list (still a stream)."""
    values = {name: getattr(response, name) for name in RecordedResponse._FIELDS}
    return RecordedResponse(**{**values, "events": []})


def same(a: Cassette, b: Cassette) -> bool:
    """Whether ``a`` and ``b`` hold the same data (a NaN in a JSON body equal to itself)."""
    if a.version != b.version or len(a.interactions) != len(b.interactions):
        return False
    return all(_same(x, y) for x, y in zip(a.interactions, b.interactions, strict=True))


def _same(a: Interaction, b: Interaction) -> bool:
    ours, theirs = a.response.events, b.response.events
    if (ours is None) != (theirs is None):
        return False
    if ours is not None and theirs is not None:
        if len(ours) != len(theirs):
            return False
        if any(x.to_data() != y.to_data() for x, y in zip(ours, theirs, strict=True)):
            return False
    return _plain(_shell(a)) == _plain(_shell(b))


def _plain(interaction: Interaction) -> str:
    # JSON so that NaN equals itself; sorted because dumps sorts header names.
    data: Any = interaction.to_data()
    return json.dumps(data, sort_keys=True)


class EventCheck:
    """Compares a file's events, as the canonical reader reads them one by one, with
    the events of ``cassette``, in order; each is then dropped (``None`` kept)."""

    def __init__(self, cassette: Cassette) -> None:
        self._expected = (e for i in cassette.interactions for e in i.response.events or ())
        self._differs = False

    def __call__(self, data: Any) -> None:
        event = next(self._expected, None)
        if event is None or data != event.to_data():
            self._differs = True

    def passed(self) -> bool:
        """Every event read matched, and none is missing."""
        return not self._differs and next(self._expected, None) is None


def same_data(data: Any, cassette: Cassette) -> bool:
    """Whether ``data`` (a file's parsed data, its events checked by an
    :class:`EventCheck`) is ``cassette.to_data()``."""
    if type(data) is not dict or set(data) != {"interactions", "version"}:
        return False
    items = data["interactions"]
    if data["version"] != cassette.version or type(items) is not list:
        return False
    if len(items) != len(cassette.interactions):
        return False
    return all(_same_data(d, i) for d, i in zip(items, cassette.interactions, strict=True))


def _same_data(data: Any, interaction: Interaction) -> bool:
    events = interaction.response.events
    try:
        stored = data["response"].pop("events", None) if events is not None else None
    except (TypeError, AttributeError, KeyError):
        return False
    if events is not None:
        if type(stored) is not list or len(stored) != len(events):
            return False
        data["response"]["events"] = []
    try:  # built as loading builds it: the file leaves out what is empty or default
        read = Interaction._from_data(data)
    except CassetteValueError:
        return False
    return _plain(read) == _plain(_shell(interaction))
