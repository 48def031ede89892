"""The request-parsing fast paths (issue 9) decide exactly as the general paths do.

Every replayed request is turned into its cassette form to be matched, so
``parse_json`` skips the writer's storability check when the text shows it cannot
fail, and ``join_headers`` skips its general case for plain text values. Both are
checked here against the definitions they shortcut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes.fields import join_headers
from pytest_agentreplay.cassettes.from_wire import (
    _finite,
    _NotJSONError,
    _reject_constant,
    _unique,
    parse_json,
)
from pytest_agentreplay.cassettes.yaml.emit import dump_json
from pytest_agentreplay.cassettes.yaml.errors import UnstorableError
from pytest_agentreplay.cassettes.yaml.scalars import MAX_DEPTH


def _reference_parse(raw: bytes | str) -> Any:
    """``parse_json`` as first written: always ask the writer."""
    try:
        value = json.loads(
            raw, object_pairs_hook=_unique, parse_constant=_reject_constant, parse_float=_finite
        )
        if not isinstance(value, (dict, list)):
            return None
        dump_json(value)
    except (_NotJSONError, ValueError, RecursionError, UnstorableError):
        return None
    return value


_TEXT = st.text(st.characters(), max_size=8) | st.sampled_from(
    ["\ud800", "a\udfffb", "x" * 95, "é" * 60, "\U0001f600" * 30, "\x00", 'q"uote', "b\\s"]
)
_KEYS = _TEXT | st.sampled_from(["k" * 91, "\x01" * 92, "é" * 91, "\U0001f600" * 91])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@given(_JSON, st.booleans(), st.booleans(), st.booleans())
@example({"k" * 91: 1}, False, False, False)
@example({"\x01" * 90: 1}, True, False, False)
@example([[[[]]]], False, False, True)
def test_parse_json_decides_as_the_writer(
    value: Any, ascii_only: bool, as_text: bool, indent: bool
) -> None:
    try:
        text = json.dumps(value, ensure_ascii=ascii_only, indent=1 if indent else None)
    except ValueError:
        return
    raw: bytes | str = text
    if not as_text:
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate with ensure_ascii=False
            raw = text.encode("utf-8", "surrogatepass")
    assert parse_json(raw) == _reference_parse(raw)


def test_parse_json_nesting_at_the_writers_limit() -> None:
    for depth in range(MAX_DEPTH - 5, MAX_DEPTH + 5):
        for raw in (_nested(depth), _nested(depth).encode()):
            assert parse_json(raw) == _reference_parse(raw), depth


def test_parse_json_many_brackets_but_shallow() -> None:
    raw = json.dumps({"messages": [{"role": "user", "content": [{"t": i}]} for i in range(80)]})
    assert parse_json(raw) == _reference_parse(raw) == json.loads(raw)


def test_parse_json_utf16_and_escaped_surrogates_ask_the_writer() -> None:
    for raw in (b'{"a": "\\ud800"}', '{"a": "é"}'.encode("utf-16"), b'{"a": "\\\\u"}'):
        assert parse_json(raw) == _reference_parse(raw)


def _reference_join(raw: Any) -> dict[str, str]:
    """``join_headers`` as first written."""
    items = raw.items() if isinstance(raw, dict) else raw
    out: dict[str, list[str]] = {}
    for name, value in items:
        values = value if isinstance(value, (list, tuple)) else [value]
        out.setdefault(str(name).lower(), []).extend("" if v is None else str(v) for v in values)
    single = {"authorization", "content-length", "content-type", "date", "host"}
    single |= {"location", "retry-after", "user-agent"}
    return {n: v[0] if n in single and v else ", ".join(v) for n, v in out.items()}


_NAMES = st.sampled_from(["Content-Type", "content-type", "X-A", "x-a", "Host", "date", "B"])
_VALUES = (
    st.text(max_size=4)
    | st.none()
    | st.integers()
    | st.lists(st.none() | st.text(max_size=3) | st.integers(), max_size=3)
    | st.tuples(st.text(max_size=3))
)


@given(st.lists(st.tuples(_NAMES, _VALUES), max_size=6), st.booleans())
def test_join_headers_joins_as_before(pairs: list[tuple[str, Any]], as_mapping: bool) -> None:
    raw: Any = dict(pairs) if as_mapping else pairs
    assert join_headers(raw) == _reference_join(raw)


# -- writing a stored JSON body (issue 29: the C encoder called straight away) ----------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and the infinities included: json.dumps writes them
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES.filter(lambda value: value is not None))  # None: no body stored
def test_a_stored_json_body_is_written_as_json_dumps_writes_it(value):
    from pytest_agentreplay.cassettes.fields import body_bytes

    expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    assert body_bytes(value, None, None) == expected


def test_a_body_holding_itself_is_refused_as_a_circular_reference():
    from pytest_agentreplay.cassettes.fields import body_bytes

    loop: list[Any] = [{"a": 1}]
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        body_bytes(loop, None, None)
    assert body_bytes([{"a": 1}], None, None) == b'[{"a":1}]'  # nothing left behind
