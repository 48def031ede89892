"""Issue 20, item 16: vcrpy's filters on this plugin's model, with vcrpy's semantics
(:mod:`pytest_agentreplay.cassettes.formats.vcrpy.filters`,
:mod:`pytest_agentreplay.harness.vcrpy.config`).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vcr.record_mode import RecordMode

from pytest_agentreplay.cassettes.cassette import Interaction
from pytest_agentreplay.cassettes.formats.vcrpy import VcrFilterError, VcrFilters
from pytest_agentreplay.cassettes.from_wire import request_from_wire, response_from_wire
from pytest_agentreplay.harness.vcrpy import record_mode_value, split

URL = "https://api.example.test/v1/items?key=k1&page=2"
NAMES = ["x-tenant", "x-team", "x-trace", "accept", "x-region"]


def _request(headers: dict[str, str], body: Any = None, url: str = URL) -> Any:
    raw = b"" if body is None else json.dumps(body).encode()
    if body is not None:
        headers = {**headers, "content-type": "application/json"}
    return request_from_wire("POST", url, headers, raw)


@given(
    st.dictionaries(
        st.sampled_from(NAMES), st.text("abcXYZ019-_", min_size=1, max_size=12), min_size=1
    ),
    st.data(),
)
def test_filter_headers_removes_or_replaces_exactly_the_named_headers(
    headers: dict[str, str], data: st.DataObject
) -> None:
    removed = data.draw(st.sets(st.sampled_from(sorted(headers))))
    replaced = data.draw(st.sets(st.sampled_from(sorted(headers))).map(lambda s: s - removed))
    spec = [n.upper() for n in removed] + [(n.title(), "DUMMY") for n in replaced]
    filtered = VcrFilters({"filter_headers": spec}).request(_request(headers))
    assert filtered is not None
    for name, value in headers.items():
        if name in removed:
            assert name not in filtered.headers
        elif name in replaced:
            assert filtered.headers[name] == "DUMMY"
        else:
            assert filtered.headers[name] == value


def test_a_replacement_function_gets_vcrpys_arguments() -> None:
    seen: list[tuple[str, str, str]] = []

    def replace(key: str, value: str, request: Any) -> str | None:
        seen.append((key, value, request.host))
        return None if value == "drop" else value[:2] + "***"

    spec = [("x-tenant", replace), ("x-team", replace)]
    req = _request({"x-tenant": "abcdef", "x-team": "drop"})
    filtered = VcrFilters({"filter_headers": spec}).request(req)
    assert filtered is not None
    assert filtered.headers["x-tenant"] == "ab***"
    assert "x-team" not in filtered.headers
    assert sorted(seen) == [
        ("x-team", "drop", "api.example.test"),
        ("x-tenant", "abcdef", "api.example.test"),
    ]


def test_query_and_body_parameters() -> None:
    body = {"client_secret": "s1", "user": {"client_secret": "s2"}, "n": 1}
    options = {"filter_query_parameters": ["key"], "filter_post_data_parameters": ["client_secret"]}
    filtered = VcrFilters(options).request(_request({}, body))
    assert filtered is not None
    assert filtered.url == "https://api.example.test/v1/items?page=2"
    assert json.loads(filtered.content()) == {"user": {"client_secret": "s2"}, "n": 1}
    nested = VcrFilters({**options, "filter_nested_post_data_parameters": True})
    deep = nested.request(_request({}, body))
    assert deep is not None
    assert json.loads(deep.content()) == {"user": {}, "n": 1}


def test_an_unchanged_request_is_the_same_object() -> None:
    request = _request({"x-region": "eu"}, {"n": 1})
    assert VcrFilters({"filter_headers": ["x-absent"]}).request(request) is request


@pytest.mark.parametrize(
    ("options", "skipped"),
    [
        ({"ignore_hosts": ["api.example.test"]}, True),
        ({"ignore_hosts": [re.compile(r".*\.example\.test")]}, True),
        ({"ignore_hosts": ["example.test"]}, False),
        ({"ignore_localhost": True}, False),
        ({"before_record": lambda r: None}, True),
        ({"before_record_request": [lambda r: r, lambda r: None]}, True),
    ],
)
def test_what_skips_a_request(options: dict[str, Any], skipped: bool) -> None:
    assert (VcrFilters(options).request(_request({})) is None) is skipped


def test_a_response_filter_returning_something_else_is_named() -> None:
    interaction = Interaction(request=_request({}), response=response_from_wire(200, {}, b"{}"))
    with pytest.raises(VcrFilterError, match="before_record_response must return vcrpy's"):
        VcrFilters({"before_record_response": lambda r: "oops"}).interaction(interaction)
    assert VcrFilters({"before_record_response": lambda r: None}).interaction(interaction) is None


@pytest.mark.parametrize(
    ("mode", "value"),
    [(RecordMode.ONCE, "once"), (RecordMode.ANY, "new_episodes"), ("rewrite", "rewrite")],
)
def test_vcrpy_record_modes(mode: Any, value: str) -> None:
    assert record_mode_value(mode) == value


def test_ignored_host_names_are_let_through_and_ours_are_kept() -> None:
    ours, options = split({"strict": True, "ignore_hosts": ["a.test", re.compile("b")]}, "t")
    assert ours == {"strict": True}
    assert options is not None
    assert options.allow_hosts == ("a.test",)
