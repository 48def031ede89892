"""Issue 20, item 16: a multipart upload matches its recording part by part.

Clients choose a random boundary for each upload, so the bytes never repeat and an
upload recorded once never matched again (the body is compared by default).
"""

from __future__ import annotations

import httpx
import pytest
import requests
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import Cassette, Interaction, RecordedRequest
from pytest_agentreplay.cassettes.from_wire import request_from_wire, response_from_wire
from pytest_agentreplay.cassettes.match_parts import normalize_body
from pytest_agentreplay.cassettes.matching import Index
from pytest_agentreplay.cassettes.multipart import multipart_parts

pytest_plugins = ["pytester"]

URL = "https://api.example.test/v1/files"


def _httpx_upload(content: bytes = b"line 1\nline 2\n") -> RecordedRequest:
    request = httpx.Request(
        "POST", URL, files={"file": ("a.jsonl", content)}, data={"purpose": "batch"}
    )
    return request_from_wire("POST", URL, request.headers.multi_items(), request.read())


def _requests_upload(content: bytes = b"line 1\nline 2\n") -> RecordedRequest:
    prepared = requests.Request(
        "POST", URL, files={"file": ("a.jsonl", content)}, data={"purpose": "batch"}
    ).prepare()
    body = prepared.body
    assert isinstance(body, bytes)
    return request_from_wire("POST", URL, dict(prepared.headers), body)


@pytest.mark.parametrize("upload", [_httpx_upload, _requests_upload], ids=["httpx", "requests"])
def test_an_upload_with_a_fresh_boundary_matches_its_recording(upload: object) -> None:
    assert callable(upload)
    recorded, live = upload(), upload()
    assert recorded.content() != live.content()  # the boundaries differ
    index = Index([recorded])
    assert index.take(live) == 0


def test_an_upload_of_other_content_does_not_match() -> None:
    index = Index([_httpx_upload(b"one")])
    assert index.take(_httpx_upload(b"two")) is None


def test_the_parts_are_compared_in_order_with_their_headers() -> None:
    parts = normalize_body(_httpx_upload(b"\xff\x00binary"))
    assert parts["multipart"] == "multipart/form-data"
    assert [p["headers"]["content-disposition"] for p in parts["parts"]] == [
        'form-data; name="purpose"',
        'form-data; name="file"; filename="a.jsonl"',
    ]
    assert parts["parts"][1]["content"] == {"base64": "/wBiaW5hcnk="}


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"--b\r\n\r\nx\r\n--b--\r\n", "multipart/form-data"),  # no boundary parameter
        (b"--b\r\nno blank line\r\n--b--\r\n", "multipart/form-data; boundary=b"),
        (b"--b\r\n\r\ncut short", "multipart/form-data; boundary=b"),  # no closing line
        (b"plain", "text/plain"),
    ],
    ids=["no-boundary", "malformed-part", "unclosed", "not-multipart"],
)
def test_a_body_that_is_not_well_formed_multipart_is_compared_as_bytes(
    body: bytes, content_type: str
) -> None:
    assert multipart_parts(body, content_type) is None
    request = request_from_wire("POST", URL, {"content-type": content_type}, body)
    assert normalize_body(request) == body


def test_an_upload_replays_through_the_plugin(pytester: pytest.Pytester) -> None:
    recorded = Interaction(
        request=_httpx_upload(),
        response=response_from_wire(200, [("content-type", "application/json")], b'{"id":"f"}'),
    )
    path = pytester.path / "cassettes" / "test_user" / "test_upload.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(cassette_io.dumps(Cassette(interactions=[recorded])))
    pytester.makepyfile(
        test_user=f"""
        import httpx, pytest

        @pytest.mark.agentreplay
        def test_upload():
            files = {{"file": ("a.jsonl", b"line 1\\nline 2\\n")}}
            with httpx.Client() as client:
                got = client.post({URL!r}, files=files, data={{"purpose": "batch"}})
            assert got.json() == {{"id": "f"}}
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


@given(
    fields=st.dictionaries(
        st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=8),
        st.binary(max_size=64),
        min_size=1,
        max_size=4,
    )
)
def test_any_upload_matches_itself_under_another_boundary(fields: dict[str, bytes]) -> None:
    def build() -> RecordedRequest:
        files = {name: (f"{name}.bin", content) for name, content in fields.items()}
        request = httpx.Request("POST", URL, files=files)
        return request_from_wire("POST", URL, request.headers.multi_items(), request.read())

    first, second = build(), build()
    assert normalize_body(first) == normalize_body(second)
    assert len(normalize_body(first)["parts"]) == len(fields)
