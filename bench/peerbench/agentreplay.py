"""The contender under test: pytest-agentreplay, driven through its public API.

This is the upstream baseline's ``>>> HOOK`` (``AgentReplayContender``): each method has
the contract of the :class:`~.contenders.Contender` base, and how the plugin is driven
outside pytest is in ``bench/_agentreplay_support.py``."""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import importlib.util
import time

from .contenders import Contender, timed_client, write_pytest_common


# =================================================================================
# >>> HOOK: the new contender "agentreplay" (pytest_agentreplay) goes here. <<<
#
# Fill in the methods with the plugin's public API; each has the same contract as
# in VcrpyContender above (see the Contender base class).  Methods left raising
# NotImplementedError make their cells "n/a", so this can be wired up piecemeal.
# Once importable, it runs automatically in every workload it lists; pick it alone
# with  --contenders agentreplay,mocktransport.
# =================================================================================
class AgentReplayContender(Contender):
    """pytest_agentreplay, driven as its fixtures drive it (see bench/_agentreplay_support.py).

    Cassettes are recorded *through the plugin* (its record mode, teeing recorder,
    scrubber and writer), so the files replayed are exactly what a user has on disk.
    W1/W2/W3: in process, a ``CassetteSession`` (what the ``agentreplay`` fixture
    opens) in record mode ``none`` under ``intercepting(Router(...))``; entering it is
    the timed load. The client is built *inside* that scope, as in a test, so its
    construction is lazy (no SSL context: issue 10) -- see the ``ctor`` column.
    W4: real pytest runs with ``@pytest.mark.agentreplay`` and default cassette paths.
    W6: records the paced upstream through the plugin's recorder.
    """

    name = "agentreplay"
    description = (
        "pytest_agentreplay: CassetteSession replay (W1-W3), @pytest.mark.agentreplay (W4)"
    )
    workloads = frozenset({"scaling", "stream", "record", "pytest"})
    w4_plugins = ("agentreplay",)

    def unavailable_reason(self):
        try:
            importlib.import_module("pytest_agentreplay")
        except ImportError as e:
            return f"pytest_agentreplay cannot be imported ({type(e).__name__}: {e})"
        return None

    def world(self, stack):
        return "native"  # the plugin patches httpx and httpx2 transports itself

    def scaling_prepare(self, workdir, fx, hx):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-scaling-n{fx.n}-{fx.digest()}-{hx.__name__}.yaml"
        if not path.exists():
            lookup = {it.request_body: it for it in fx.interactions}

            def upstream(request):
                it = lookup[request.content]
                return hx.Response(200, headers=it.response_headers, content=it.response_body)

            ar.record_exchanges(
                hx,
                path,
                upstream,
                [
                    lambda c, it=it: c.post(
                        fx.url, content=it.request_body, headers=fx.request_headers
                    )
                    for it in fx.interactions
                ],
            )
        return path

    @contextlib.contextmanager
    def scaling_session(self, prepared, fx, hx, stats=None):
        import _agentreplay_support as ar

        with ar.replaying(prepared), timed_client(hx, stats) as client:
            yield client

    def stream_prepare(self, workdir, fx, hx):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-{fx.kind}-k{fx.k}-{fx.digest}-{hx.__name__}.yaml"
        if not path.exists():

            def upstream(request):
                return hx.Response(200, headers=fx.response_headers, content=iter(fx.events))

            def send(client):
                with client.stream(
                    "POST", fx.url, content=fx.request_body, headers=fx.request_headers
                ) as r:
                    for _ in r.iter_bytes():
                        pass

            ar.record_exchanges(hx, path, upstream, [send])
        return path

    @contextlib.contextmanager
    def stream_session(self, prepared, fx, hx, stats=None):
        import _agentreplay_support as ar

        with ar.replaying(prepared), timed_client(hx, stats) as client:
            yield client

    @contextlib.contextmanager
    def record_session(self, workdir, fx, hx, upstream):
        import _agentreplay_support as ar

        path = workdir / f"agentreplay-record-{fx.kind}-{time.monotonic_ns()}.yaml"
        with (
            ar.recording(path),
            hx.Client(transport=ar.upstream_transport(hx, upstream)) as client,
        ):
            yield client
        path.unlink(missing_ok=True)

    def pytest_project(self, projdir, fx):
        import _agentreplay_support as ar
        import httpx

        head = write_pytest_common(projdir, fx)
        tests = []
        for i in range(fx.n):
            tests.append(
                f"@pytest.mark.agentreplay\ndef test_{i:04d}():\n"
                f"    with httpx.Client() as client:\n"
                f"        r = client.post(URL, content=REQ[{i}], headers=HEADERS)\n"
                f"    assert r.json()['id'] == IDS[{i}]\n"
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        # Record one cassette per test where the plugin looks for it by default.
        cdir = projdir / "cassettes" / "test_bench"
        for i, it in enumerate(fx.interactions):

            def upstream(request, it=it):
                return httpx.Response(200, headers=it.response_headers, content=it.response_body)

            ar.record_exchanges(
                httpx,
                cdir / f"test_{i:04d}.yaml",
                upstream,
                [
                    lambda c, it=it: c.post(
                        fx.url, content=it.request_body, headers=fx.request_headers
                    )
                ],
            )
        return []
