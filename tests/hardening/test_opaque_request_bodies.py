"""Issue 18, item 2: request bodies the backstop could not read — a gzip-compressed JSON
body, and the text parts of a binary ``multipart/form-data`` upload — are scrubbed and
scanned, or the write is refused.

The requests are sent by real clients (httpx2, requests through vcrpy) to a loopback
server; the cassettes are read back with PyYAML, and the secrets are looked for in
every form a body can take on disk (plain, base64 at each alignment).
"""

from __future__ import annotations

import base64
import secrets
from pathlib import Path

import pytest
import yaml

from tests.cassettes._plugin_runs import cassette, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

USER_TEST = """
import gzip, json, os
import httpx2, pytest

URL, SECRET, PROMPT = os.environ["AR_SERVER"], os.environ["AR_SECRET"], os.environ["AR_PROMPT"]
PNG = bytes(range(256)) * 4  # binary: the upload cannot be stored as text


def post(kind):
    if kind == "gzip":
        body = {"model": "m", "api_key": SECRET, "prompt": PROMPT}
        return httpx2.post(URL + "/v1/gz", content=gzip.compress(json.dumps(body).encode()),
                           headers={"content-type": "application/json",
                                    "content-encoding": "gzip"})
    # A fixed boundary: matching a multipart body whatever its boundary is another issue.
    return httpx2.post(URL + "/v1/upload", files={"image": ("cat.png", PNG, "image/png")},
                       data={"api_key": SECRET, "prompt": PROMPT, "purpose": "vision"},
                       headers={"content-type": "multipart/form-data; boundary=b0undary"})


@pytest.mark.agentreplay
@pytest.mark.parametrize("kind", ["gzip", "multipart"])
def test_send(agentreplay, kind):
    assert post(kind).json() == {"ok": True}
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps([c.source for c in agentreplay.calls]) + "\\n")
"""


def _forms(secret: str) -> list[str]:
    """``secret`` as a cassette could hold it: plain, and base64 at every alignment."""
    raw = secret.encode()
    return [secret] + [base64.b64encode(b"x" * n + raw).decode()[4:-4] for n in range(3)]


def _script(server: ProviderServer, n: int) -> None:
    for _ in range(n):
        server.add_raw([b'{"ok": true}'], headers={"content-type": "application/json"})


def _run(pytester: pytest.Pytester, server: ProviderServer, prompt: str, *args: str) -> object:
    return run(
        pytester,
        *args,
        AR_SERVER=server.url,
        AR_SECRET=f"s3cr3t-{secrets.token_hex(12)}",
        AR_PROMPT=prompt,
    )


def _request(path: Path) -> dict[str, object]:
    [interaction] = yaml.safe_load(path.read_text())["interactions"]
    return dict(interaction["request"])


def test_secret_named_fields_are_scrubbed_in_gzip_json_and_multipart_bodies(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    _script(server, 2)
    secret = f"s3cr3t-{secrets.token_hex(12)}"
    run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=server.url,
        AR_SECRET=secret,
        AR_PROMPT="hello",
    ).assert_outcomes(passed=2)
    gz = cassette(pytester, "test_send[gzip]")
    upload = cassette(pytester, "test_send[multipart]")
    for path in (gz, upload):
        text = path.read_text()
        assert not [form for form in _forms(secret) if form in text], path.name
    request = _request(gz)
    assert request["json"] == {"model": "m", "api_key": "REDACTED", "prompt": "hello"}
    assert "content-encoding" not in request["headers"]  # type: ignore[operator]
    parts = base64.b64decode(str(_request(upload)["body_b64"]))
    assert b'name="api_key"\r\n\r\nREDACTED\r\n' in parts
    assert b'name="purpose"\r\n\r\nvision\r\n' in parts
    assert bytes(range(256)) * 4 in parts, "the binary part was changed"

    # The same requests, with another secret, still replay from the cassettes.
    run(
        pytester, AR_SERVER=server.url, AR_SECRET="other-secret-value", AR_PROMPT="hello"
    ).assert_outcomes(passed=2)
    assert len(server.requests) == 2, "the replay went to the server"


@pytest.mark.parametrize("kind", ["gzip", "multipart"])
def test_a_key_in_a_text_part_or_a_compressed_body_stops_the_write(
    pytester: pytest.Pytester, server: ProviderServer, kind: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    _script(server, 1)
    key = "sk-proj-" + secrets.token_urlsafe(40) + "7"
    result = run(
        pytester,
        "--agentreplay-record-mode=once",
        "-k",
        kind,
        AR_SERVER=server.url,
        AR_SECRET="s3cr3t-value-0000",
        AR_PROMPT=f"use {key} for this",
    )
    result.assert_outcomes(passed=1, errors=1)
    field = "json.prompt" if kind == "gzip" else "body_b64"
    result.stdout.fnmatch_lines(
        [
            "*SecretLeakError: refusing to write*",
            f"*interactions[[]0[]].request.{field}: openai-key*",
        ]
    )
    assert not cassette(pytester, f"test_send[{kind}]").exists()
    printed = result.stdout.str()
    assert not [form for form in _forms(key) if form in printed]


def test_a_compressed_request_body_the_plugin_cannot_decode_is_refused(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(
        test_user="""
import os, httpx2, pytest

@pytest.mark.agentreplay
def test_send(agentreplay):
    httpx2.post(os.environ["AR_SERVER"] + "/v1/x", content=b"\\x00\\x01 opaque",
                headers={"content-type": "application/json", "content-encoding": "x-packed"})
"""
    )
    _script(server, 1)
    result = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*SecretLeakError: refusing to write*",
            "*interactions[[]0[]].request.body_b64: unreadable: a body encoded as 'x-packed'*",
        ]
    )
    assert not cassette(pytester, "test_send").exists()
