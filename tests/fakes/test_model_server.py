"""A fake model on a real port: child processes with the real SDKs, raw HTTP, curl.

The ``model_server`` fixture serves the test's fake over loopback HTTP/1.1. These
tests start real child processes (``python`` with the anthropic and openai SDKs,
``curl``), which no patch of ours reaches: what they get is what a real server
would send. The same fake's ``log``, ``calls`` and the egress ledger are checked.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from typing import Any

import anthropic
import pytest

from pytest_agentreplay import FakeModel, Fault, Reply, invariants
from pytest_agentreplay.fakes import FakeServer
from pytest_agentreplay.runlog import RunLog
from pytest_agentreplay.transport.delivery import Delivery
from pytest_agentreplay.transport.server import _Connection
from tests.children import CHILD_TIMEOUT, run_python
from tests.sdk_raises import assert_reported, cut_error

pytest_plugins = ["pytester"]


def _child(server: FakeServer, code: str, **env: str) -> dict[str, Any]:
    """Run ``code`` in a fresh Python, pointed at ``server``; what it printed last, as JSON."""
    return run_python(code, {**server.env, **env})


ANTHROPIC_CHILD = """
    import asyncio, json, anthropic
    client = anthropic.Anthropic(max_retries=0)
    ask = dict(model="claude-test-1", max_tokens=50, messages=[{"role": "user", "content": "hi"}])
    whole = client.messages.create(**ask)
    with client.messages.stream(**ask) as stream:
        deltas = list(stream.text_stream)
        final = stream.get_final_message()
    async def streamed_async():
        async with anthropic.AsyncAnthropic(max_retries=0) as aclient:
            events = await aclient.messages.create(**ask, stream=True)
            return [e.type async for e in events]
    types = asyncio.run(streamed_async())
    print(json.dumps({
        "whole": whole.content[0].text,
        "deltas": deltas,
        "tool": [final.content[0].name, final.content[0].input],
        "async_types": types,
    }))
"""


def test_a_child_using_the_anthropic_sdk_gets_the_script(model_server: FakeServer) -> None:
    model_server.model.script(
        Reply.text("Hello from the port."),
        Reply.tool_call("weather", {"city": "Leeds"}),
        Reply.text("Async too."),
    )
    seen = _child(model_server, ANTHROPIC_CHILD)
    assert seen["whole"] == "Hello from the port."
    assert seen["deltas"] == []
    assert seen["tool"] == ["weather", {"city": "Leeds"}]
    assert seen["async_types"][0] == "message_start"
    assert seen["async_types"][-1] == "message_stop"
    log = model_server.model.log
    assert [(c.provider, c.streaming, c.outcome) for c in log] == [
        ("anthropic", False, "completed"),
        ("anthropic", True, "completed"),
        ("anthropic", True, "completed"),
    ]
    assert [r.model for r in model_server.model.requests] == ["claude-test-1"] * 3
    assert all(c.url.startswith(model_server.url) for c in model_server.model.calls)
    # Served, not live: the child's calls are in no egress ledger.
    invariants.assert_no_live_calls()


GEMINI_CHILD = """
    import json
    from google import genai
    client = genai.Client()
    whole = client.models.generate_content(model="gemini-test-1", contents="hi")
    stream = client.models.generate_content_stream(model="gemini-test-1", contents="hi")
    print(json.dumps({
        "whole": whole.text,
        "chunks": [chunk.text for chunk in stream],
        "key": client._api_client.api_key,
    }))
"""


def test_a_child_using_google_genai_gets_the_script_and_no_real_key(
    model_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``.env`` points google-genai at the port too, with the placeholder key in the
    variable it reads first and a real ``GEMINI_API_KEY`` of the parent blanked."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza" + "r" * 35)
    model_server.model.script(Reply.text("Hello from the port."), Reply.text("Streamed too."))
    seen = _child(model_server, GEMINI_CHILD)
    assert seen["whole"] == "Hello from the port."
    assert "".join(seen["chunks"]) == "Streamed too."
    assert seen["key"] == model_server.env["GOOGLE_API_KEY"] == "agentreplay-placeholder-key"
    log = model_server.model.log
    assert [(c.provider, c.streaming, c.outcome) for c in log] == [
        ("gemini", False, "completed"),
        ("gemini", True, "completed"),
    ]
    invariants.assert_no_live_calls()


def test_the_tests_own_client_on_the_url_is_served_as_the_fake_not_live(
    model_server: FakeServer,
) -> None:
    """A test that points an in-process SDK at ``model_server.url`` (next to a child)
    gets the fake's script as a fake call: no loopback live call in the ledger."""
    model_server.model.script(Reply.text("In-process."), Reply.text("Child."))
    client = anthropic.Anthropic(base_url=model_server.url, api_key="test", max_retries=0)
    with client:
        reply = client.messages.create(
            model="claude-test-1", max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        )
    assert reply.content[0].text == "In-process."
    seen = _child(model_server, CHILD_ONE_CALL)
    assert seen == {"text": "Child."}
    assert len(model_server.model.calls) == 2
    invariants.assert_no_live_calls()


CHILD_ONE_CALL = """
    import json, anthropic
    client = anthropic.Anthropic(max_retries=0)
    reply = client.messages.create(model="claude-test-1", max_tokens=9,
                                   messages=[{"role": "user", "content": "hi"}])
    print(json.dumps({"text": reply.content[0].text}))
"""


OPENAI_CHILD = """
    import json, openai
    client = openai.OpenAI(max_retries=0)
    msgs = [{"role": "user", "content": "hi"}]
    whole = client.chat.completions.create(model="gpt-test-1", messages=msgs)
    chunks = client.chat.completions.create(model="gpt-test-1", messages=msgs, stream=True)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices]
    deltas = [d for d in deltas if d]
    with client.responses.stream(model="gpt-test-1", input="hi") as stream:
        final = stream.get_final_response()
    print(json.dumps({
        "whole": whole.choices[0].message.content,
        "deltas": deltas,
        "responses": final.output_text,
    }))
"""


def test_a_child_using_the_openai_sdk_gets_the_script(
    model_server: FakeServer, scripted_model: FakeModel
) -> None:
    assert scripted_model is model_server.model  # one fake per test, whatever its fixture
    scripted_model.script("Chat, whole.", "Chat, streamed.", "Responses, streamed.")
    seen = _child(model_server, OPENAI_CHILD)
    assert seen == {
        "whole": "Chat, whole.",
        "deltas": seen["deltas"],
        "responses": "Responses, streamed.",
    }
    assert "".join(seen["deltas"]) == "Chat, streamed."
    assert [(c.provider, c.streaming, c.outcome) for c in scripted_model.log] == [
        ("openai_chat", False, "completed"),
        ("openai_chat", True, "completed"),
        ("openai_responses", True, "completed"),
    ]
    assert scripted_model.calls[0].url == f"{model_server.url}/v1/chat/completions"


CUT_CHILD = """
    import json, anthropic
    client = anthropic.Anthropic(max_retries=0)
    deltas = []
    try:
        with client.messages.stream(
            model="claude-test-1", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            for text in stream.text_stream:
                deltas.append(text)
    except Exception as exc:  # the transport's error, wrapped by anthropic 2.17 and later
        cause = type(exc.__cause__).__name__ if exc.__cause__ else None
        print(json.dumps({
            "error": type(exc).__name__, "cause": cause, "message": str(exc), "deltas": deltas
        }))
    else:
        print(json.dumps({"error": None, "deltas": deltas}))
"""


def test_a_cut_drops_the_connection_mid_stream(model_server: FakeServer) -> None:
    model_server.model.script(Reply.text("one two three four", fault=Fault.cut(after_events=3)))
    seen = _child(model_server, CUT_CHILD)
    # The SDK's own transport saw the peer close mid-body: a real connection drop.
    assert_reported("anthropic", seen, cut_error("anthropic"))
    assert "incomplete chunked read" in seen["message"]
    (call,) = model_server.model.log
    assert (call.outcome, call.events_sent) == ("cut", 3)


RETRY_CHILD = """
    import json, openai
    client = openai.OpenAI(max_retries=2)
    reply = client.chat.completions.create(
        model="gpt-test-1", messages=[{"role": "user", "content": "hi"}]
    )
    print(json.dumps({"text": reply.choices[0].message.content}))
"""


def test_an_http_fault_reaches_the_child_as_the_provider_sent_it(
    model_server: FakeServer,
) -> None:
    model_server.model.script(Fault.http(429, "slow down", retry_after=0), "After the retry.")
    assert _child(model_server, RETRY_CHILD) == {"text": "After the retry."}
    assert [c.outcome for c in model_server.model.log] == ["http_error", "completed"]
    invariants.assert_retries_resend_identical_input(RunLog.from_fake(model_server.model))


def test_interrupting_model_cuts_a_child_stream_then_serves_the_retry(
    model_server: FakeServer, interrupting_model: FakeModel
) -> None:
    interrupting_model.script("All of it, after the retry.")
    first = _child(model_server, CUT_CHILD)
    assert_reported("anthropic", first, cut_error("anthropic"))
    second = _child(model_server, CUT_CHILD)
    assert second["error"] is None
    assert "".join(second["deltas"]) == "All of it, after the retry."
    assert [c.outcome for c in interrupting_model.log] == ["cut", "completed"]


# --- the wire, read by hand -------------------------------------------------------------

STREAM = json.dumps(
    {"model": "claude-test-1", "max_tokens": 9, "stream": True, "messages": []}
).encode()


def _post(sock: socket.socket, body: bytes = STREAM, path: str = "/v1/messages") -> None:
    head = (
        f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    )
    sock.sendall(head.encode() + body)


def _read_until(sock: socket.socket, marker: bytes, got: bytes = b"") -> bytes:
    while marker not in got:
        more = sock.recv(65536)
        if not more:
            return got
        got += more
    return got


def _connect(server: FakeServer) -> socket.socket:
    sock = socket.create_connection((server.host, server.port))
    sock.settimeout(CHILD_TIMEOUT)
    return sock


def test_events_are_flushed_one_by_one_while_the_rest_is_held(model_server: FakeServer) -> None:
    fake = model_server.model
    fake.script(Reply.text("first second third")).block(after_events=2)
    with _connect(model_server) as sock:
        _post(sock)
        assert fake.wait_blocked(timeout=CHILD_TIMEOUT)
        held = b""
        while held.count(b"\n\n\r\n") < 2:  # two events, each ending its chunk
            held = _read_until(sock, b"\n\n\r\n", held + sock.recv(65536))
        fake.release()
        whole = _read_until(sock, b"\r\n0\r\n\r\n", held)
    head, _, body = held.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower()
    assert b"content-type: text/event-stream" in head.lower()
    # Sent while the rest was held back: two events, one chunk each.
    assert [c.split(b"\n")[0] for c in _dechunked(body)] == [
        b"event: message_start",
        b"event: content_block_start",
    ]
    chunks = _dechunked(whole.partition(b"\r\n\r\n")[2])
    assert all(c.count(b"\n\n") == 1 and c.endswith(b"\n\n") for c in chunks)
    assert chunks[-1].startswith(b"event: message_stop")
    assert [c.outcome for c in fake.log] == ["completed"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "json"])
def test_a_call_is_logged_before_its_last_chunk_goes_out(
    model_server: FakeServer, stream: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A client may stop at its protocol's last event without reading the chunked
    body's terminating chunk (the OpenAI SDK stops at ``[DONE]``) and read the fake's
    log at once: the call is logged before that event leaves the server, so it is
    there (a served OpenAI stream's call was found missing from the log under load)."""
    order: list[str] = []
    write, finish = _Connection._write, Delivery._finish

    def written(self: _Connection, data: bytes) -> None:
        order.append("message_stop" if b"message_stop" in data else "bytes")
        write(self, data)

    def logged(self: Delivery) -> None:
        order.append("logged")
        finish(self)

    monkeypatch.setattr(_Connection, "_write", written)
    monkeypatch.setattr(Delivery, "_finish", logged)
    fake = model_server.model
    fake.script(Reply.text("first second third"))
    body = STREAM if stream else STREAM.replace(b'"stream": true', b'"stream": false')
    with _connect(model_server) as sock:
        _post(sock, body)
        if stream:
            whole = _read_until(sock, b"\r\n0\r\n\r\n")
            assert _dechunked(whole.partition(b"\r\n\r\n")[2])[-1].startswith(
                b"event: message_stop"
            )
        else:
            head, _, whole = _read_until(sock, b"\r\n\r\n").partition(b"\r\n\r\n")
            size = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            while len(whole) < size:
                whole += sock.recv(65536)
            assert json.loads(whole)["content"][0]["text"] == "first second third"
    assert [c.outcome for c in fake.log] == ["completed"]
    last = "message_stop" if stream else "bytes"
    position = len(order) - 1 - order[::-1].index(last)  # the last event's write
    assert order.index("logged") == position - 1, order
    if stream:
        assert order[-1] == "bytes"  # the terminating chunk


def _dechunked(body: bytes) -> list[bytes]:
    """The chunks of a chunked HTTP/1.1 body, as sent."""
    chunks = []
    while True:
        size, _, body = body.partition(b"\r\n")
        if not size or int(size, 16) == 0:
            return chunks
        chunks.append(body[: int(size, 16)])
        body = body[int(size, 16) + 2 :]


def test_keep_alive_serves_several_requests_on_one_connection(model_server: FakeServer) -> None:
    model_server.model.script("one", "two", "three")
    with _connect(model_server) as sock:
        for _ in range(3):
            _post(sock)
            assert _read_until(sock, b"0\r\n\r\n").endswith(b"0\r\n\r\n")
    assert [c.outcome for c in model_server.model.log] == ["completed"] * 3


@pytest.mark.parametrize(
    "held",
    [
        pytest.param({"fault": Fault.stall(after_events=2)}, id="stall"),
        pytest.param({}, id="block"),
    ],
)
def test_a_client_that_hangs_up_while_held_is_logged_cancelled(
    model_server: FakeServer, held: dict[str, Fault]
) -> None:
    fake = model_server.model
    fake.script(Reply.text("never all of it", **held))
    if not held:  # held before its first byte: the reply is never taken
        fake.block().configure(check_unused=False)
    with _connect(model_server) as sock:
        _post(sock)
        assert fake.wait_blocked(timeout=CHILD_TIMEOUT)
    # The server notices the hang-up on its own, without a release().
    _wait_for(lambda: len(fake.log) == 1)
    assert [c.outcome for c in fake.log] == ["cancelled"]
    fake.release()  # a hold the test never released is a problem of its own


def _wait_for(condition: Any) -> None:
    """Wait for something the server's threads do; a bound on waiting, not on speed."""
    import threading

    done = threading.Event()
    for _ in range(CHILD_TIMEOUT * 100):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("the server never got there")


def test_a_timeout_holds_the_socket_until_the_client_gives_up(model_server: FakeServer) -> None:
    import httpx

    model_server.model.script(Reply.text("late", fault=Fault.timeout()))
    # httpx on a real socket (allowed: loopback) gives up after its own read timeout.
    timeout = httpx.Timeout(CHILD_TIMEOUT, read=0.5)  # only the wait for a response is short
    with pytest.raises(httpx.ReadTimeout), httpx.Client(timeout=timeout) as client:
        client.post(f"{model_server.url}/v1/messages", content=STREAM)
    assert [c.outcome for c in model_server.model.log] == ["timeout"]


def test_a_call_after_the_script_ran_out_answers_500_and_fails_the_fake() -> None:
    fake = FakeModel("only one")
    server = fake.listen()
    try:
        with _connect(server) as sock:
            _post(sock)
            _read_until(sock, b"0\r\n\r\n")
            _post(sock)
            got = _read_until(sock, b"}}")
    finally:
        server.close()
    assert got.startswith(b"HTTP/1.1 500 ")
    assert b"script ran out" in got
    with pytest.raises(AssertionError, match="script ran out"):
        fake.verify()


def test_closing_the_server_lets_held_calls_go_and_leaks_no_thread() -> None:
    import threading

    before = set(threading.enumerate())
    fake = FakeModel(Reply.text("held", fault=Fault.stall(after_events=1)), check_unused=False)
    with fake.listen() as server:
        held, idle = _connect(server), _connect(server)
        _post(held)
        assert fake.wait_blocked(timeout=CHILD_TIMEOUT)
    held.close()
    idle.close()
    assert set(threading.enumerate()) - before == set()
    assert [c.outcome for c in fake.log] == ["cancelled"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((server.host, server.port), timeout=CHILD_TIMEOUT).close()


# --- curl ----------------------------------------------------------------------------------


@pytest.fixture
def curl() -> str:
    found = shutil.which("curl")
    if found is None:
        pytest.skip("curl is not installed")
    return found


def _curl(curl: str, server: FakeServer, body: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [curl, "-sSN", "-H", "content-type: application/json", "--data-binary", "@-",
         f"{server.url}/v1/chat/completions"],
        input=body,
        capture_output=True,
        timeout=CHILD_TIMEOUT,
        check=False,
    )  # fmt: skip


def test_curl_reads_the_stream_and_sees_the_cut(curl: str, model_server: FakeServer) -> None:
    body = json.dumps({"model": "gpt-test-1", "stream": True, "messages": []}).encode()
    model_server.model.script("Hi curl.", Reply.text("cut short", fault=Fault.cut(after_events=1)))
    whole = _curl(curl, model_server, body)
    assert whole.returncode == 0, whole.stderr
    assert whole.stdout.rstrip().endswith(b"data: [DONE]")
    cut = _curl(curl, model_server, body)
    assert cut.returncode == 18, cut.stderr  # CURLE_PARTIAL_FILE: the transfer was cut
    assert cut.stdout.count(b"data: ") == 1
    assert [c.outcome for c in model_server.model.log] == ["completed", "cut"]


# --- the fixture, as a test suite uses it -----------------------------------------------

FIXTURE_SUITE = """
import json, socket, threading
from pytest_agentreplay import Fault, Reply

BODY = json.dumps({"model": "m", "max_tokens": 5, "stream": True, "messages": []}).encode()
HEAD = b"POST /v1/messages HTTP/1.1\\r\\nhost: x\\r\\ncontent-length: %d\\r\\n\\r\\n" % len(BODY)
LEFT = {}

def test_leaves_a_call_held(model_server):
    model_server.model.script(Reply.text("never", fault=Fault.stall(after_events=1)))
    LEFT["client"] = socket.create_connection((model_server.host, model_server.port))
    LEFT["client"].sendall(HEAD + BODY)
    assert model_server.model.wait_blocked(timeout=300)
    LEFT["server"], LEFT["fake"] = model_server, model_server.model

def test_teardown_hung_up_and_closed_everything():
    LEFT["client"].close()
    assert LEFT["server"].closed
    assert [c.outcome for c in LEFT["fake"].log] == ["cancelled"]
    assert not [t for t in threading.enumerate() if t.name.startswith("agentreplay-")]

def test_a_call_past_the_script_fails_the_test(model_server):
    with socket.create_connection((model_server.host, model_server.port)) as client:
        client.sendall(HEAD + BODY)
        assert client.recv(12) == b"HTTP/1.1 500"
"""


def test_the_fixture_closes_its_server_and_fails_on_surprises(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=FIXTURE_SUITE)
    result = pytester.runpytest_subprocess(
        "-W", "error", "-p", "no:randomly", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*model_server: received a model call after its script ran out*"])


AGENTS_CHILD = """
    import json
    from agents import Agent, Runner, function_tool

    @function_tool
    def weather(city: str) -> str:
        return f"rain in {city}"

    agent = Agent(name="forecaster", instructions="Answer briefly.", tools=[weather])
    result = Runner.run_sync(agent, "Weather in Leeds?")
    print(json.dumps({"final": result.final_output}))
"""


def test_an_openai_agents_run_in_a_child_uses_the_fake(model_server: FakeServer) -> None:
    model_server.model.script(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Rain in Leeds.")
    )
    seen = _child(model_server, AGENTS_CHILD, OPENAI_AGENTS_DISABLE_TRACING="1")
    assert seen == {"final": "Rain in Leeds."}
    log = model_server.model.log
    assert [(c.provider, c.outcome) for c in log] == [("openai_responses", "completed")] * 2
    invariants.assert_every_tool_call_answered(RunLog.from_fake(model_server.model))
    invariants.assert_no_live_calls()


def test_model_server_refuses_a_test_that_blocks_loopback(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.agentreplay(block_loopback=True)
        def test_child(model_server):
            pass
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*model_server listens on loopback, which this test blocks*"])
