"""Issue 18, item 15: request bodies that vcrpy keeps as objects (aiohttp's ``json=``
dict, form fields, an upload's chunks) are recorded as the bytes the client sent and
replayed by matching them. Recording ``json=`` used to crash at teardown
(``bytes(dict)``: ``TypeError``) and write nothing; a body that cannot be turned into
bytes is refused when the request is made, naming its type (aiohttp, hooked by the
plugin itself since issue 19, records every body it sends, ``FormData`` included).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator

import aiohttp  # noqa: F401 - imported once here: in-process runs reuse it
import pytest
from vcr.request import Request

from pytest_agentreplay import Reply
from pytest_agentreplay.cassettes.formats.vcrpy import UnrecordableRequestError, vcr_request
from tests.cassettes._plugin_runs import cassette, interactions, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

URL = "https://api.anthropic.com/v1/messages"
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}


def _chunks() -> Iterator[bytes]:
    yield b'{"model": "m", '
    yield b'"messages": []}'


@pytest.mark.parametrize(
    ("body", "sent", "content_type"),
    [
        (BODY, json.dumps(BODY).encode(), "application/json"),
        ([1, 2], b"[1, 2]", "application/json"),
        (
            [("grant_type", "x"), ("scope", "a b")],
            b"grant_type=x&scope=a+b",
            "application/x-www-form-urlencoded",
        ),
        (b"raw bytes", b"raw bytes", None),
        ("text \u00e9", "text \u00e9".encode(), None),
        (io.BytesIO(b"a file"), b"a file", None),
        (_chunks(), b'{"model": "m", "messages": []}', None),
        (None, b"", None),
    ],
    ids=["json-dict", "json-list", "form-pairs", "bytes", "text", "file", "chunks", "none"],
)
def test_a_body_vcrpy_holds_becomes_the_bytes_sent(
    body: object, sent: bytes, content_type: str | None
) -> None:
    recorded = vcr_request(Request("POST", URL, body, {"x-test": "1"}))
    assert recorded.content() == sent or json.loads(recorded.content()) == json.loads(sent)
    assert recorded.headers.get("content-type") == content_type
    assert recorded.headers["x-test"] == "1"


def test_a_body_vcrpy_cannot_turn_into_bytes_is_refused_by_name() -> None:
    class FormData:
        pass

    with pytest.raises(UnrecordableRequestError, match="type FormData cannot be recorded"):
        vcr_request(Request("POST", URL, FormData(), {}))


USER_TEST = """
import asyncio, os
import aiohttp, pytest

URL = os.environ.get("AR_SERVER", "http://127.0.0.1:9") + "/v1/messages"
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}


KINDS = {
    "json": lambda: {"json": BODY},
    "bytes": lambda: {"data": b'{"model": "m", "messages": []}',
                      "headers": {"content-type": "application/json"}},
    "form": lambda: {"data": [("model", "m"), ("prompt", "form")]},
    "formdata": lambda: {"data": aiohttp.FormData({"model": "m"})},
}


async def call(kind):
    async with aiohttp.ClientSession() as session:
        async with session.post(URL, **KINDS[kind]()) as response:
            return await response.json()


@pytest.mark.agentreplay
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_aiohttp(agentreplay, kind):
    assert asyncio.run(call(kind))["content"][0]["text"] == "from aiohttp"
"""


def test_aiohttp_bodies_are_recorded_and_replayed(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    """aiohttp is hooked by the plugin itself (issue 19): every body it can send is
    recorded as sent, ``FormData`` included (vcrpy could not turn it into bytes)."""
    pytester.makepyfile(test_user=USER_TEST)
    for _ in range(4):
        server.add(Reply.text("from aiohttp"))
    recorded = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url)
    recorded.assert_outcomes(passed=4)
    [stored] = interactions(cassette(pytester, "test_aiohttp[json]"))
    assert stored["request"]["json"] == json.loads(json.dumps(BODY))
    assert stored["request"]["headers"]["content-type"] == "application/json"
    [form] = interactions(cassette(pytester, "test_aiohttp[form]"))
    assert form["request"]["body"] == "model=m&prompt=form"
    assert {"raw": "model=m&prompt=form"} in server.requests
    [formdata] = interactions(cassette(pytester, "test_aiohttp[formdata]"))
    assert formdata["request"]["body"] == "model=m"

    replayed = run(pytester)
    replayed.assert_outcomes(passed=4)
    assert len(server.requests) == 4, "the replay went live"


VCR_JSON = """\
interactions:
- request:
    body: '{"n": 1}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: https://api.example.test/items
  response:
    body:
      string: '{"error": "not found", "code": 404}'
    headers:
      Content-Length:
      - '35'
      Content-Type:
      - application/json
    status:
      code: 404
      message: Not Found
version: 1
"""

REQUESTS_TEST = """
import pytest, requests

@pytest.mark.agentreplay
def test_items():
    response = requests.post("https://api.example.test/items", json={"n": 1})
    assert response.status_code == 404
    assert response.headers["Content-Length"] == str(len(response.content))
"""


def test_a_response_replayed_through_vcrpy_announces_its_length(
    pytester: pytest.Pytester,
) -> None:
    """A cassette keeps no wire-only header, and vcrpy plays the ``content-length`` it
    stored: requests, urllib3 and botocore saw one under pytest-recording (pydantic-ai
    compares botocore's error metadata, headers included) and see one here (issue 26)."""
    pytester.makepyfile(test_user=REQUESTS_TEST)
    path = cassette(pytester, "test_items")
    path.parent.mkdir(parents=True)
    path.write_text(VCR_JSON)
    run(pytester).assert_outcomes(passed=1)
