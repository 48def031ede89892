"""The test's call log (``CassetteSession.calls``): what each replayed call did.

Issue 29: a replayed call is logged as the few values it ended with (its client library
read from the few headers that name it: none of them is kept), and becomes a
:class:`~pytest_agentreplay.cassettes.calls.ReplayedCall` when the log is first read.
These tests hold the log to what it said when each call built its entry at once: the
same calls, in the order they ended, with the same client, status and outcome, however
often and whenever the log is read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_agentreplay.cassettes.calls import ReplayedCall
from pytest_agentreplay.cassettes.cassette import (
    Cassette,
    Interaction,
    RecordedRequest,
    RecordedResponse,
)
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.cassettes.session import CassetteSession
from pytest_agentreplay.neutral import Fault, Reply, Text
from pytest_agentreplay.redact import Scrubber
from pytest_agentreplay.transport.router import Router, intercepting
from tests.servers import provider_server

URL = "https://api.anthropic.com/v1/messages"


def _interaction(text: str) -> Interaction:
    return Interaction(
        request=RecordedRequest(method="POST", url=URL, json_body={"q": text}),
        response=RecordedResponse(
            status=200, headers={"content-type": "application/json"}, json_body={"a": text}
        ),
    )


@contextlib.contextmanager
def _replaying(tmp_path: Path, texts: str, **kw: Any) -> Iterator[CassetteSession]:
    path = tmp_path / "c.yaml"
    cassette = Cassette(interactions=[_interaction(text) for text in texts])
    path.write_text(dumps(cassette), encoding="utf-8")
    router = Router(test="log", block=False)
    session = CassetteSession(
        path=path, record_mode="none", router=router, scrubber=Scrubber(), **kw
    )
    router.add(session)
    with intercepting(router):
        yield session


def test_the_log_names_each_call_as_it_ended(tmp_path: Path) -> None:
    with _replaying(tmp_path, "abc") as session:
        session.inject(Fault.http(529), at_call=1)
        sdk = {"user-agent": "Anthropic/Python 2.17.0", "x-stainless-lang": "python"}
        with httpx.Client(headers=sdk) as client:
            for text in "abc":
                client.post(URL, json={"q": text})
            client.post(URL, json={"q": "b"})  # the retry of the failed call
    calls = session.calls
    assert all(type(call) is ReplayedCall for call in calls)
    assert [(c.index, c.interaction, c.status, c.outcome) for c in calls] == [
        (0, 0, 200, "completed"),
        (1, 1, 529, "http_error"),
        (2, 2, 200, "completed"),
        (3, 1, 200, "completed"),
    ]
    assert {c.client for c in calls} == {"anthropic 2.17.0 (python)"}
    assert {(c.method, c.url, c.source, c.request) for c in calls} == {
        ("POST", URL, "cassette", None)
    }


def test_the_log_is_built_when_read_once_and_keeps_no_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[object, ...]] = []
    build = CassetteSession._replayed_call

    def counting(self: CassetteSession, logged: tuple[object, ...]) -> ReplayedCall:
        built.append(logged)
        return build(self, logged)  # type: ignore[arg-type]

    monkeypatch.setattr(CassetteSession, "_replayed_call", counting)
    key = "sk-ant-live-QQ0123456789ZZ"
    with _replaying(tmp_path, "abc") as session, httpx.Client() as client:
        client.post(URL, json={"q": "a"}, headers={"x-api-key": key})
        client.post(URL, json={"q": "b"}, headers={"x-api-key": key})
        assert session.replayed == 2  # counted without building the log
        assert built == []
        assert key not in repr(session._calls)  # as text or bytes
        first = session.calls
        assert len(built) == 2
        assert session.calls == first  # built once: read again, nothing is built again
        assert len(built) == 2
        client.post(URL, json={"q": "c"})  # logged after the log was read
        assert session.calls[:2] == first
        assert [c.interaction for c in session.calls] == [0, 1, 2]
        assert len(built) == 3
        assert {c.client for c in session.calls} == {f"httpx {httpx.__version__}"}


def test_a_client_that_names_none_is_logged_without_one(tmp_path: Path) -> None:
    with _replaying(tmp_path, "a") as session, httpx.Client() as client:
        client.post(URL, json={"q": "a"}, headers={"user-agent": ""})
    assert [c.client for c in session.calls] == [None]


def test_replayed_counts_only_what_the_cassette_answered(tmp_path: Path) -> None:
    """``new_episodes``: a request the cassette has no answer for goes out live and is
    logged as a live call among the replayed ones."""
    with provider_server() as server:
        server.add(Reply(parts=[Text(text="live")]))
        url = f"{server.url}/v1/messages"
        path = tmp_path / "c.yaml"
        recorded = _interaction("a").replace(
            request=RecordedRequest(method="POST", url=url, json_body={"q": "a"})
        )
        path.write_text(dumps(Cassette(interactions=[recorded])), encoding="utf-8")
        router = Router(test="log", block=False)
        session = CassetteSession(
            path=path, record_mode="new_episodes", router=router, scrubber=Scrubber()
        )
        router.add(session)
        router.recorder = session.recorder()
        with intercepting(router), httpx.Client() as client:
            assert client.post(url, json={"q": "a"}).json() == {"a": "a"}
            body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
            assert client.post(url, json=body).status_code == 200
    assert session.replayed == 1
    assert [(c.index, c.source) for c in session.calls] == [(0, "cassette"), (1, "live")]
