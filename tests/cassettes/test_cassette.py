"""The cassette model: checked and normalized when built, compared by value, copied
with ``replace``, turned into file data with ``to_data`` and back with ``from_data``."""

from __future__ import annotations

import copy
import json
import pickle
import weakref
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import CassetteFormatError, CassetteValueError, from_data
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedEvent,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.errors import AgentReplayError
from tests.cli._helpers import json_interaction, stream_interaction

URL = "https://api.anthropic.com/v1/messages"


def _refused(build: Any) -> CassetteValueError:
    with pytest.raises(CassetteValueError) as info:
        build()
    return info.value


# --- what construction normalizes --------------------------------------------------------


def test_header_names_are_lower_cased_and_colliding_values_joined() -> None:
    request = RecordedRequest(method="GET", url=URL, headers={"X-A": "1", "x-a": "2", "B": "3"})
    assert request.headers == {"x-a": "1, 2", "b": "3"}


def _lowered(headers: dict[Any, Any]) -> dict[str, str] | None:
    """What a headers mapping becomes, worked out name by name (``None``: refused)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not isinstance(value, str):
            return None
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


_NAMES = st.sampled_from(["x-a", "X-A", "Accept", "123", "-", "", "é", "ÉCOLE", "x\na"])


@given(
    st.dictionaries(
        _NAMES | st.text(max_size=6) | st.integers(0, 3),
        st.text(max_size=6) | st.sampled_from([1, None, b"x"]),
        max_size=5,
    )
)
def test_header_names_are_checked_and_lower_cased_as_one_by_one(headers: dict[Any, Any]) -> None:
    """The common case (text only, lower-case names) is checked in C, a joined string at
    a time: it gives what checking each name and value gives, for names with no cased
    letter, upper-case ones, and names or values that are not text."""
    expected = _lowered(headers)
    if expected is None:
        with pytest.raises(CassetteValueError):
            RecordedRequest(method="GET", url=URL, headers=headers)
        return
    request = RecordedRequest(method="GET", url=URL, headers=headers)
    assert request.headers == expected
    assert list(request.headers) == list(expected)
    assert request.headers is not headers


def test_the_headers_given_are_copied() -> None:
    given = {"x-a": "1"}
    request = RecordedRequest(method="GET", url=URL, headers=given)
    given["x-b"] = "2"
    assert request.headers == {"x-a": "1"}


@pytest.mark.parametrize(
    ("body", "kept"),
    [
        ({"json": {"a": 1}}, {"x-k": "v"}),
        ({"body": "text"}, {"x-k": "v"}),
        ({"body_b64": "AAE="}, {"x-k": "v", "content-encoding": "gzip"}),
        ({"events": []}, {"x-k": "v"}),
    ],
)
def test_a_response_drops_the_wire_only_headers(body: dict[str, Any], kept: dict[str, str]) -> None:
    headers = {
        "Content-Length": "9",
        "transfer-encoding": "chunked",
        "Content-Encoding": "gzip",
        "X-K": "v",
    }
    assert RecordedResponse(status=200, headers=headers, **body).headers == kept


def test_times_are_kept_to_the_microsecond_and_integers_become_seconds() -> None:
    assert RecordedEvent(data="x", t=0.1234567).t == 0.123457
    event = RecordedEvent(data="x", t=2)
    assert event.t == 2.0
    assert type(event.t) is float


def test_no_comments_is_none() -> None:
    assert RecordedEvent(data="x", comments=[]).comments is None
    assert RecordedEvent(data="x", comments=("a", "b")).comments == ["a", "b"]


def test_json_and_json_body_are_the_same_keyword() -> None:
    assert RecordedRequest(method="POST", url=URL, json={"a": 1}).json_body == {"a": 1}
    assert RecordedRequest(method="POST", url=URL, json_body={"a": 1}).json_body == {"a": 1}
    with pytest.raises(TypeError, match="not both"):
        RecordedRequest(method="POST", url=URL, json={"a": 1}, json_body={"a": 1})


# --- what construction refuses ---------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "field", "problem"),
    [
        (lambda: RecordedRequest(method="", url=URL), "method", "is empty"),
        (lambda: RecordedRequest(method="GET", url=3), "url", "is an integer, expected text"),
        (
            lambda: RecordedRequest(method="GET", url=URL, headers={"a": 1}),
            "headers.a",
            "is an integer, expected text",
        ),
        (
            lambda: RecordedRequest(method="GET", url=URL, headers=[("a", "b")]),
            "headers",
            "expected a mapping",
        ),
        (
            lambda: RecordedRequest(method="GET", url=URL, json={"when": {1, 2}}),
            "json",
            "when holds a set",
        ),
        (lambda: RecordedResponse(status=99), "status", "must be from 100 to 599"),
        (lambda: RecordedResponse(status=600), "status", "must be from 100 to 599"),
        (lambda: RecordedResponse(status="200"), "status", "is text, expected an integer"),
        (lambda: RecordedResponse(status=True), "status", "is a boolean, expected an integer"),
        (lambda: RecordedResponse(status=200, end="done"), "end", "must be one of"),
        (lambda: RecordedResponse(status=200, body_b64="!!"), "body_b64", "not valid base64"),
        (lambda: RecordedResponse(status=200, events=[{"data": "x"}]), "events[0]", "a mapping"),
        (lambda: RecordedEvent(data="a\rb"), "data", "line break"),
        (lambda: RecordedEvent(data="x", event="a\nb"), "event", "line break"),
        (lambda: RecordedEvent(data="x", id="a\0b"), "id", "line break"),
        (lambda: RecordedEvent(data="x", retry=-1), "retry", "must be 0 or more"),
        (lambda: RecordedEvent(data="x", t=-0.5), "t", "must be 0 or more"),
        (lambda: RecordedEvent(data="x", t=float("nan")), "t", "finite"),
        (lambda: RecordedEvent(data="x", t="soon"), "t", "is text, expected a number"),
        (lambda: RecordedEvent(data="x", comments=["a\nb"]), "comments[0]", "one line"),
        (lambda: RecordedEvent(data="x", comments="ab"), "comments", "expected a list"),
        (
            lambda: Interaction(request=RecordedResponse(status=200), response=None),
            "request",
            "is a RecordedResponse, expected a RecordedRequest",
        ),
        (lambda: Cassette(version=2), "version", "must be 1"),
        (lambda: Cassette(interactions=[1]), "interactions[0]", "expected an Interaction"),
    ],
)
def test_a_bad_value_is_refused_naming_its_field(build: Any, field: str, problem: str) -> None:
    error = _refused(build)
    assert str(error).startswith(f"{field}: ")
    assert problem in error.problem
    assert isinstance(error, ValueError)
    assert isinstance(error, AgentReplayError)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"json": {"a": 1}, "body": "x"}, "holds json, body: a body is stored one way only"),
        ({"events": [], "body": "x"}, "holds both events and a body"),
        ({"tail": "data: x"}, "holds a tail without events"),
    ],
)
def test_a_response_holds_one_body_at_most(fields: dict[str, Any], problem: str) -> None:
    error = _refused(lambda: RecordedResponse(status=200, **fields))
    assert error.loc == ()
    assert problem in str(error)


def test_an_error_never_quotes_the_value() -> None:
    secret = "sk-ant-api03-" + "x" * 40
    for build in (
        lambda: RecordedRequest(method="GET", url=URL, headers={"x": secret.encode()}),
        lambda: RecordedResponse(status=secret),
        lambda: RecordedEvent(data=secret + "\r"),
    ):
        assert secret not in str(_refused(build))


# --- behaving as a value ---------------------------------------------------------------


def test_equality_is_by_value_and_objects_are_not_hashable() -> None:
    assert stream_interaction() == stream_interaction()
    assert stream_interaction() != json_interaction()
    assert RecordedEvent(data="x") != "x"
    with pytest.raises(TypeError):
        hash(RecordedEvent(data="x"))


def test_objects_are_mutable() -> None:
    interaction = json_interaction()
    interaction.request.headers["x-step"] = "1"
    interaction.response.status = 201
    assert interaction.request.headers["x-step"] == "1"
    assert interaction.response.status == 201


def test_replace_is_a_checked_copy() -> None:
    response = RecordedResponse(status=200, json={"a": 1})
    changed = response.replace(status=201, headers={"X-A": "1"})
    assert (changed.status, changed.headers, changed.json_body) == (201, {"x-a": "1"}, {"a": 1})
    assert response.status == 200
    with pytest.raises(CassetteValueError, match="status"):
        response.replace(status=700)
    with pytest.raises(CassetteValueError, match="json"):
        response.replace(json_body={"when": {1}})
    with pytest.raises(TypeError, match="has no field 'json'"):
        response.replace(json={"a": 2})


def test_copies_pickles_and_weak_references() -> None:
    interaction = stream_interaction()
    assert copy.deepcopy(interaction) == interaction
    assert copy.deepcopy(interaction).response.events is not interaction.response.events
    assert pickle.loads(pickle.dumps(interaction)) == interaction
    assert weakref.ref(interaction)() is interaction


def test_the_repr_shows_the_fields_that_are_set() -> None:
    assert repr(RecordedEvent(data="xy", t=0.5)) == "RecordedEvent(data=<2 chars>, t=0.5)"
    assert repr(RecordedResponse(status=204)) == "RecordedResponse(status=204)"
    request = RecordedRequest(method="GET", url="https://api.example.com/v1/models")
    assert repr(request) == "RecordedRequest(method='GET', url='https://api.example.com/v1/models')"


def test_the_repr_of_a_request_before_scrubbing_shows_no_credential() -> None:
    """A live request in cassette form holds its credentials until it is scrubbed, and
    a repr reaches logs and tracebacks pytest's masked reports never see: header
    values, the URL's userinfo and query, bodies and event data are shown by size."""
    secrets = ["sk-ant-api03-" + "a" * 40, "AIza" + "b" * 35, "hunter2", "sk-proj-" + "c" * 30]
    interaction = Interaction(
        request=RecordedRequest(
            method="POST",
            url=f"https://user:{secrets[2]}@generativelanguage.googleapis.com/v1?key={secrets[1]}",
            headers={"authorization": f"Bearer {secrets[0]}", "content-type": "application/json"},
            json={"api_key": secrets[3]},
        ),
        response=RecordedResponse(
            status=200,
            headers={"set-cookie": f"session={secrets[2]}"},
            events=[RecordedEvent(data=json.dumps({"text": secrets[0]}), event="delta")],
            tail=secrets[3],
        ),
    )
    shown = repr(Cassette(interactions=[interaction]))
    assert not [secret for secret in secrets if secret in shown], shown
    assert "url='https://generativelanguage.googleapis.com/v1?…'" in shown
    assert "headers={'authorization': …, 'content-type': …}" in shown
    assert "json_body=<" in shown and "events=<1 event>" in shown and "tail=<" in shown


# --- file data -------------------------------------------------------------------------


def test_to_data_is_what_a_file_holds_and_from_data_reads_it_back() -> None:
    cassette = Cassette(interactions=[stream_interaction(), json_interaction()])
    data = cassette.to_data()
    assert list(data) == ["interactions", "version"]
    request = data["interactions"][1]["request"]
    assert list(request) == ["method", "url", "headers", "json"]
    event = data["interactions"][0]["response"]["events"][0]
    assert None not in event.values()
    assert from_data(data) == cassette
    assert RecordedRequest(**request) == cassette.interactions[1].request


def test_from_data_names_the_path_of_a_bad_value() -> None:
    data = Cassette(interactions=[stream_interaction()]).to_data()
    data["interactions"][0]["response"]["events"][1]["t"] = "soon"
    with pytest.raises(CassetteFormatError) as info:
        from_data(data, path="data.yaml")
    assert info.value.field == "interactions[0].response.events[1].t"
    assert info.value.line is None
    assert "expected a number" in info.value.problem


@pytest.mark.parametrize(
    ("data", "field", "problem"),
    [
        ({"interactions": [{"request": {"url": URL}}]}, "interactions[0].response", "missing"),
        (
            {"interactions": [{"request": {"url": URL}, "response": {"status": 200}}]},
            "interactions[0].request.method",
            "missing",
        ),
        ({"interactions": [], "extra": 1}, "extra", "unknown key"),
        ({"interactions": {}}, "interactions", "is a mapping, expected a list"),
        ({"interactions": [1]}, "interactions[0]", "is an integer, expected a mapping"),
    ],
)
def test_from_data_refuses_missing_and_unknown_keys(
    data: dict[str, Any], field: str, problem: str
) -> None:
    with pytest.raises(CassetteFormatError) as info:
        from_data(data)
    assert info.value.field == field
    assert problem in info.value.problem


def test_the_repr_of_a_call_shows_its_url_without_the_query() -> None:
    from pytest_agentreplay.cassettes.calls import ReplayedCall

    key = "AIza" + "d" * 35
    call = ReplayedCall(
        index=0,
        method="POST",
        url=f"https://g.example/v1?key={key}",
        source="live",
        interaction=None,
    )
    assert key not in repr(call)
    assert "POST https://g.example/v1?…" in repr(call) and "source='live'" in repr(call)
