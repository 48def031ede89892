"""The one YAML node locator (``cassettes/yaml/nodes.py``): field path to line and
column, and offset to field path, for loading errors, ``lint`` and the secret scan."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay.cassettes.yaml.nodes import NodeLocator

TEXT = """\
interactions:
- request:
    method: POST
    headers:
      Content-Type: application/json
  response:
    status: 200
version: 1
"""


def _line_of(needle: str, text: str = TEXT) -> int:
    return text[: text.index(needle)].count("\n") + 1


def test_a_field_path_gives_the_line_and_column_of_its_key() -> None:
    locator = NodeLocator(TEXT)
    assert locator.position(("interactions", 0, "response", "status")) == (
        _line_of("status"),
        5,
    )
    assert locator.position(("version",)) == (_line_of("version"), 1)


def test_header_names_match_in_any_case_only_when_asked() -> None:
    locator = NodeLocator(TEXT)
    loc = ("interactions", 0, "request", "headers", "content-type")
    headers = (_line_of("headers"), 5)
    assert locator.position(loc) == headers  # exact keys: stops at the deepest match
    assert locator.position(loc, any_case=True) == (_line_of("Content-Type"), 7)


def test_a_path_that_leaves_the_document_gives_the_deepest_node_found() -> None:
    locator = NodeLocator(TEXT)
    assert locator.position(("interactions", 7, "request")) == (_line_of("interactions"), 1)
    assert locator.position(("interactions", 0, "request", "nope")) == (
        _line_of("request"),
        3,
    )


def test_an_offset_gives_the_field_path_of_the_scalar_holding_it() -> None:
    locator = NodeLocator(TEXT)
    assert locator.field_at(TEXT.index("application")) == (
        "interactions[0].request.headers.Content-Type"
    )
    assert locator.field_at(TEXT.index("Content-Type")) == (
        "interactions[0].request.headers (in a mapping key)"
    )
    assert locator.field_at(TEXT.index("200") + 1) == "interactions[0].response.status"
    assert locator.field_at(len(TEXT) - 1) is None  # the final line break


def test_json_text_is_located_too() -> None:
    text = json.dumps([{"request": {"url": "https://x"}}], indent=2)
    locator = NodeLocator(text)
    assert locator.position((0, "request", "url")) == (_line_of('"url"', text), 7)
    assert locator.field_at(text.index("https")) == "[0].request.url"


@pytest.mark.parametrize("text", ["a: [1, 2", "a: 1\n- b", "", "\t"])
def test_text_that_is_not_one_yaml_document_locates_nothing(text: str) -> None:
    locator = NodeLocator(text)
    assert locator.position(("a",)) is None
    assert locator.field_at(0) is None


def test_aliases_are_followed_once_and_never_expanded() -> None:
    text = "a: &x [1, 2]\nb: *x\nc: *x\n"
    locator = NodeLocator(text)
    assert locator.position(("b", 1)) == (1, text.index("2") + 1)  # where it is written
    assert locator.field_at(text.index("2")) == "a[1]"
