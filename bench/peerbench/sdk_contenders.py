"""W4 with the anthropic SDK (issue 10): every test builds its own SDK client, as people
write tests, against references that inject a MockTransport."""

from __future__ import annotations

import json
from pathlib import Path

from .agentreplay import AgentReplayContender
from .config import API_KEY, FAKE_BASE, FILTER_HEADERS
from .contenders import Contender, write_pytest_common
from .data import ScalingFixture

# ---------------------------------------------------------------------------------
# W4 with the anthropic SDK (issue 10): every test builds its own SDK client, as
# people write tests.  A default anthropic.Anthropic() builds an httpx2 client with
# an SSL context (~20 ms); the "mock-anthropic" reference injects a MockTransport
# http_client instead (no SSL context), "mock+ctor-anthropic" also builds a default
# client per test, to show what that costs.
# ---------------------------------------------------------------------------------
SDK_SUFFIX = "-anthropic"


# messages.create() keyword arguments of request i (this SDK version takes no `temperature`)
_SDK_KEYS = ("model", "max_tokens", "system", "messages")


def _sdk_args(body: bytes) -> dict:
    return {k: v for k, v in json.loads(body).items() if k in _SDK_KEYS}


def _sdk_head(projdir: Path, fx: ScalingFixture) -> str:
    return (
        write_pytest_common(projdir, fx) + "import json\n\nimport anthropic\nimport httpx2\n\n"
        f"BASE = {FAKE_BASE!r}\nKEY = {API_KEY!r}\n"
        f"ARGS = [{{k: v for k, v in json.loads(r).items() if k in {_SDK_KEYS!r}}} for r in REQ]\n\n"
    )


def _sdk_call(i: int, client: str = "client") -> str:
    return (
        f"    message = {client}.messages.create(**ARGS[{i}])\n    assert message.id == IDS[{i}]\n"
    )


def _sdk_upstream(fx: ScalingFixture, hx):
    lookup = {it.request_body: it for it in fx.interactions}
    by_text = {json.loads(k)["messages"][0]["content"]: v for k, v in lookup.items()}

    def upstream(request):
        it = by_text[json.loads(request.content)["messages"][0]["content"]]
        return hx.Response(200, headers=it.response_headers, content=it.response_body)

    return upstream


def _sdk_record(fx: ScalingFixture, http_client, i: int) -> None:
    import anthropic

    client = anthropic.Anthropic(
        api_key=API_KEY, base_url=FAKE_BASE, max_retries=0, http_client=http_client
    )
    client.messages.create(**_sdk_args(fx.interactions[i].request_body))


class MockSdkRef(Contender):
    """W4 reference: anthropic SDK tests on a bare httpx2.MockTransport (no SSL context)."""

    name = "mock" + SDK_SUFFIX
    description = "W4 reference: anthropic.Anthropic(http_client=httpx2.Client(transport=MockTransport)) per test"
    workloads = frozenset({"pytest"})
    builds_default_client = False
    ctor = False

    def pytest_project(self, projdir, fx):
        head = _sdk_head(projdir, fx)
        tests = []
        for i in range(fx.n):
            extra = (
                "    anthropic.Anthropic(api_key=KEY, base_url=BASE).close()  # a default client\n"
                if self.ctor
                else ""
            )
            tests.append(
                f"def test_{i:04d}():\n{extra}"
                f"    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, headers=RESP_HEADERS, content=RESP[{i}]))\n"
                f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0,\n"
                f"                                 http_client=httpx2.Client(transport=transport))\n"
                + _sdk_call(i)
            )
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        return []


class MockSdkCtorRef(MockSdkRef):
    name = "mock+ctor" + SDK_SUFFIX
    # Explanatory (what a default SDK client costs per test, i.e. the plugin's lazy
    # transport switched off); run it by name: it would push a full run past 10 minutes.
    in_quick = in_full = False
    description = "W4 reference: mock-anthropic + one default anthropic.Anthropic() built per test"
    ctor = True
    builds_default_client = True


class VcrpySdkContender(Contender):
    """pytest-recording with the anthropic SDK: a default anthropic.Anthropic() per test."""

    name = "vcrpy" + SDK_SUFFIX
    description = "pytest-recording (@pytest.mark.vcr), anthropic.Anthropic() built per test"
    workloads = frozenset({"pytest"})
    w4_plugins = ("recording",)
    w4_rounds = 2
    in_quick = False  # full runs only, to keep --quick under a minute

    def pytest_project(self, projdir, fx):
        import httpx2
        import vcr

        head = _sdk_head(projdir, fx)
        (projdir / "conftest.py").write_text(
            "import pytest\n\n\n@pytest.fixture(scope='module')\ndef vcr_config():\n"
            f"    return {{'filter_headers': {FILTER_HEADERS!r}}}\n"
        )
        tests = [
            f"@pytest.mark.vcr\ndef test_{i:04d}():\n"
            f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0)\n"
            + _sdk_call(i)
            for i in range(fx.n)
        ]
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        cdir = projdir / "cassettes" / "test_bench"
        cdir.mkdir(parents=True, exist_ok=True)
        upstream = _sdk_upstream(fx, httpx2)
        for i in range(fx.n):
            with vcr.VCR(record_mode="all", filter_headers=FILTER_HEADERS).use_cassette(
                str(cdir / f"test_{i:04d}.yaml")
            ):
                _sdk_record(fx, httpx2.Client(transport=httpx2.MockTransport(upstream)), i)
        return ["--record-mode=none"]


class AgentReplaySdkContender(Contender):
    """@pytest.mark.agentreplay with the anthropic SDK: a default anthropic.Anthropic() per test."""

    name = "agentreplay" + SDK_SUFFIX
    description = "@pytest.mark.agentreplay, anthropic.Anthropic() built per test (issue 10)"
    workloads = frozenset({"pytest"})
    w4_plugins = ("agentreplay",)

    def unavailable_reason(self):
        return AgentReplayContender().unavailable_reason()

    def pytest_project(self, projdir, fx):
        import _agentreplay_support as ar
        import httpx2

        head = _sdk_head(projdir, fx)
        tests = [
            f"@pytest.mark.agentreplay\ndef test_{i:04d}():\n"
            f"    client = anthropic.Anthropic(api_key=KEY, base_url=BASE, max_retries=0)\n"
            + _sdk_call(i)
            for i in range(fx.n)
        ]
        (projdir / "test_bench.py").write_text(head + "\n\n".join(tests))
        cdir = projdir / "cassettes" / "test_bench"
        upstream = _sdk_upstream(fx, httpx2)
        for i in range(fx.n):
            with ar.recording(cdir / f"test_{i:04d}.yaml"):
                _sdk_record(
                    fx,
                    httpx2.Client(
                        transport=ar.upstream_transport(httpx2, httpx2.MockTransport(upstream))
                    ),
                    i,
                )
        return []
