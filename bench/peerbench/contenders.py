"""The contenders: what each tool is, and how it serves the workloads' recorded data.

:class:`Contender` is the contract; vcrpy (+ pytest-recording), respx, pytest-httpx, a
bare MockTransport (the floor) and its reference variants implement it here. The plugin's
own contender is in :mod:`.agentreplay`, W4's SDK variants in :mod:`.sdk_contenders`, and
:mod:`.registry` lists them all."""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any

from .config import FILTER_HEADERS, VCR_DEFAULT_MATCH_ON, now
from .data import ScalingFixture, StreamFixture

# ---------------------------------------------------------------------------------
# Contenders
# ---------------------------------------------------------------------------------
# A contender serves the same recorded data through its own mechanism.  `hx` is the
# HTTP stack module (httpx or httpx2) the consumer uses.  Every *_session() method is
# a context manager yielding an `hx.Client` whose requests are answered by the
# contender; entering it is timed as "load"/"setup" (e.g. parsing a cassette), the
# requests made with the client are timed separately.  Sessions build their client
# with timed_client(), which books the client's construction into stats["client_ctor_s"]
# (a default hx.Client() builds an SSL context: ~20 ms, more than most cassette loads;
# it is reported apart from "load").  Unimplemented methods raise NotImplementedError
# and the cell is reported as n/a.
#
# Workloads a contender can take part in:
#   "scaling"  W1: scaling_prepare() + scaling_session()
#   "stream"   W2/W3: stream_prepare() + stream_session()
#   "record"   W6: record_session()
#   "pytest"   W4: pytest_project()


class Contender:
    name = "?"
    description = ""
    workloads: frozenset[str] = frozenset()
    anchor = False  # measured in every worker process as a cross-process reference
    in_quick = True  # part of a --quick run unless named with --contenders
    in_full = True  # part of a full run unless named with --contenders
    # W4 rows that are read for a ratio far from any target (tools 3-10x slower than the
    # floor, explanatory references) get fewer timed rounds: they are the slowest rows,
    # and the full run must stay under 10 minutes
    w4_rounds: int | None = None
    # W4 runs every project with pytest's plugin autoloading off, loading only the pytest
    # plugins (entry-point names) of the tool under test: the environment holds every
    # peer's plugin, and the others' startup and autouse fixtures are no part of a tool's
    # cost (they took 0.4 s of a 0.6 s pytest startup and 0.2 ms of each test's setup)
    w4_plugins: tuple[str, ...] = ()
    w4_autoload = False  # the "mock+autoload" reference: every installed plugin loaded
    # W4: whether the tests build a default client (what "beyond ctor" subtracts)
    builds_default_client = True

    def unavailable_reason(self) -> str | None:
        """None if usable, else a short reason shown in the report."""
        return None

    def world(self, stack: str) -> str | None:
        """Which process world can serve `stack` ("httpx"/"httpx2"): "native", "alias" or None."""
        return "native"

    # -- W1 --------------------------------------------------------------------
    def scaling_prepare(self, workdir: Path, fx: ScalingFixture, hx) -> Any:
        """Untimed.  Write whatever the contender loads at test time (e.g. a cassette)."""
        raise NotImplementedError

    def scaling_session(self, prepared: Any, fx: ScalingFixture, hx, stats: dict | None = None):
        """Timed enter = load.  Yield an hx.Client replaying fx.interactions in order."""
        raise NotImplementedError

    # -- W2/W3 -----------------------------------------------------------------
    def stream_prepare(self, workdir: Path, fx: StreamFixture, hx) -> Any:
        return None

    def stream_session(self, prepared: Any, fx: StreamFixture, hx, stats: dict | None = None):
        """Timed enter = setup.  Yield an hx.Client whose POST fx.url returns fx.body as SSE."""
        raise NotImplementedError

    # -- W6 --------------------------------------------------------------------
    def record_session(self, workdir: Path, fx: StreamFixture, hx, upstream):
        """Yield an hx.Client that records while forwarding to transport `upstream`."""
        raise NotImplementedError

    # -- W4 --------------------------------------------------------------------
    def pytest_project(self, projdir: Path, fx: ScalingFixture) -> list[str]:
        """Write a pytest project with fx.n tests (one replayed POST each); return extra pytest args."""
        raise NotImplementedError


def timed_client(hx, stats: dict | None, **kwargs):
    """hx.Client(**kwargs), its construction time booked into stats["client_ctor_s"]."""
    t = now()
    client = hx.Client(**kwargs)
    if stats is not None:
        stats["client_ctor_s"] = now() - t
    return client


def write_pytest_common(projdir: Path, fx: ScalingFixture) -> str:
    """Shared header of every generated W4 test module (same data block for all contenders)."""
    projdir.mkdir(parents=True, exist_ok=True)
    (projdir / "pytest.ini").write_text("[pytest]\n")
    reqs = [it.request_body for it in fx.interactions]
    resps = [it.response_body for it in fx.interactions]
    ids = [json.loads(it.response_body)["id"] for it in fx.interactions]
    return (
        "# generated by bench/peers.py (W4) -- do not edit\n"
        "import httpx\nimport pytest\n\n"
        f"URL = {fx.url!r}\n"
        f"HEADERS = {fx.request_headers!r}\n"
        f"RESP_HEADERS = {fx.interactions[0].response_headers!r}\n"
        f"REQ = {reqs!r}\n"
        f"RESP = {resps!r}\n"
        f"IDS = {ids!r}\n\n"
    )


class VcrpyContender(Contender):
    """vcrpy: YAML cassettes, record_mode='none' at replay (pytest-recording in W4)."""

    w4_rounds = 2
    w4_plugins = ("recording",)

    def __init__(self, name: str = "vcrpy", body_matching: bool = False):
        self.name = name
        self.body_matching = body_matching
        self.match_on = VCR_DEFAULT_MATCH_ON + (("body",) if body_matching else ())
        if body_matching:
            self.description = "vcrpy, match_on += body (order-independent prompt matching)"
            self.workloads = frozenset({"scaling"})
        else:
            self.description = "vcrpy, default match_on (method, scheme, host, port, path, query)"
            self.workloads = frozenset({"scaling", "stream", "record", "pytest"})

    def _vcr(self, record_mode: str):
        import vcr

        return vcr.VCR(
            record_mode=record_mode, match_on=self.match_on, filter_headers=FILTER_HEADERS
        )

    # Cassettes are recorded by vcrpy itself (through an hx.MockTransport upstream,
    # which vcrpy patches like any other transport), so their format is exactly
    # what a user would have on disk.
    def scaling_prepare(self, workdir, fx, hx):
        path = workdir / f"vcrpy-scaling-n{fx.n}-{fx.digest()}-{hx.__name__}.yaml"
        if not path.exists():  # shared by the default / +body variants
            lookup = {it.request_body: it for it in fx.interactions}

            def upstream(request):
                it = lookup[request.content]
                return hx.Response(200, headers=it.response_headers, content=it.response_body)

            with (
                self._vcr("all").use_cassette(str(path)),
                hx.Client(transport=hx.MockTransport(upstream)) as c,
            ):
                for it in fx.interactions:
                    c.post(fx.url, content=it.request_body, headers=fx.request_headers)
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        # the client is built first so that its SSL-context cost is not booked as cassette
        # load; vcrpy patches the transport *class*, so an existing client is intercepted too
        with timed_client(hx, stats) as client, self._vcr("none").use_cassette(str(prepared)):
            yield client

    def stream_prepare(self, workdir, fx, hx):
        path = workdir / f"vcrpy-{fx.kind}-k{fx.k}-{fx.digest}-{hx.__name__}.yaml"
        if not path.exists():

            def upstream(request):
                return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

            with (
                self._vcr("all").use_cassette(str(path)),
                hx.Client(transport=hx.MockTransport(upstream)) as c,
                c.stream("POST", fx.url, content=fx.request_body, headers=fx.request_headers) as r,
            ):
                for _ in r.iter_bytes():
                    pass
        return path

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        with timed_client(hx, stats) as client, self._vcr("none").use_cassette(str(prepared)):
            yield client

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        path = workdir / f"vcrpy-record-{fx.kind}-{time.monotonic_ns()}.yaml"
        with self._vcr("all").use_cassette(str(path)), hx.Client(transport=upstream) as client:
            yield client
        path.unlink(missing_ok=True)

    def pytest_project(self, projdir, fx):
        import httpx

        head = write_pytest_common(projdir, fx)
        (projdir / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.fixture(scope='module')\ndef vcr_config():\n"
            f"    return {{'filter_headers': {FILTER_HEADERS!r}}}\n"
        )
        tests = []
        for i in range(fx.n):
            tests.append(
                f"@pytest.mark.vcr\ndef test_{i:04d}():\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        # Record one cassette per test where pytest-recording looks for it.
        cdir = projdir / "cassettes" / "test_bench"
        cdir.mkdir(parents=True, exist_ok=True)
        for i, it in enumerate(fx.interactions):

            def upstream(request, it=it):
                return httpx.Response(200, headers=it.response_headers, content=it.response_body)

            with (
                self._vcr("all").use_cassette(str(cdir / f"test_{i:04d}.yaml")),
                httpx.Client(transport=httpx.MockTransport(upstream)) as c,
            ):
                c.post(fx.url, content=it.request_body, headers=fx.request_headers)
        return ["--record-mode=none"]


class RespxContender(Contender):
    name = "respx"
    description = "respx route returning the whole body (respx.mock / respx_mock fixture)"
    workloads = frozenset({"stream", "pytest"})
    w4_plugins = ("respx",)
    w4_rounds = 2

    def world(self, stack):
        # respx patches httpx/httpcore only; the SDKs' httpx2 is reachable via alias_httpx()
        return "native" if stack == "httpx" else "alias"

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        import respx

        with timed_client(hx, stats) as client, respx.mock(assert_all_called=False) as router:
            router.post(fx.url).mock(
                return_value=hx.Response(200, headers=fx.response_headers, content=fx.body)
            )
            yield client

    def pytest_project(self, projdir, fx):
        head = write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}(respx_mock):\n"
                f"    respx_mock.post(URL).mock(return_value=httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class PytestHttpxContender(Contender):
    name = "pytest-httpx"
    description = "pytest-httpx add_response(stream=IteratorStream(one chunk per event))"
    workloads = frozenset({"stream", "pytest"})
    w4_plugins = ("pytest_httpx",)
    w4_rounds = 2

    def world(self, stack):
        return "native" if stack == "httpx" else "alias"

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        # Outside pytest we do exactly what the `httpx_mock` fixture does: build an
        # HTTPXMock and patch HTTPTransport.handle_request.  HTTPXMock's constructor
        # and options class are private API of pytest-httpx (checked: 0.36.x).
        from pytest_httpx import HTTPXMock, IteratorStream
        from pytest_httpx._options import _HTTPXMockOptions

        mock = HTTPXMock(_HTTPXMockOptions(assert_all_responses_were_requested=False))
        mock.add_response(
            method="POST", url=fx.url, headers=fx.response_headers, stream=IteratorStream(fx.events)
        )
        real = hx.HTTPTransport.handle_request

        def handle_request(transport, request):
            return mock._handle_request(transport, request)

        client = timed_client(hx, stats)
        hx.HTTPTransport.handle_request = handle_request
        try:
            with client:
                yield client
        finally:
            hx.HTTPTransport.handle_request = real
            mock.reset()

    def pytest_project(self, projdir, fx):
        head = write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}(httpx_mock):\n"
                f"    httpx_mock.add_response(method='POST', url=URL, headers=RESP_HEADERS, content=RESP[{i}])\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockTransportContender(Contender):
    """A hand-rolled replay: plain hx.MockTransport.  The reference every tool is compared to."""

    name = "mocktransport"
    description = (
        "plain MockTransport (W1: JSON file + dict lookup by body; W2/3: one chunk per event)"
    )
    workloads = frozenset({"scaling", "stream", "pytest"})
    anchor = True
    builds_default_client = False

    def scaling_prepare(self, workdir, fx, hx):
        path = workdir / f"mock-scaling-n{fx.n}-{fx.digest()}.json"
        if not path.exists():
            path.write_text(
                json.dumps(
                    {
                        "interactions": [
                            {
                                "request": it.request_body.decode(),
                                "headers": it.response_headers,
                                "body": it.response_body.decode(),
                            }
                            for it in fx.interactions
                        ]
                    }
                )
            )
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        data = json.loads(Path(prepared).read_text())
        table = {
            d["request"].encode(): ([tuple(h) for h in d["headers"]], d["body"].encode())
            for d in data["interactions"]
        }

        def handler(request):
            headers, body = table[request.content]
            return hx.Response(200, headers=headers, content=body)

        with timed_client(hx, stats, transport=hx.MockTransport(handler)) as client:
            yield client

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        def handler(request):
            return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

        with timed_client(hx, stats, transport=hx.MockTransport(handler)) as client:
            yield client

    def pytest_project(self, projdir, fx):
        head = write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}():\n"
                f"    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client(transport=transport) as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockTransportPluginRef(MockTransportContender):
    """W4 only: the floor's project with pytest-agentreplay loaded, and not used.

    What merely having the plugin installed costs a test that does not use it (its
    import at startup, its hooks)."""

    name = "mock+agentreplay-loaded"
    description = "W4 reference: the MockTransport project with pytest-agentreplay loaded, unused"
    workloads = frozenset({"pytest"})
    anchor = False
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_plugins = ("agentreplay",)


class MockTransportAutoloadRef(MockTransportContender):
    """W4 only: the floor's project with every installed pytest plugin loaded.

    How W4 measured until 2026-11-30: the bench environment holds every peer's plugin
    (pytest-recording's autouse fixtures, respx, pytest-httpx, hypothesis, syrupy,
    anyio, xdist), and each project paid for all of them. They lengthen every run
    alike, so they flattered every ratio to the floor."""

    name = "mock+autoload"
    description = "W4 reference: the MockTransport project with every installed plugin loaded"
    workloads = frozenset({"pytest"})
    anchor = False
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_autoload = True


class MockTransportCtorRef(Contender):
    """W4 only: plain MockTransport tests that *also* build a default httpx.Client() each.

    Transport-patching tools (vcrpy, respx, pytest-httpx) need the test to use a client
    with the default transport, whose construction (SSL context, CA bundle) costs far
    more than the mocking itself.  This variant isolates that cost."""

    name = "mock+client-ctor"
    description = "W4 reference: MockTransport + one default httpx.Client() built per test"
    workloads = frozenset({"pytest"})
    in_quick = False  # a reference row: full runs only, to keep --quick well under a minute
    w4_rounds = 2

    def pytest_project(self, projdir, fx):
        head = write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"def test_{i:04d}():\n"
                f"    httpx.Client().close()  # what a default-transport client costs\n"
                f"    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    with httpx.Client(transport=transport) as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class PassThroughContender(Contender):
    """W6 only: no recorder at all, the client talks to the paced upstream directly."""

    name = "no-recorder"
    description = "direct client -> upstream, nothing recorded (W6 baseline)"
    workloads = frozenset({"record"})
    anchor = True

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        with hx.Client(transport=upstream) as client:
            yield client
