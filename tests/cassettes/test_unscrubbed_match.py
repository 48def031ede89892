"""A replayed request matched as sent, when scrubbing could change nothing of its key.

Issue 29: a live request is scrubbed exactly as recordings were before it is matched,
which was a fifth of a replayed request's cost, though for nearly every request the
scrub changes its headers only and the key reads none. Such a request is now matched
as sent, and scrubbed only when something shows it (a miss report, a fault's retry
key, an imported call's log). These tests hold the shortcut to the scrubbed answer:
wherever scrubbing changes what the key reads (a body key, a URL parameter, a custom
scrubber, a ``headers`` part) the request is still scrubbed first, and what a miss
report is given is the scrubbed request. A request whose bytes are the next recorded
request's body written back (httpx's ``json=``, the SDKs) is not even decoded: its
bytes give its key, and the index serves it as any other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_agentreplay.cassettes import session as session_module
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.errors import CassetteMiss
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.cassettes.matching import header
from pytest_agentreplay.cassettes.session import CassetteSession
from pytest_agentreplay.neutral import Fault
from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.transport.router import Router, intercepting

URL = "https://api.anthropic.com/v1/messages"
LIVE_KEY = "sk-ant-live-QQ0123456789ZZ"


def _interaction(body: dict[str, Any], answer: str, url: str = URL) -> Interaction:
    return Interaction(
        request=RecordedRequest(
            method="POST", url=url, headers={"x-api-key": "REDACTED"}, json_body=body
        ),
        response=RecordedResponse(
            status=200, headers={"content-type": "application/json"}, json_body={"id": answer}
        ),
    )


def _body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": text}], **extra}


@contextlib.contextmanager
def _replaying(
    tmp_path: Path, interactions: list[Interaction], scrubber: Scrubber | None = None, **kw: Any
) -> Iterator[CassetteSession]:
    path = tmp_path / "c.yaml"
    path.write_text(dumps(Cassette(interactions=interactions)), encoding="utf-8")
    router = Router(test="unscrubbed", block=False)
    session = CassetteSession(
        path=path, record_mode="none", router=router, scrubber=scrubber or Scrubber(), **kw
    )
    router.add(session)
    with intercepting(router):
        yield session


def _post(client: httpx.Client, body: dict[str, Any], url: str = URL) -> str:
    response = client.post(url, json=body, headers={"x-api-key": LIVE_KEY})
    assert response.status_code == 200
    answer: str = response.json()["id"]
    return answer


@pytest.fixture
def scrubs(monkeypatch: pytest.MonkeyPatch) -> list[RecordedRequest]:
    """The requests :meth:`Scrubber.scrub_request` is given."""
    seen: list[RecordedRequest] = []
    scrub = Scrubber.scrub_request

    def counting(self: Scrubber, request: RecordedRequest) -> RecordedRequest:
        seen.append(request)
        return scrub(self, request)

    monkeypatch.setattr(Scrubber, "scrub_request", counting)
    return seen


def test_a_request_with_a_secret_header_only_is_matched_as_sent(
    tmp_path: Path, scrubs: list[RecordedRequest]
) -> None:
    with (
        _replaying(tmp_path, [_interaction(_body("a"), "A"), _interaction(_body("b"), "B")]),
        httpx.Client() as client,
    ):
        assert [_post(client, _body("b")), _post(client, _body("a"))] == ["B", "A"]
    assert scrubs == []  # the shortcut was taken: this is what the tests below guard


def test_a_miss_report_is_given_the_scrubbed_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[RecordedRequest] = []
    with _replaying(tmp_path, [_interaction(_body("a"), "A")]) as session:
        miss = session._miss
        monkeypatch.setattr(session, "_miss", lambda r, client=None: given.append(r) or miss(r))
        with httpx.Client() as client, pytest.raises(CassetteMiss) as report:
            _post(client, _body("not recorded"))
    assert [r.headers.get("x-api-key") for r in given] == ["REDACTED"]
    assert LIVE_KEY not in str(report.value)
    assert "not recorded" in str(report.value)  # the diff shows the live body


def test_a_secret_in_the_body_is_scrubbed_before_matching(
    tmp_path: Path, scrubs: list[RecordedRequest]
) -> None:
    recorded = _interaction(_body("a", api_key="REDACTED"), "A")
    with _replaying(tmp_path, [recorded]), httpx.Client() as client:
        assert _post(client, _body("a", api_key="sk-live-QQ9876543210ZZ")) == "A"
    assert len(scrubs) == 1


def test_a_secret_url_parameter_is_scrubbed_before_matching(
    tmp_path: Path, scrubs: list[RecordedRequest]
) -> None:
    recorded = _interaction(_body("a"), "A", url=f"{URL}?key=REDACTED")
    with (
        _replaying(tmp_path, [recorded], match_on=("method", "uri", "body")),
        httpx.Client() as client,
    ):
        assert _post(client, _body("a"), url=f"{URL}?key=live-QQ555ZZ") == "A"
    assert len(scrubs) == 1


def test_a_custom_scrubber_runs_before_matching(
    tmp_path: Path, scrubs: list[RecordedRequest]
) -> None:
    """A custom scrubber may change anything the key reads: here a user id in the body."""

    def anonymous(interaction: Interaction) -> Interaction:
        body = interaction.request.json_body
        if isinstance(body, dict) and "user" in body:
            body["user"] = "someone"
        return interaction

    recorded = _interaction(_body("a", user="someone"), "A")
    with _replaying(tmp_path, [recorded], Scrubber(custom=[anonymous])), httpx.Client() as client:
        assert _post(client, _body("a", user="alice-123")) == "A"
    assert len(scrubs) == 1


def test_a_key_that_reads_headers_is_taken_from_the_scrubbed_request(
    tmp_path: Path, scrubs: list[RecordedRequest]
) -> None:
    """A part that reads a header: the live key equals the recorded ``REDACTED`` only
    once scrubbed."""
    match_on = (header("x-api-key"), "body")
    with (
        _replaying(tmp_path, [_interaction(_body("a"), "A")], match_on=match_on),
        httpx.Client() as client,
    ):
        assert _post(client, _body("a")) == "A"
    assert len(scrubs) == 1


def test_a_fault_s_retry_replays_the_recording(tmp_path: Path) -> None:
    """The retry of a call failed by an injected fault is found by the key the call was
    offered under, made from its scrubbed copy: the same key."""
    with _replaying(tmp_path, [_interaction(_body("a"), "A")]) as session:
        session.inject(Fault.http(503), at_call=0)
        with httpx.Client() as client:
            first = client.post(URL, json=_body("a"), headers={"x-api-key": LIVE_KEY})
            assert first.status_code == 503
            assert _post(client, _body("a")) == "A"
    assert session.unplayed == []


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The bodies the session decodes into the cassette form (``request_from_wire``)."""
    seen: list[bytes] = []
    build = session_module.request_from_wire

    def counting(method: str, url: str, headers: Any, content: bytes) -> RecordedRequest:
        seen.append(content)
        return build(method, url, headers, content)

    monkeypatch.setattr(session_module, "request_from_wire", counting)
    return seen


def test_a_request_sent_as_recorded_is_matched_without_being_decoded(
    tmp_path: Path, decoded: list[bytes], scrubs: list[RecordedRequest]
) -> None:
    """httpx writes ``json=`` compactly, as the cassette's body is written back: the
    requests of a replay in recorded order are matched by their bytes."""
    recorded = [_interaction(_body(text), text.upper()) for text in "abc"]
    with _replaying(tmp_path, recorded) as session, httpx.Client() as client:
        assert [_post(client, _body(text)) for text in "abc"] == ["A", "B", "C"]
        assert [call.interaction for call in session.calls] == [0, 1, 2]
    assert decoded == [] and scrubs == []


def test_bytes_that_match_the_next_recording_are_served_by_the_index(
    tmp_path: Path, decoded: list[bytes]
) -> None:
    """The bytes give the key only: the index serves the first unplayed interaction
    with that key, as for any request. Here the third recording repeats the first, and
    its request (sent after the second) gets the first's answer."""
    recorded = [
        _interaction(_body("a"), "first a"),
        _interaction(_body("b"), "B"),
        _interaction(_body("a"), "second a"),
    ]
    with _replaying(tmp_path, recorded) as session, httpx.Client() as client:
        assert _post(client, _body("b")) == "B"  # out of order: decoded
        assert _post(client, _body("a")) == "first a"  # the bytes of recording 2
        assert _post(client, _body("a")) == "second a"
        assert session.unplayed == []
    assert len(decoded) == 2  # the first request, and the last (past the cursor)


def test_a_request_sent_otherwise_is_decoded_and_matched_as_before(
    tmp_path: Path, decoded: list[bytes]
) -> None:
    """The same JSON with its keys in another order, or spaced: not the recorded
    bytes, decoded, and it matches (key order and whitespace do not count)."""
    recorded = [_interaction(_body("a", stream=False), "A")]
    spaced = b'{"stream": false, "messages": [{"role": "user", "content": "a"}], "model": "m"}'
    with _replaying(tmp_path, recorded), httpx.Client() as client:
        answer = client.post(URL, content=spaced, headers={"content-type": "application/json"})
        assert answer.json()["id"] == "A"
    assert decoded == [spaced]


def test_a_replay_in_recorded_order_keys_no_recorded_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each request sent as the next recording was stored is that recording, taken by
    position: no recorded body is keyed (issue 29: a tenth of loading a long cassette).
    The first request out of order keys them all, once, and is matched by its key."""
    import pytest_agentreplay.cassettes.match_parts as parts

    keyed: list[RecordedRequest] = []
    real = parts.normalize_body
    monkeypatch.setattr(parts, "normalize_body", lambda r: keyed.append(r) or real(r))
    recorded = [_interaction(_body(text), text.upper()) for text in "abcd"]
    with _replaying(tmp_path, recorded) as session, httpx.Client() as client:
        assert [_post(client, _body(text)) for text in "ab"] == ["A", "B"]
        assert keyed == []
        assert _post(client, _body("d")) == "D"  # out of order: keyed, by its key
        assert len(keyed) == len(recorded) + 1  # every recording once, and the live one
        assert _post(client, _body("c")) == "C"
        assert [call.interaction for call in session.calls] == [0, 1, 3, 2]
        assert session.unplayed == []


def test_a_fault_s_retry_in_a_replay_in_recorded_order_gets_its_recording(
    tmp_path: Path,
) -> None:
    """A call failed by an injected fault leaves its recording for the retry: the retry,
    sent as that recording, is answered by it and not by the next one in order."""
    recorded = [_interaction(_body(text), text.upper()) for text in "abc"]
    with _replaying(tmp_path, recorded) as session, httpx.Client() as client:
        session.inject(Fault.http(529), at_call=1)
        assert _post(client, _body("a")) == "A"
        failed = client.post(URL, json=_body("b"), headers={"x-api-key": LIVE_KEY})
        assert failed.status_code == 529
        assert [_post(client, _body(text)) for text in "bc"] == ["B", "C"]
        assert [call.interaction for call in session.calls] == [0, 1, 1, 2]
        assert session.unplayed == []
