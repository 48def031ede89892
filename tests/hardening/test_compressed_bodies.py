"""Issue 18, item 1: every content coding a client can negotiate (gzip, deflate, br,
zstd) is decoded before scrubbing, and the recording replays as the client expects; a
body the plugin cannot decode is refused with a clear message, never stored unscanned.

httpx and httpx2 advertise ``br`` and ``zstd`` in their default ``Accept-Encoding`` when
brotli and zstandard are installed (the dev extra installs them), so a provider or a
proxy may answer with any of the four. A loopback server answers with bodies compressed
for real (streams flushed event by event, as a server compresses them), the real
clients record them, and the cassette is read back with PyYAML, not the plugin.
"""

from __future__ import annotations

import base64
import gzip
import json
import secrets
import zlib
from pathlib import Path

import brotli
import pytest
import yaml
import zstandard

from pytest_agentreplay.cassettes import io as cassette_io
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cli import main as cli_main
from tests.cassettes._plugin_runs import cassette, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

ENCODINGS = ["gzip", "deflate", "br", "zstd"]
CLIENTS = ["httpx", "httpx2"]

USER_TEST = """
import json, os
import pytest

CASES = json.loads(os.environ["AR_CASES"])


@pytest.mark.agentreplay
@pytest.mark.parametrize("case", CASES)
def test_call(agentreplay, case):
    client, encoding, kind = case.split("-")
    module = __import__(client)
    response = module.post(os.environ["AR_SERVER"] + "/v1/" + case, json={"q": case})
    if kind == "json":
        got = response.json()
    else:
        got = [line for line in response.text.splitlines() if line.startswith("data:")]
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({"case": case, "got": got,
                              "sources": [c.source for c in agentreplay.calls]}) + "\\n")
"""


def _compressed(encoding: str, pieces: list[bytes]) -> list[bytes]:
    """``pieces`` compressed as one body, flushed after each piece (a server streaming
    events compresses them this way)."""
    if encoding == "br":
        compressor = brotli.Compressor()
        out = [compressor.process(p) + compressor.flush() for p in pieces]
        return [*out, compressor.finish()]
    if encoding == "zstd":
        zstd = zstandard.ZstdCompressor().compressobj()
        block = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        return [*(zstd.compress(p) + zstd.flush(block) for p in pieces), zstd.flush()]
    wbits = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}[encoding]
    deflater = zlib.compressobj(wbits=wbits)
    out = [deflater.compress(p) + deflater.flush(zlib.Z_SYNC_FLUSH) for p in pieces]
    return [*out, deflater.flush()]


def _body(kind: str, secret: str) -> tuple[list[bytes], str]:
    """The plain pieces of a body holding ``secret`` under a secret-named JSON key."""
    reply = {"access_token": secret, "note": "hello", "n": 1}
    if kind == "json":
        return [json.dumps(reply).encode()], "application/json"
    events = [f"data: {json.dumps({**reply, 'n': n})}\n\n".encode() for n in range(3)]
    return [*events, b"data: [DONE]\n\n"], "text/event-stream"


def _cases() -> list[str]:
    return [f"{c}-{e}-{k}" for c in CLIENTS for e in ENCODINGS for k in ("json", "sse")]


def _script(server: ProviderServer, cases: list[str], secret: str) -> None:
    for case in cases:
        _, encoding, kind = case.split("-")
        pieces, content_type = _body(kind, secret)
        headers = {"content-type": content_type, "content-encoding": encoding}
        server.add_raw(_compressed(encoding, pieces), headers=headers)


def _parsed(got: object) -> object:
    """A JSON body, or the JSON of each ``data:`` line (a scrubbed event is re-serialised
    compactly, as providers send it)."""
    if isinstance(got, list):
        return [line if line.endswith("[DONE]") else json.loads(line[5:]) for line in got]
    return got


def _results(pytester: pytest.Pytester) -> dict[str, dict[str, object]]:
    out = pytester.path / "out.jsonl"
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    out.unlink()
    return {line["case"]: line for line in lines}


def test_every_negotiable_coding_is_decoded_scrubbed_and_replayed_plain(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    cases, secret = _cases(), f"tok-{secrets.token_hex(16)}"
    _script(server, cases, secret)
    env = {"AR_SERVER": server.url, "AR_CASES": json.dumps(cases)}
    run(pytester, "--agentreplay-record-mode=once", **env).assert_outcomes(passed=len(cases))
    live = _results(pytester)
    for case in cases:
        text = cassette(pytester, f"test_call[{case}]").read_text()
        assert secret not in text, f"{case}: the secret reached the cassette"
        [interaction] = yaml.safe_load(text)["interactions"]
        response = interaction["response"]
        assert "body_b64" not in response, f"{case}: stored opaque, so unscanned"
        assert "content-encoding" not in response["headers"], case
        assert "REDACTED" in text, f"{case}: the body was not decoded before scrubbing"

    run(pytester, **env).assert_outcomes(passed=len(cases))
    replayed = _results(pytester)
    assert len(server.requests) == len(cases), "the replay went to the server"
    for case in cases:
        assert replayed[case]["sources"] == ["cassette"]
        got, was = replayed[case]["got"], live[case]["got"]
        # The client reads the body it read live, but for the scrubbed value.
        assert _parsed(got) == _parsed(json.loads(json.dumps(was).replace(secret, "REDACTED")))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_key_in_a_compressed_body_stops_the_write(
    pytester: pytest.Pytester, server: ProviderServer, encoding: str
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    key = "sk-proj-" + secrets.token_urlsafe(40) + "9"
    payload = json.dumps({"message": f"your key {key} was rotated"}).encode()
    server.add_raw(
        _compressed(encoding, [payload]),
        headers={"content-type": "application/json", "content-encoding": encoding},
    )
    case = f"httpx-{encoding}-json"
    result = run(
        pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url, AR_CASES=f'["{case}"]'
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*SecretLeakError*", "*response.json.message: openai-key*"])
    assert not cassette(pytester, f"test_call[{case}]").exists()
    assert key not in result.stdout.str()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("x-custom", b'{"access_token": "tok-abcdef0123456789"}'),
        ("zstd", b"\x28\xb5\x2f\xfd not zstd at all"),
        ("gzip, x-custom", gzip.compress(b'{"access_token": "tok-abcdef0123456789"}')),
    ],
    ids=["unknown", "corrupt", "chain"],
)
def test_a_body_the_plugin_cannot_decode_is_refused_with_a_clear_message(
    pytester: pytest.Pytester, server: ProviderServer, encoding: str, body: bytes
) -> None:
    pytester.makepyfile(
        test_user="""
import os, httpx2, pytest

@pytest.mark.agentreplay
def test_call(agentreplay):
    with httpx2.stream("POST", os.environ["AR_SERVER"] + "/v1/x", json={}) as response:
        assert b"".join(response.iter_raw())  # as sent: the client does not decode it
"""
    )
    server.add_raw(
        [body], headers={"content-type": "application/json", "content-encoding": encoding}
    )
    result = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=server.url)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*CassetteWriteError*",
            f"*POST http://127.0.0.1:*/v1/x: the response body is encoded ({encoding})*"
            "could not be decoded*not recorded*",
        ]
    )
    assert not cassette(pytester, "test_call").exists()
    assert "tok-abcdef0123456789" not in result.stdout.str()


def _opaque(encoding: str, plain: bytes) -> Cassette:
    """A cassette as an older version wrote it: the compressed bytes kept as
    ``body_b64``, with their ``content-encoding``."""
    [raw] = [b"".join(_compressed(encoding, [plain]))]
    response = RecordedResponse(
        status=200,
        headers={"content-type": "application/json", "content-encoding": encoding},
        body_b64=base64.b64encode(raw).decode(),
    )
    request = RecordedRequest(method="POST", url="https://api.example.com/v1/x", json={"q": 1})
    return Cassette(interactions=[Interaction(request=request, response=response)])


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_lint_reads_a_compressed_body_b64(
    tmp_path: Path, encoding: str, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-proj-" + secrets.token_urlsafe(40) + "9"
    path = tmp_path / "old.yaml"
    plain = json.dumps({"message": f"key {key}"}).encode()
    cassette_io.save(path, _opaque(encoding, plain), scrub=False)
    assert cli_main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "interactions[0].response.body_b64" in out and "openai-key" in out
    assert key not in out


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_an_old_compressed_body_b64_replays_decoded_and_saves_decoded(
    pytester: pytest.Pytester, encoding: str
) -> None:
    folder = pytester.path / "cassettes" / "test_user"
    folder.mkdir(parents=True)
    plain = json.dumps({"note": "hello", "access_token": "tok-0123456789abcdef"}).encode()
    cassette_io.save(folder / "test_old.yaml", _opaque(encoding, plain), scrub=False)
    pytester.makepyfile(
        test_user="""
import httpx, pytest

@pytest.mark.agentreplay
def test_old(agentreplay):
    response = httpx.post("https://api.example.com/v1/x", json={"q": 1})
    assert response.json()["note"] == "hello"
"""
    )
    run(pytester).assert_outcomes(passed=1)
    # Saved again (by `agentreplay redact`), the body is stored decoded and scrubbed.
    assert cli_main(["redact", str(folder / "test_old.yaml")]) == 0
    text = (folder / "test_old.yaml").read_text()
    assert "tok-0123456789abcdef" not in text
    assert "body_b64" not in text and "content-encoding" not in text
