"""Bodies the scrubber must open first (issue 18, items 1-2): a compressed ``body_b64``
is stored decoded and scrubbed; a multipart upload has its text parts scrubbed by name;
the backstop reads the bytes of whatever stays opaque, and refuses what it cannot."""

from __future__ import annotations

import base64
import gzip
import json

import brotli
import pytest

from pytest_agentreplay.cassettes.cassette import Cassette, Interaction, RecordedResponse
from pytest_agentreplay.redact import Finding, Scrubber, SecretLeakError
from pytest_agentreplay.redact.bodies import scrub_multipart
from pytest_agentreplay.redact.rules import Rules
from tests.redact._helpers import dump, request, response

KEY = "sk-proj-" + "Qm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA" * 2 + "7"
RULES = Rules.build(
    placeholder="REDACTED", extra_headers=(), extra_query_params=(), extra_body_keys=()
)


def _multipart(boundary: str, *parts: tuple[str, bytes, str | None]) -> bytes:
    out = b""
    for name, value, filename in parts:
        disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
        out += value + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


@pytest.mark.parametrize(
    "content_type",
    [
        "multipart/form-data; boundary=xyz",
        'multipart/form-data; boundary="xyz"',
        "Multipart/Form-Data; charset=utf-8; BOUNDARY=xyz",
    ],
)
def test_secret_named_text_parts_are_redacted_and_every_other_byte_kept(
    content_type: str,
) -> None:
    blob = bytes(range(256))
    body = _multipart(
        "xyz",
        ("api_key", b"abc123secret", None),
        ("clientSecret", b"shh-123", None),
        ("api_key", b"file content stays", "key.txt"),  # a file, not a field
        ("note", b"keep me", None),
        ("image", blob, "x.png"),
    )
    scrubbed = scrub_multipart(body, content_type, RULES)
    assert b'name="api_key"\r\n\r\nREDACTED\r\n' in scrubbed
    assert b'name="clientSecret"\r\n\r\nREDACTED\r\n' in scrubbed
    assert b"file content stays" in scrubbed and blob in scrubbed and b"keep me" in scrubbed
    assert scrubbed.endswith(b"--xyz--\r\n")
    assert scrub_multipart(scrubbed, content_type, RULES) == scrubbed  # idempotent


def test_a_json_part_is_scrubbed_by_key_and_an_unchanged_body_is_the_same_object() -> None:
    part = json.dumps({"password": "hunter2", "q": 1}).encode()
    body = _multipart("b", ("meta", part, None))
    head = b"Content-Type: application/json\r\n"
    body = body.replace(b"\r\n\r\n", b"\r\n" + head + b"\r\n", 1)
    assert b'{"password":"REDACTED","q":1}' in scrub_multipart(
        body, "multipart/form-data; boundary=b", RULES
    )
    clean = _multipart("b", ("note", b"nothing", None))
    assert scrub_multipart(clean, "multipart/form-data; boundary=b", RULES) is clean
    assert scrub_multipart(clean, "application/octet-stream", RULES) is clean


def _upload(prompt: bytes) -> Interaction:
    body = _multipart("b", ("prompt", prompt, None), ("f", b"\xff\xfe\x00binary", "a.bin"))
    side = request(headers={"content-type": "multipart/form-data; boundary=b"})
    side = side.replace(body=None, body_b64=base64.b64encode(body).decode())
    return Interaction(request=side, response=response())


def test_the_backstop_reads_a_key_in_a_binary_upload() -> None:
    scrubber = Scrubber(env={})
    cassette = Cassette(interactions=[_upload(b"use " + KEY.encode())])
    scrubbed = scrubber.scrub(cassette)
    assert scrubber.scan(dump(scrubbed)) == []  # the text holds only base64
    assert scrubber.scan_cassette(scrubbed) == [
        Finding("interactions[0].request.body_b64", "openai-key (in the decoded bytes)")
    ]
    with pytest.raises(SecretLeakError):
        scrubber.check(dump(scrubbed), cassette=scrubbed)
    clean = scrubber.scrub(Cassette(interactions=[_upload(b"hello")]))
    scrubber.check(dump(clean), cassette=clean)


def _encoded(raw: bytes, headers: dict[str, str]) -> RecordedResponse:
    """A response as an older version stored it: encoded bytes and their header."""
    return RecordedResponse(status=200, headers=headers, body_b64=base64.b64encode(raw).decode())


def test_a_compressed_body_is_stored_decoded_and_scrubbed() -> None:
    raw = brotli.compress(json.dumps({"access_token": "t0k-123456", "ok": True}).encode())
    side = _encoded(raw, {"content-type": "application/json", "content-encoding": "br"})
    compressed = request(headers={"content-type": "application/json", "content-encoding": "gzip"})
    compressed = compressed.replace(
        body_b64=base64.b64encode(gzip.compress(b'{"api_key": "k-1234567890"}')).decode()
    )
    scrubbed = Scrubber(env={}).scrub_interaction(Interaction(request=compressed, response=side))
    assert scrubbed.response.json_body == {"access_token": "REDACTED", "ok": True}
    assert scrubbed.response.headers == {"content-type": "application/json"}
    assert scrubbed.request.json_body == {"api_key": "REDACTED"}
    assert "content-encoding" not in scrubbed.request.headers


@pytest.mark.parametrize(
    ("encoding", "raw"),
    [("x-custom", b"\x00\x01\x02"), ("br", b"\x00 not brotli \xff"), ("gzip", b"\x1f\x8bcut")],
)
def test_a_body_the_backstop_cannot_decode_is_a_finding(encoding: str, raw: bytes) -> None:
    side = _encoded(raw, {"content-encoding": encoding})
    cassette = Cassette(interactions=[Interaction(request=request(), response=side)])
    [finding] = Scrubber(env={}).scan_cassette(cassette)
    assert finding.where == "interactions[0].response.body_b64"
    assert finding.kind.startswith(f"unreadable: a body encoded as {encoding!r}")
    assert finding.kind.endswith("so it cannot be scanned")
