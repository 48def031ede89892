"""Building a client in replay mode skips the SSL context; a real connection is unchanged."""

from __future__ import annotations

import http.server
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest
import trustme

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.transport.lazy_pool import is_deferred
from pytest_agentreplay.transport.router import Router, intercepting


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"ok {self.path}".encode()
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def https_server(ca: trustme.CA) -> Iterator[str]:
    """A real HTTPS server on 127.0.0.1 with a certificate from a test-made CA."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"https://localhost:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def ca_file(ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return str(path)


@pytest.fixture
def ssl_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every CA bundle loaded into an SSL context while the test runs."""
    loads: list[str] = []
    original = ssl.SSLContext.load_verify_locations

    def spy(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> None:
        loads.append(str(args or kwargs))
        original(self, *args, **kwargs)

    monkeypatch.setattr(ssl.SSLContext, "load_verify_locations", spy)
    return loads


def _outcome(fn: Callable[[], str]) -> str:
    try:
        return fn()
    except Exception as exc:  # the exact failure is part of the behaviour compared
        return f"{type(exc).__module__}.{type(exc).__name__}: {exc}"


def _replay_router() -> Router:
    return Router(test="lazy", block=True)


@pytest.mark.parametrize("module", [httpx, httpx2], ids=["httpx", "httpx2"])
@pytest.mark.parametrize(
    "config", ["ca-file", "verify-false", "default", "ssl-context", "ssl-cert-file-env"]
)
def test_client_built_in_replay_connects_exactly_like_one_built_outside(
    module: Any,
    config: str,
    https_server: str,
    ca_file: str,
    ca: trustme.CA,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def make() -> Any:
        if config == "ca-file":
            return module.Client(verify=ssl.create_default_context(cafile=ca_file))
        if config == "verify-false":
            return module.Client(verify=False)
        if config == "ssl-context":
            context = ssl.create_default_context()
            ca.configure_trust(context)
            return module.Client(verify=context)
        if config == "ssl-cert-file-env":
            monkeypatch.setenv("SSL_CERT_FILE", ca_file)
        return module.Client()

    eager = make()
    with intercepting(_replay_router()):
        deferred = make()
        assert is_deferred(deferred._transport)
        in_replay = _outcome(lambda: deferred.get(https_server + "/a").text)
    eager_outcome = _outcome(lambda: eager.get(https_server + "/a").text)
    assert in_replay == eager_outcome
    if config in ("ca-file", "verify-false", "ssl-context"):
        assert in_replay == "ok /a"
    if config == "default":
        assert "CERTIFICATE_VERIFY_FAILED" in in_replay, "a test CA is not trusted by default"
    eager.close()
    deferred.close()


def test_constructing_sdk_clients_in_replay_loads_no_ca_bundle(
    scripted_model: FakeModel, ssl_loads: list[str]
) -> None:
    clients = [
        anthropic.Anthropic(api_key="k"),
        openai.OpenAI(api_key="k"),
        httpx.Client(),
        httpx2.Client(),
        anthropic.AsyncAnthropic(api_key="k"),
        httpx2.AsyncClient(),
    ]
    assert ssl_loads == []
    scripted_model.script(Reply.text("served"))
    assert (
        clients[0]
        .messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
        .content[0]
        .text
        == "served"
    )
    assert ssl_loads == [], "a replayed call never needs a connection"
    for client in clients[:4]:
        client.close()
    assert ssl_loads == [], "closing an unused client does not build its pool"


def test_outside_replay_clients_are_built_eagerly(ssl_loads: list[str]) -> None:
    with httpx2.Client() as client:
        assert not is_deferred(client._transport)
    assert ssl_loads


def test_record_mode_builds_pools_eagerly(ssl_loads: list[str]) -> None:
    with intercepting(Router(test="record", block=False)), httpx2.Client() as client:
        assert not is_deferred(client._transport)
    assert ssl_loads


def test_deferred_client_used_after_the_test_still_works(https_server: str, ca_file: str) -> None:
    with intercepting(_replay_router()):
        client = httpx2.Client(verify=ssl.create_default_context(cafile=ca_file))
    assert is_deferred(client._transport)
    assert client.get(https_server + "/later").text == "ok /later"
    assert not is_deferred(client._transport)
    client.close()


@pytest.mark.anyio
async def test_async_client_built_in_replay_connects_with_its_settings(
    https_server: str, ca_file: str
) -> None:
    with intercepting(_replay_router()):
        async with httpx2.AsyncClient(verify=ssl.create_default_context(cafile=ca_file)) as client:
            assert is_deferred(client._transport)
            assert (await client.get(https_server + "/async")).text == "ok /async"
        async with httpx2.AsyncClient() as untrusting:
            with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await untrusting.get(https_server + "/async")


@pytest.mark.agentreplay(allow_hosts=["upstream.test"])
def test_proxy_settings_are_kept(scripted_model: FakeModel) -> None:
    class Proxy(_Handler):
        """An HTTP proxy: answers with the absolute URL it was asked for."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    try:
        proxy = f"http://127.0.0.1:{server.server_address[1]}"
        with httpx2.Client(proxy=proxy) as client:
            assert is_deferred(client._transport)
            assert client.get("http://upstream.test/x").text == "ok http://upstream.test/x"
    finally:
        server.shutdown()
        server.server_close()


def test_racing_threads_build_the_pool_once(https_server: str, ca_file: str) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with intercepting(_replay_router()):
        client = httpx2.Client(verify=ssl.create_default_context(cafile=ca_file))
    transport = client._transport
    with ThreadPoolExecutor(8) as pool:
        texts = list(pool.map(lambda i: client.get(f"{https_server}/{i}").text, range(16)))
    assert texts == [f"ok /{i}" for i in range(16)]
    assert len({id(transport._pool) for _ in range(3)}) == 1
    client.close()


def test_lazy_module_documents_itself() -> None:
    from pytest_agentreplay.transport import lazy_pool as lazy

    assert "SSL context" in (lazy.__doc__ or "")
    assert Path(lazy.__file__).name == "lazy_pool.py"


def test_transports_built_before_the_patch_keep_their_pool() -> None:
    with intercepting(_replay_router()):
        pass  # installs the patch
    for cls in (httpx.HTTPTransport, httpx2.AsyncHTTPTransport):
        old = cls.__new__(cls)
        sentinel = object()
        old.__dict__["_pool"] = sentinel  # what the unpatched __init__ leaves behind
        assert old._pool is sentinel
        assert not is_deferred(old)
