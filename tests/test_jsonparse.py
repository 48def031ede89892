"""JSON text parsed with a bound on its nesting (issue 27: a 5,000-deep SSE event was a
``RecursionError`` in four commands)."""

from __future__ import annotations

import json

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
