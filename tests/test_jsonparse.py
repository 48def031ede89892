"""JSON text parsed with a bound on its nesting (issue 27: a 5,000-deep SSE event was a
``RecursionError`` in four commands)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay import jsonparse


@pytest.mark.parametrize("text", ["[" * 101 + "]" * 101, b"{" * 5000, '{"a":' * 10_000])
def test_nesting_past_the_limit_is_a_value_error_never_a_recursion_error(
    text: str | bytes,
) -> None:
    with pytest.raises(ValueError, match="JSON nests deeper than 100 levels"):
        jsonparse.loads(text)


def test_nesting_at_the_limit_parses() -> None:
    text = "[" * 100 + "]" * 100
    assert jsonparse.loads(text) == json.loads(text)


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"text": "[" * 500 + '\\"{' * 500, "list": [[1], [2]]})
    assert jsonparse.depth(text) == 3
    assert jsonparse.loads(text) == json.loads(text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=20,
)


@given(JSON)
def test_whatever_json_loads_reads_within_the_limit_parses_the_same(value: object) -> None:
    text = json.dumps(value)
    assert jsonparse.loads(text) == json.loads(text)
    assert jsonparse.loads(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": "\xff"}',  # not UTF-8
        b'{"a": "\xed\xa0\x80"}',  # a lone surrogate, as json.loads lets through
        b'{\x00"a": 1}',  # a NUL second: read as UTF-16 by json.loads
        '{"a": 1}'.encode("utf-16-le"),
        '{"a": 1}'.encode("utf-16"),  # with its BOM
        b'\xef\xbb\xbf{"a": 1}',  # UTF-8 with a BOM
        b"{",
        b"[1, 2",
        b'{"a": 1} x',
        b"{}",
    ],
)
def test_bytes_read_as_json_loads_reads_them_same_value_or_same_error(body: bytes) -> None:
    """A body of bytes is decoded as UTF-8 by jsonparse itself when json.loads would (a
    fake reads every request so): the value, or the error type and message, are the same."""
    assert _outcome(jsonparse.loads, body) == _outcome(json.loads, body)


@given(st.binary(max_size=40).map(lambda b: b"{" + b))
def test_any_bytes_opening_an_object_read_as_json_loads_reads_them(body: bytes) -> None:
    assert _outcome(jsonparse.loads, body) == _outcome(json.loads, body)


@pytest.mark.parametrize(
    "text",
    [
        ' {"a": 1}',  # whitespace first
        '{"a": 1}\n ',  # and last
        '\ufeff{"a": 1}',  # a BOM in text
        '{"a": 1}{"b": 2}',  # a second value
        '{"a": 1} x',
        "",
        " ",
        "1",
        '"x"',
        "-Infinity",
        "[1, 2",
        '{"a": [1, {"b": null}], "c": "\\u00e9"}',
    ],
)
def test_text_is_read_as_json_loads_reads_it_same_value_or_same_error(text: str) -> None:
    """One value filling the text is read by json's scanner directly; anything else as
    json.loads reads it: the value, or the error type and message, are the same."""
    assert _outcome(jsonparse.loads, text) == _outcome(json.loads, text)
    assert _outcome(jsonparse.loads, text.encode()) == _outcome(json.loads, text.encode())


@given(JSON, st.sampled_from(["", " ", "\n", "\t \r\n"]), st.sampled_from(["", " ", "\n", "x"]))
def test_a_value_with_text_around_it_reads_as_json_loads_reads_it(
    value: object, before: str, after: str
) -> None:
    text = before + json.dumps(value) + after
    assert _outcome(jsonparse.loads, text) == _outcome(json.loads, text)


def _outcome(loads: Any, body: str | bytes) -> object:
    try:
        return loads(body)
    except ValueError as exc:
        return (type(exc), str(exc))
