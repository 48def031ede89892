"""Hypothesis strategies for whole cassettes, biased towards YAML's traps.

Strings mix arbitrary unicode (no lone surrogates: UTF-8 cannot carry them) with
values that YAML reads as something else when written naively: ``yes``, ``null``,
``1e3``, ``0o7``, dates, ``:`` / ``#`` / quotes, line breaks of every kind (CR,
NEL, U+2028), NUL, a BOM, leading and trailing spaces, indicators.
"""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import strategies as st

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)

TRAPS = [
    "yes", "no", "Yes", "ON", "off", "y", "n", "true", "False", "null", "Null", "~", "",
    "1e3", "1E3", "0o17", "0x1F", "1_000", "1:20", ".5", "-1", "+1", "1.0", ".inf", ".NaN",
    "2025-01-01", "2001-12-14t21:59:43.10-05:00", "<<", "=", "'", '"', "''", "#", "# x", "a #b",
    "a: b", "a:", ":a", "- x", "-", "--- x", "---", "...", "? x", "|", ">", "&a", "*a",
    "!tag", "!!python/object:os.system", "%YAML", "@x", "`x`", "{a: 1}", "[1, 2]", ",",
    "\r", "\r\n", "a\rb", "\x00", "\x07", "\x1b", "\x7f", "\x85", "\xa0", "\u2028", "\u2029",
    "\ufeff", "\ufffe", " lead", "trail ", "  ", "a\n", "\n", "\n\n", "a\n\nb\n\n", "\na",
    " a\nb", "a \nb", "a\n b\n", "\t", "a\tb\n", "é", "日本", "😀", "a\U0001F600\nb",
    "\\", "\\n", "tab\there", "data: {\"x\": 1}\n\n",
]  # fmt: skip

_CHARS = st.characters(blacklist_categories=("Cs",))
text = st.one_of(st.sampled_from(TRAPS), st.text(_CHARS, max_size=20), st.text(max_size=8))
line = text.map(lambda s: s.replace("\r", "").replace("\n", ""))
non_empty = text.filter(bool)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    text,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
json_bodies = st.one_of(
    st.dictionaries(text, json_values, min_size=1, max_size=5),
    st.lists(json_values, min_size=1, max_size=5),
)


def _body() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        st.just({}),
        json_bodies.map(lambda v: {"json": v}),
        text.map(lambda v: {"body": v}),
        st.binary(max_size=30).map(lambda b: {"body_b64": base64.b64encode(b).decode()}),
    )


events = st.builds(
    RecordedEvent,
    data=text.map(lambda s: s.replace("\r", "")),
    event=st.none() | line,
    id=st.none() | line.map(lambda s: s.replace("\x00", "")),
    retry=st.none() | st.integers(0, 10**6),
    comments=st.none() | st.lists(line, max_size=2),
    t=st.none() | st.floats(0, 1e6, allow_nan=False),
)


@st.composite
def requests(draw: st.DrawFn) -> RecordedRequest:
    return RecordedRequest(
        method=draw(non_empty),
        url=draw(non_empty),
        headers=draw(st.dictionaries(text, text, max_size=3)),
        **draw(_body()),
    )


@st.composite
def responses(draw: st.DrawFn) -> RecordedResponse:
    fields: dict[str, Any] = {
        "status": draw(st.integers(100, 599)),
        "headers": draw(st.dictionaries(text, text, max_size=3)),
        "end": draw(st.sampled_from(["complete", "cut", "timeout", "cancelled", "incomplete"])),
        "truncated": draw(st.none() | text),
    }
    if draw(st.booleans()):
        fields["events"] = draw(st.lists(events, max_size=4))
        fields["tail"] = draw(st.none() | text)
    else:
        fields.update(draw(_body()))
    return RecordedResponse(**fields)


cassettes = st.builds(
    Cassette,
    interactions=st.lists(
        st.builds(Interaction, request=requests(), response=responses()), max_size=3
    ),
)
