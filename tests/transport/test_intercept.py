"""Interception of httpx and httpx2, scoping and nesting, and the egress guard."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import anyio
import httpx
import httpx2
import pytest

from pytest_agentreplay import EgressBlocked, FakeModel, Fault, Reply, sse
from pytest_agentreplay.transport.router import Router, active_router, intercepting

BODY = {
    "model": "m",
    "max_tokens": 9,
    "stream": True,
    "messages": [{"role": "user", "content": "hi"}],
}
URL = "https://api.anthropic.com/v1/messages"


@pytest.fixture
def loopback_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 answering every GET with ``pong``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "4")
            self.end_headers()
            self.wfile.write(b"pong")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


# --- both module families ------------------------------------------------------------


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_sync_clients_of_both_families_are_served(
    module: object, scripted_model: FakeModel
) -> None:
    scripted_model.script(Reply.text("from the fake"))
    with module.Client() as client, client.stream("POST", URL, json=BODY) as resp:  # type: ignore[attr-defined]
        assert resp.headers["content-type"].startswith("text/event-stream")
        chunks = list(resp.iter_bytes())
    events = sse.decode(b"".join(chunks)).events
    assert len(chunks) == len(events), "one network chunk per event by default"
    assert events[0].event == "message_start"
    assert events[-1].event == "message_stop"


@pytest.mark.anyio
@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
async def test_async_clients_of_both_families_are_served(
    module: object, scripted_model: FakeModel
) -> None:
    scripted_model.script(Reply.text("async fake"))
    async with module.AsyncClient() as client:  # type: ignore[attr-defined]
        resp = await client.post(
            "https://api.openai.com/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": "x"}]},
        )
    assert resp.json()["choices"][0]["message"]["content"] == "async fake"


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_faults_raise_the_exception_of_the_clients_own_family(
    module: object, scripted_model: FakeModel
) -> None:
    other = httpx2 if module is httpx else httpx
    scripted_model.script(Reply.text("a b c", fault=Fault.cut(after_events=2)), Fault.timeout())
    with module.Client() as client:  # type: ignore[attr-defined]
        with (
            pytest.raises(module.RemoteProtocolError) as cut,
            client.stream("POST", URL, json=BODY) as resp,
        ):  # type: ignore[attr-defined]
            resp.read()
        assert not isinstance(cut.value, other.RemoteProtocolError)
        with pytest.raises(module.ReadTimeout):  # type: ignore[attr-defined]
            client.post(URL, json={**BODY, "stream": False})


def test_time_to_first_chunk_does_not_wait_for_the_whole_stream(scripted_model: FakeModel) -> None:
    scripted_model.event_delay = 0.01
    scripted_model.script(Reply.text(" ".join(["word"] * 40)))
    with httpx2.Client() as client, client.stream("POST", URL, json=BODY) as resp:
        chunks = resp.iter_bytes()
        first = next(chunks)
        assert b"message_start" in first
        assert scripted_model.log == [], "the call is still streaming"
        rest = b"".join(chunks)
    assert b"message_stop" in rest
    assert scripted_model.log[0].outcome == "completed"


# --- scoping ----------------------------------------------------------------------


def test_nested_scopes_restore_the_outer_router() -> None:
    outer, inner = Router(test="outer"), Router(test="inner")
    with intercepting(outer):
        with intercepting(inner):
            assert active_router() is inner
        assert active_router() is outer
    assert active_router() is None


def test_scope_is_cleaned_up_when_the_block_raises() -> None:
    router = Router(test="boom")
    with pytest.raises(RuntimeError), intercepting(router):
        raise RuntimeError("test failed")
    assert active_router() is None


def test_inner_scope_leaked_by_an_interrupt_does_not_leak_past_the_outer() -> None:
    outer, inner = Router(test="outer"), Router(test="inner")
    with intercepting(outer):
        scope = intercepting(inner)
        scope.__enter__()  # never exited, as after a KeyboardInterrupt
    assert active_router() is inner
    scope.__exit__(None, None, None)
    assert active_router() is None


def test_nested_fakes_newest_wins_and_outer_resumes() -> None:
    with FakeModel(Reply.text("outer 1"), Reply.text("outer 2")) as outer:
        with FakeModel(Reply.text("inner")) as inner:
            assert (
                httpx2.post(URL, json={**BODY, "stream": False}).json()["content"][0]["text"]
                == "inner"
            )
        assert (
            httpx2.post(URL, json={**BODY, "stream": False}).json()["content"][0]["text"]
            == "outer 1"
        )
        assert (
            httpx2.post(URL, json={**BODY, "stream": False}).json()["content"][0]["text"]
            == "outer 2"
        )
    assert (len(outer.log), len(inner.log)) == (2, 1)


def test_without_a_router_transports_are_untouched(loopback_server: str) -> None:
    assert active_router() is None
    assert httpx2.get(loopback_server).text == "pong"
    assert httpx.get(loopback_server).text == "pong"


# --- egress guard -------------------------------------------------------------------


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
def test_unserved_host_is_blocked_naming_method_url_host_and_test(
    module: object, scripted_model: FakeModel, request: pytest.FixtureRequest
) -> None:
    with pytest.raises(EgressBlocked) as info:
        module.post("https://example.org/api?q=1", json={})  # type: ignore[attr-defined]
    message = str(info.value)
    assert "POST https://example.org/api?q=1" in message
    assert "'example.org'" in message
    assert request.node.nodeid in message


@pytest.mark.anyio
async def test_unserved_host_is_blocked_for_async_clients(scripted_model: FakeModel) -> None:
    async with httpx2.AsyncClient() as client:
        with pytest.raises(EgressBlocked, match="GET https://example.org/"):
            await client.get("https://example.org/")


def test_blocked_call_is_not_retried_or_wrapped_by_the_sdk(scripted_model: FakeModel) -> None:
    import anthropic

    client = anthropic.Anthropic(api_key="k", base_url="https://llm.unknown.test", max_retries=3)
    with pytest.raises(EgressBlocked, match="llm.unknown.test"):
        client.messages.create(model="m", max_tokens=1, messages=[{"role": "user", "content": "x"}])


def test_loopback_stays_allowed(scripted_model: FakeModel, loopback_server: str) -> None:
    assert httpx2.get(loopback_server).text == "pong"
    assert httpx.get(loopback_server).text == "pong"


@pytest.mark.agentreplay(block_loopback=True)
def test_loopback_can_be_blocked(scripted_model: FakeModel, loopback_server: str) -> None:
    with pytest.raises(EgressBlocked, match="127.0.0.1"):
        httpx2.get(loopback_server)


@pytest.mark.agentreplay(allow_hosts=["*.allowed.test"])
def test_allowed_hosts_go_out_live(scripted_model: FakeModel) -> None:
    # No network here: the call leaves the guard and fails in DNS, as a live call would.
    with pytest.raises(httpx2.ConnectError):
        httpx2.get("https://api.allowed.test/")


def test_socket_level_egress_is_blocked(scripted_model: FakeModel) -> None:
    with pytest.raises(EgressBlocked, match="DNS lookup of example.net"):
        socket.create_connection(("example.net", 443), timeout=1)
    with (
        socket.socket() as sock,
        pytest.raises(EgressBlocked, match="socket connect to 203.0.113.9:80"),
    ):
        sock.connect(("203.0.113.9", 80))
    with pytest.raises(EgressBlocked, match="example.net"):
        urllib.request.urlopen("http://example.net/", timeout=1)


def test_socket_guard_lets_loopback_and_unix_sockets_through(
    scripted_model: FakeModel, loopback_server: str, tmp_path: object
) -> None:
    port = int(loopback_server.rsplit(":", 1)[1])
    socket.create_connection(("localhost", port), timeout=1).close()
    a, b = socket.socketpair()
    a.close()
    b.close()


@pytest.mark.anyio
async def test_worker_threads_are_blocked_too(scripted_model: FakeModel) -> None:
    def call() -> None:
        httpx2.get("https://example.org/")

    with ThreadPoolExecutor(1) as pool, pytest.raises(EgressBlocked):
        pool.submit(call).result()
    with pytest.raises(EgressBlocked):
        await asyncio.to_thread(call)
    with pytest.raises(EgressBlocked):
        await anyio.to_thread.run_sync(call)
    assert len(active_router().blocked) == 3  # type: ignore[union-attr]


@pytest.mark.parametrize("send", ["sendto", "sendmsg"])
def test_socket_guard_passes_datagrams_to_loopback_through_whole(
    scripted_model: FakeModel, send: str
) -> None:
    """The guarded ``sendto`` / ``sendmsg`` hand every argument on: a datagram to an
    allowed address arrives as sent."""
    assert getattr(socket.socket, send).__module__.startswith("pytest_agentreplay.transport.")
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver,
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender,
    ):
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(5)
        address = receiver.getsockname()
        if send == "sendto":
            sent = sender.sendto(b"ping", 0, address)
        else:
            sent = sender.sendmsg([b"pi", b"ng"], [], 0, address)
        assert sent == 4
        data, (_, port) = receiver.recvfrom(16)
        assert (data, port) == (b"ping", sender.getsockname()[1])
