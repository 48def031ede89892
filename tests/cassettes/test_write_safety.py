"""Writing cassettes is safe: secrets never reach disk, a failed test keeps the old
file, permissions survive, oversized and endless bodies are handled.

Every scenario records real traffic from the loopback provider server through a
generated user test run by pytest in this process.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_agentreplay import Reply, sse
from pytest_agentreplay.providers import codec_for
from pytest_agentreplay.providers.base import RenderContext
from tests.cassettes._plugin_runs import (
    PRELUDE,
    cassette,
    environ,
    interactions,
    prompts,
    results,
    run,
)
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]


CHAT = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_chat(agentreplay):
    answers = [ask(p) for p in os.environ["AR_PROMPTS"].split(",")]
    report(agentreplay, answers=answers)
    assert not os.environ.get("AR_FAIL"), "the test failed after recording"
"""
)


def test_a_failed_test_keeps_the_existing_cassette_unless_asked(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    mode = "--agentreplay-record-mode=new_episodes"
    run(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="A").assert_outcomes(passed=1)
    path.chmod(0o640)
    before = path.read_bytes()

    failed = run(pytester, mode, AR_SERVER=echo_server.url, AR_PROMPTS="A,B", AR_FAIL="1")
    failed.assert_outcomes(failed=1)
    assert path.read_bytes() == before
    failed.stdout.fnmatch_lines([f"  not written: {path} (the test failed; the existing*kept)"])

    saved = run(
        pytester,
        mode,
        "--agentreplay-save-on-failure",
        AR_SERVER=echo_server.url,
        AR_PROMPTS="A,B",
        AR_FAIL="1",
    )
    saved.assert_outcomes(failed=1)
    assert prompts(path) == ["A", "B"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert [r["sources"] for r in results(pytester)] == [
        ["live"],
        ["cassette", "live"],
        ["cassette", "live"],
    ]


def test_a_new_cassette_written_keeps_the_umask_and_rewrites_keep_the_mode(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=CHAT)
    path = cassette(pytester, "test_chat")
    old_umask = os.umask(0o027)
    try:
        run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_PROMPTS="A")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o600)
    run(pytester, "--agentreplay-record-mode=rewrite", AR_SERVER=echo_server.url, AR_PROMPTS="B")
    assert prompts(path) == ["B"]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(path.parent.glob("*.tmp")) == [] and list(path.parent.glob("*.lock")) == []


# --- secrets ---------------------------------------------------------------------------

SECRETS = (
    PRELUDE
    + """
import anthropic

@pytest.mark.agentreplay
def test_secrets(agentreplay):
    prompt = os.environ["AR_PROMPTS"]
    sdk = anthropic.Anthropic(api_key=os.environ["ANTHROPIC_API_KEY"], base_url=URL,
                              max_retries=0, default_query={"key": os.environ["AR_QUERY_KEY"]},
                              default_headers={"X-Api-Key": os.environ["AR_X_API_KEY"]})
    CLIENTS.append(sdk)
    with sdk.messages.stream(
        model="m", max_tokens=9, messages=[{"role": "user", "content": prompt}],
        extra_body={"auth": {"api_key": os.environ["AR_BODY_KEY"]}},
    ) as stream:
        text = stream.get_final_message().content[0].text
    bearer = anthropic.Anthropic(auth_token=os.environ["AR_BEARER"], base_url=URL, max_retries=0)
    CLIENTS.append(bearer)
    again = bearer.messages.create(model="m", max_tokens=9,
                                   messages=[{"role": "user", "content": prompt + "?"}])
    report(agentreplay, answers=[text, again.content[0].text])
"""
)


def _canaries() -> dict[str, str]:
    """Fresh secret values for each place a secret can travel."""
    return {
        "ANTHROPIC_API_KEY": f"sk-ant-api03-{secrets.token_urlsafe(30)}",
        "AR_BEARER": f"canary-bearer-{secrets.token_hex(16)}",
        "AR_X_API_KEY": f"canary-x-api-key-{secrets.token_hex(16)}",
        "AR_QUERY_KEY": f"canary-query-{secrets.token_hex(16)}",
        "AR_BODY_KEY": f"canary-body-{secrets.token_hex(16)}",
        "AR_SSE_KEY": f"canary-sse-{secrets.token_hex(16)}",
    }


def stream_with_secret(secret: str, text: str = "hello") -> list[bytes]:
    """An anthropic stream whose ``message_start`` data carries ``"api_key": secret``."""
    codec = codec_for("anthropic")
    events = codec.render_events(Reply.text(text), RenderContext(model="m"))
    first = json.loads(events[0].data)
    first["message"]["api_key"] = secret
    events[0] = sse.SSEEvent(data=json.dumps(first), event=events[0].event)
    encoder = sse.SSEEncoder()
    return [encoder.encode(e) for e in events]


def _assert_clean(path: Path, canaries: dict[str, str]) -> None:
    raw = path.read_bytes()
    for name, value in canaries.items():
        assert value.encode() not in raw, f"{name} reached {path.name}"


def test_secrets_never_reach_disk_on_record_append_and_rewrite(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    canaries = _canaries()
    pytester.makepyfile(test_user=SECRETS)
    path = cassette(pytester, "test_secrets")
    for mode, prompt in (("once", "A"), ("new_episodes", "B"), ("rewrite", "C")):
        echo_server.add_raw(stream_with_secret(canaries["AR_SSE_KEY"], f"reply {prompt}"))
        result = run(
            pytester,
            f"--agentreplay-record-mode={mode}",
            "-v",  # the summary lists every live call
            AR_SERVER=echo_server.url,
            AR_PROMPTS=prompt,
            **canaries,
        )
        result.assert_outcomes(passed=1)
        _assert_clean(path, canaries)
        assert not any(v in result.stdout.str() for v in canaries.values())
    # The secrets did go out on the wire...
    assert echo_server.headers[-2]["authorization"] == f"Bearer {canaries['ANTHROPIC_API_KEY']}"
    assert echo_server.headers[-2]["x-api-key"] == canaries["AR_X_API_KEY"]
    assert echo_server.headers[-1]["authorization"] == f"Bearer {canaries['AR_BEARER']}"
    assert canaries["AR_QUERY_KEY"] in echo_server.paths[-2]
    assert canaries["AR_BODY_KEY"] in json.dumps(echo_server.requests[-2])
    # ... and every one of them was scrubbed on each write, the last one a rewrite.
    assert prompts(path) == ["C", "C?"]
    streamed, plain = interactions(path)
    assert streamed["request"]["headers"]["x-api-key"] == "REDACTED"
    assert streamed["request"]["headers"]["authorization"] == "Bearer REDACTED"
    assert plain["request"]["headers"]["authorization"] == "Bearer REDACTED"
    assert streamed["request"]["json"]["auth"]["api_key"] == "REDACTED"
    assert "api_key" in streamed["response"]["events"][0]["data"]
    # Live requests are scrubbed the same way before matching: the replay still matches.
    replayed = run(pytester, AR_PROMPTS="C", **canaries)
    replayed.assert_outcomes(passed=1)
    assert results(pytester)[-1]["sources"] == ["cassette", "cassette"]


SURVIVOR = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_survivor(agentreplay):
    sdk = client().with_options(default_headers={"x-tenant-id": os.environ["MYSERVICE_TOKEN"]})
    sdk.messages.create(model="m", max_tokens=9,
                        messages=[{"role": "user", "content": os.environ["AR_PROMPTS"]}])
"""
)


@pytest.mark.parametrize("mode", ["new_episodes", "rewrite", "all"])
def test_the_backstop_refuses_the_write_and_keeps_the_old_file(
    pytester: pytest.Pytester, echo_server: ProviderServer, mode: str
) -> None:
    """A secret no rule knows by name (an API-key env value in a custom header) is
    caught by the final scan: nothing is written, and the error says where, not what."""
    pytester.makepyfile(test_user=SURVIVOR)
    path = cassette(pytester, "test_survivor")
    run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=echo_server.url,
        AR_PROMPTS="A",
        MYSERVICE_TOKEN="short",  # under 8 characters: not scanned for
    ).assert_outcomes(passed=1)
    before = path.read_bytes()
    token = f"tok{secrets.token_hex(20)}"
    result = run(
        pytester,
        f"--agentreplay-record-mode={mode}",
        AR_SERVER=echo_server.url,
        AR_PROMPTS="B",
        MYSERVICE_TOKEN=token,
    )
    result.assert_outcomes(passed=1, errors=1)
    assert path.read_bytes() == before
    output = result.stdout.str()
    assert token not in output
    result.stdout.fnmatch_lines(
        [
            f"*SecretLeakError: refusing to write {path}: 1 secret(s) survived scrubbing:*",
            "*interactions[[]*[]].request.headers.x-tenant-id: *MYSERVICE_TOKEN*",
        ]
    )
    assert list(path.parent.glob("*.tmp")) == []


# --- bodies that never end, or are too large --------------------------------------------

ENDLESS = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_endless(agentreplay):
    body = {"model": "m", "max_tokens": 9, "stream": True,
            "messages": [{"role": "user", "content": "tick"}]}
    seen = []
    with httpx2.stream("POST", URL + "/v1/messages", json=body, timeout=5) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                seen.append(line)
            if len(seen) == 5:
                break
    report(agentreplay, seen=seen, outcomes=[c.outcome for c in agentreplay.calls])
"""
)


def ticks() -> Iterator[bytes]:
    """An SSE body that never ends."""
    n = 0
    while True:
        yield f'event: tick\ndata: {{"n": {n}}}\n\n'.encode()
        n += 1


def test_a_stream_that_never_ends_is_delivered_while_recording(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=ENDLESS)
    echo_server.add_raw(ticks(), delay=0.01)
    recorded = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url)
    recorded.assert_outcomes(passed=1)
    [live] = results(pytester)
    assert live["seen"] == [f'data: {{"n": {n}}}' for n in range(5)]
    assert live["outcomes"] == ["cancelled"]
    [interaction] = interactions(cassette(pytester, "test_endless"))
    response = interaction["response"]
    assert response["end"] == "cancelled"
    assert [e["data"] for e in response["events"][:5]] == [f'{{"n": {n}}}' for n in range(5)]
    replayed = run(pytester)
    replayed.assert_outcomes(passed=1)
    assert results(pytester)[0]["seen"] == live["seen"]


CAP = """
def pytest_agentreplay_configure(config, settings):
    settings.max_body_bytes = 2_000
"""

BIG = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_big(agentreplay):
    body = {"model": "m", "max_tokens": 9, "stream": True,
            "messages": [{"role": "user", "content": "lots"}]}
    with httpx2.stream("POST", URL + "/v1/messages", json=body, timeout=5) as response:
        size = sum(len(chunk) for chunk in response.iter_bytes())
    report(agentreplay, size=size)
"""
)


def test_a_huge_stream_hits_max_body_bytes_with_a_clear_error(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makeconftest(CAP)
    pytester.makepyfile(test_user=BIG)
    chunk = b"event: blob\ndata: " + b"x" * 100 + b"\n\n"
    echo_server.add_raw([chunk] * 100)
    result = run(pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url)
    result.assert_outcomes(passed=1, errors=1)
    assert results(pytester)[0]["size"] == len(chunk) * 100, "the client still got it all"
    result.stdout.fnmatch_lines(
        [
            "*CassetteWriteError: *test_big.yaml: POST http://127.0.0.1:*/v1/messages: the "
            "response body exceeded 2,000 bytes and was not recorded (raise max_body_bytes in "
            "pytest_agentreplay_configure to record it)*"
        ]
    )
    assert not cassette(pytester, "test_big").exists()


# --- Ctrl-C ----------------------------------------------------------------------------

INTERRUPTED = (
    PRELUDE
    + """
from anthropic import APIConnectionError
from httpcore2._backends.sync import SyncStream

@pytest.mark.agentreplay(allow_incomplete=bool(os.environ.get("AR_ALLOW")))
def test_interrupted(agentreplay):
    # Ctrl-C while the client waits for the next event of a slow stream: Python raises
    # KeyboardInterrupt out of the socket read the client is blocked in. The read is
    # made to raise it, so the test needs no signal timing.
    read, armed, deltas = SyncStream.read, [], []

    def interrupted_read(self, max_bytes, timeout=None):
        if armed:
            armed.clear()
            raise KeyboardInterrupt
        return read(self, max_bytes, timeout)

    SyncStream.read = interrupted_read
    try:
        with client().messages.stream(model="m", max_tokens=9,
                                      messages=[{"role": "user", "content": "count"}]) as s:
            for text in s.text_stream:
                deltas.append(text)
                if os.environ.get("AR_INTERRUPT") and len(deltas) == 2:
                    armed.append(True)
    except (APIConnectionError, httpx2.RemoteProtocolError):  # anthropic 2.17+, older
        deltas.append("<connection dropped>")
    finally:
        SyncStream.read = read
        report(agentreplay, deltas=deltas, outcomes=[c.outcome for c in agentreplay.calls])
"""
)


def _slow_after(k: int, reply: Reply) -> Iterator[bytes]:
    """The anthropic stream of ``reply``; its event ``k`` comes a second later (so the
    client has read the first ``k`` and waits when it is interrupted)."""
    events = codec_for("anthropic").render_events(reply, RenderContext(model="m"))
    encoder = sse.SSEEncoder()
    for i, event in enumerate(events):
        if i == k:
            time.sleep(1)
        yield encoder.encode(event)


def test_ctrl_c_mid_stream_marks_the_recording_incomplete_and_replay_refuses_it(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makepyfile(test_user=INTERRUPTED)
    echo_server.add_raw(_slow_after(5, Reply.text(" ".join(f"w{i}" for i in range(8)))))
    with environ(
        AR_SERVER=echo_server.url, AR_INTERRUPT="1", AR_OUT=str(pytester.path / "out.jsonl")
    ):
        interrupted = pytester.runpytest_inprocess(
            "-p", "no:cacheprovider", "--agentreplay-record-mode=once", no_reraise_ctrlc=True
        )
    assert interrupted.ret == pytest.ExitCode.INTERRUPTED
    interrupted.stdout.fnmatch_lines(["*KeyboardInterrupt*"])
    [live] = results(pytester)
    assert live["deltas"] == ["w0", " w1"]
    [interaction] = interactions(cassette(pytester, "test_interrupted"))
    response = interaction["response"]
    assert response["end"] == "incomplete"
    assert [e["event"] for e in response["events"]] == [
        "message_start",
        "content_block_start",
        "ping",
        "content_block_delta",
        "content_block_delta",
    ]

    refused = run(pytester)
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(
        [
            "*IncompleteRecordingError: *test_interrupted.yaml: interactions[[]0[]]: this "
            "interaction was recorded while the run was interrupted*allow_incomplete=True*"
        ]
    )
    assert results(pytester)[0]["deltas"] == []

    allowed = run(pytester, AR_ALLOW="1")
    allowed.assert_outcomes(passed=1)
    [replayed] = results(pytester)
    assert replayed["deltas"] == ["w0", " w1", "<connection dropped>"]
    assert replayed["outcomes"] == ["cut"]


LEAKY_URL = (
    PRELUDE
    + """
import anthropic

@pytest.mark.agentreplay
def test_leaky(agentreplay):
    key = os.environ["ACME_API_KEY"]
    sdk = anthropic.Anthropic(api_key="k", base_url=URL + "/tenant/" + key, max_retries=0,
                              default_query={"key": key})
    sdk.messages.create(model="m", max_tokens=9, messages=[{"role": "user", "content": "hi"}])
"""
)


def test_a_miss_and_the_summary_never_print_a_secret(pytester: pytest.Pytester) -> None:
    """A key in the URL (path and query) of a request that misses: the error names
    the expected cassette and the request with the key masked, and so does the
    summary's list of blocked calls."""
    pytester.makepyfile(test_user=LEAKY_URL)
    key = f"acme-{secrets.token_hex(16)}"
    result = run(pytester, "-v", ACME_API_KEY=key)
    result.assert_outcomes(failed=1)
    error = [line for line in result.stdout.lines if line.startswith("E ")]
    assert any("CassetteMiss: pytest-agentreplay: no cassette at" in line for line in error)
    assert any("/tenant/REDACTED/v1/messages?key=REDACTED" in line for line in error)
    summary = result.stdout.str().split("- agentreplay -", 1)[1]
    assert "/tenant/REDACTED/v1/messages?key=REDACTED" in summary
    assert key not in "\n".join(error) + summary
