"""Items 1-4: a real recording — httpx2 on the wire to a loopback server — scrubs what
a cassette must never hold, and the scrubbed cassette still replays.

1. the default secret request headers, each sent in four case spellings;
2. secret response headers (``set-cookie`` ``__cf_bm`` / ``_cfuvid``, the organization
   and workspace ids), request ids normalized, ``cf-ray`` and ``content-length``
   dropped (replay sends a length that fits the stored body);
3. secret query and fragment parameters and signed-URL signatures, other parameters
   kept, and a replay with *other* secret values still matching;
4. secrets in nested JSON keys and inside an SSE ``data:`` line: the JSON stays valid,
   the stream still parses. Form bodies (the loopback server speaks JSON only) are
   scrubbed through the same save path.

Every secret is random per run, so nothing here is a value the code could echo.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import save
from pytest_agentreplay.redact import default_scrubber
from tests.cassettes._plugin_runs import cassette, results, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

REQUEST_HEADERS = [
    "authorization",
    "x-api-key",
    "api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "x-amz-security-token",
    "x-goog-api-key",
]
SPELLINGS = ["lower", "upper", "title", "alternating"]

USER_TEST = """
import json, os
import httpx2, pytest
from pytest_agentreplay import sse

URL, S = os.environ["AR_SERVER"], json.loads(os.environ["AR_SECRETS"])
NAMES = json.loads(os.environ["AR_NAMES"])
SPELL = {
    "lower": str.lower, "upper": str.upper, "title": str.title,
    "alternating": lambda n: "".join(c.upper() if i % 2 else c for i, c in enumerate(n)),
}


def url(i):
    return (f"{URL}/v1/messages?keep=yes&key={S['key']}&api_key={S['api_key']}"
            f"&sig={S['sig']}&se=2030-01-01&X-Amz-Signature={S['amz']}&n={i}"
            f"#access_token={S['fragment']}")


def headers(spelling):
    value = {"authorization": "Bearer " + S["header"], "cookie": "sid=" + S["header"]}
    return {SPELL[spelling](n): value.get(n, S["header"]) for n in NAMES}


@pytest.mark.agentreplay
@pytest.mark.parametrize("spelling", json.loads(os.environ["AR_SPELLINGS"]))
def test_call(agentreplay, spelling):
    body = {"model": "m", "max_tokens": 9, "stream": spelling != "lower",
            "messages": [{"role": "user", "content": spelling}],
            "metadata": {"deep": [{"api_key": S["body"], "keep": "visible"}]}}
    response = httpx2.post(url(spelling), json=body, headers=headers(spelling))
    events = [e.data for e in sse.iter_events(response.iter_bytes())] if body["stream"] else []
    with open(os.environ["AR_OUT"], "a") as out:
        out.write(json.dumps({"headers": dict(response.headers), "size": len(response.content),
                              "text": response.text, "events": events,
                              "sources": [c.source for c in agentreplay.calls]}) + "\\n")
"""


def _secrets() -> dict[str, str]:
    names = ("header", "key", "api_key", "sig", "amz", "fragment", "body", "cookie", "sse")
    return {name: f"{name}{secrets.token_hex(10)}" for name in names}


def _response_headers(s: dict[str, str], content_type: str) -> dict[str, str]:
    return {
        "content-type": content_type,
        "set-cookie": f"__cf_bm={s['cookie']}; path=/; HttpOnly",
        "Set-Cookie": f"_cfuvid={s['cookie']}; path=/",  # a second set-cookie line
        "anthropic-organization-id": s["header"],
        "anthropic-workspace-id": s["header"],
        "openai-organization": s["header"],
        "request-id": f"req_{s['key']}",
        "cf-ray": f"{s['key']}-LHR",
    }


def _script(server: ProviderServer, s: dict[str, str]) -> None:
    """One JSON answer (for the non-streamed ``lower`` call), then SSE answers whose
    data lines carry a secret under a nested key."""
    server.add_raw(
        [json.dumps({"type": "message", "content": [{"type": "text", "text": "ok"}]}).encode()],
        headers=_response_headers(s, "application/json"),
    )
    for _ in SPELLINGS[1:]:
        data = json.dumps({"type": "ping", "auth": {"api_key": s["sse"]}, "n": 1})
        stream = [b"event: ping\ndata: " + data.encode() + b"\n\n", b"data: [DONE]\n\n"]
        server.add_raw(stream, headers=_response_headers(s, "text/event-stream"))


def _run(pytester: pytest.Pytester, server: ProviderServer, s: dict[str, str], *args: str) -> Any:
    env = {
        "AR_SERVER": server.url,
        "AR_SECRETS": json.dumps(s),
        "AR_NAMES": json.dumps(REQUEST_HEADERS),
        "AR_SPELLINGS": json.dumps(SPELLINGS),
    }
    return run(pytester, *args, **env)


def test_recording_scrubs_headers_urls_and_bodies_and_still_replays(
    pytester: pytest.Pytester, server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=USER_TEST)
    recorded = _secrets()
    _script(server, recorded)
    _run(pytester, server, recorded, "--agentreplay-record-mode=once").assert_outcomes(passed=4)
    assert len(server.requests) == 4
    live = results(pytester)

    for spelling in SPELLINGS:
        path = cassette(pytester, f"test_call[{spelling}]")
        text = path.read_text()
        leaked = [name for name, value in recorded.items() if value in text]
        assert leaked == [], f"{spelling}: {leaked} written to the cassette"
        [interaction] = yaml.safe_load(text)["interactions"]
        _check_request(interaction["request"])
        _check_response(interaction["response"], streamed=spelling != "lower")

    # Replay with other secret values: the scrubbed requests still match.
    replay = _run(pytester, server, _secrets())
    replay.assert_outcomes(passed=4)
    assert len(server.requests) == 4, "replay went to the server"
    replayed = results(pytester)
    assert [r["sources"] for r in replayed] == [["cassette"]] * 4
    for before, after in zip(live, replayed, strict=True):
        assert after["headers"]["request-id"] == "req_agentreplay"
        assert "cf-ray" not in after["headers"]
        if "content-length" in after["headers"]:
            assert int(after["headers"]["content-length"]) == after["size"]
        assert len(after["events"]) == len(before["events"])
        for data in after["events"]:  # the stream parses, its JSON is still JSON
            assert data == "[DONE]" or json.loads(data)["auth"]["api_key"] == "REDACTED"


def _check_request(request: dict[str, Any]) -> None:
    headers = {name.lower(): value for name, value in request["headers"].items()}
    assert {n for n in REQUEST_HEADERS if n in headers} == set(REQUEST_HEADERS)
    assert headers["authorization"] == "Bearer REDACTED"
    query = request["url"].split("?", 1)[1]
    assert "keep=yes" in query
    assert "se=2030-01-01" in query, "a parameter of no secret name was changed"
    assert request["json"]["metadata"]["deep"] == [{"api_key": "REDACTED", "keep": "visible"}]


def _check_response(response: dict[str, Any], *, streamed: bool) -> None:
    headers = response["headers"]
    assert "cf-ray" not in headers
    assert "content-length" not in headers
    assert headers["request-id"] == "req_agentreplay"
    for name in ("anthropic-organization-id", "anthropic-workspace-id", "openai-organization"):
        assert headers[name] == "REDACTED"
    if streamed:
        data = json.loads(response["events"][0]["data"])
        assert data == {"type": "ping", "auth": {"api_key": "REDACTED"}, "n": 1}


def test_form_bodies_are_scrubbed_by_parameter_on_save(tmp_path: Path) -> None:
    secret = secrets.token_hex(12)
    form = {"content-type": "application/x-www-form-urlencoded"}
    body = f"grant_type=client_credentials&client_secret={secret}&scope=read"
    call = Interaction(
        request=RecordedRequest(
            method="POST", url="https://auth.example/t", headers=form, body=body
        ),
        response=RecordedResponse(status=200, headers=form, body=f"access_token={secret}&ttl=60"),
    )
    path = tmp_path / "form.yaml"
    save(path, Cassette(interactions=[call]), scrubber=default_scrubber())
    text = path.read_text()
    assert secret not in text
    assert "grant_type=client_credentials&client_secret=REDACTED&scope=read" in text
    assert "access_token=REDACTED&ttl=60" in text
