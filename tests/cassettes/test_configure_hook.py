"""``pytest_agentreplay_configure`` in a conftest.py: custom scrubbers, extra secret
names, named matchers and a session-wide ``match_on``, used by record and replay."""

from __future__ import annotations

import secrets

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, interactions, results, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

CONFTEST = """
def drop_trace(interaction):
    interaction.request.headers.pop("x-trace-id", None)
    body = interaction.request.json_body
    if isinstance(body, dict) and "metadata" in body:
        body["metadata"]["customer"] = "CUSTOMER"
    return interaction


def tenant(request):
    return request.headers.get("x-tenant")


def pytest_agentreplay_configure(config, settings):
    settings.redact_headers.add("x-internal-token")
    settings.redact_body_keys.add("customer_secret")
    settings.scrubbers.append(drop_trace)
    settings.matchers["tenant"] = tenant
    settings.match_on = ("method", "path", "tenant")
"""

USER = (
    PRELUDE
    + """
@pytest.mark.agentreplay
def test_custom(agentreplay):
    sdk = client().with_options(default_headers={
        "x-internal-token": os.environ["AR_TOKEN"],
        "x-trace-id": os.environ["AR_TRACE"],
        "x-tenant": os.environ["AR_TENANT"],
    })
    message = sdk.messages.create(
        model="m", max_tokens=9, messages=[{"role": "user", "content": os.environ["AR_Q"]}],
        metadata={"user_id": "u1"},
        extra_body={"metadata": {"user_id": "u1", "customer": os.environ["AR_CUSTOMER"]},
                    "customer_secret": os.environ["AR_TOKEN"]},
    )
    report(agentreplay, answers=[message.content[0].text])
"""
)


def test_custom_scrubbers_and_matchers_from_the_configure_hook(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_user=USER)
    values = {
        "AR_TOKEN": f"internal-{secrets.token_hex(12)}",
        "AR_TRACE": f"trace-{secrets.token_hex(12)}",
        "AR_CUSTOMER": f"customer-{secrets.token_hex(12)}",
    }
    recorded = run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=echo_server.url,
        AR_TENANT="acme",
        AR_Q="first",
        **values,
    )
    recorded.assert_outcomes(passed=1)
    path = cassette(pytester, "test_custom")
    text = path.read_text()
    for name, value in values.items():
        assert value not in text, name
    assert values["AR_CUSTOMER"] in str(echo_server.requests[0]), "it was sent, and scrubbed"
    [interaction] = interactions(path)
    headers = interaction["request"]["headers"]
    assert headers["x-internal-token"] == "REDACTED"
    assert "x-trace-id" not in headers
    assert headers["x-tenant"] == "acme"
    body = interaction["request"]["json"]
    assert body["metadata"]["customer"] == "CUSTOMER"
    assert body["customer_secret"] == "REDACTED"

    # match_on from the hook: method, path and the custom "tenant" part — a different
    # question from the same tenant replays, another tenant misses, naming the part.
    same_tenant = run(pytester, AR_TENANT="acme", AR_Q="second", **values)
    same_tenant.assert_outcomes(passed=1)
    assert results(pytester)[-1] == {
        "mode": "none",
        "path": str(path),
        "sources": ["cassette"],
        "unplayed": [],
        "answers": ["echo: first"],
    }
    other_tenant = run(pytester, AR_TENANT="globex", AR_Q="first", **values)
    other_tenant.assert_outcomes(failed=1)
    other_tenant.stdout.fnmatch_lines(
        [
            "*matching on: method, path, tenant*",
            "*differs in tenant*",
            "*tenant: recorded 'acme', now 'globex'*",
        ]
    )
    assert len(echo_server.requests) == 1


def test_a_marker_match_on_names_a_custom_matcher(
    pytester: pytest.Pytester, echo_server: ProviderServer
) -> None:
    pytester.makeconftest(
        CONFTEST.replace('    settings.match_on = ("method", "path", "tenant")\n', "")
    )
    pytester.makepyfile(
        test_user=USER.replace(
            "@pytest.mark.agentreplay\n", '@pytest.mark.agentreplay(match_on=["path", "tenant"])\n'
        )
    )
    env = {"AR_TOKEN": "t" * 4, "AR_TRACE": "x", "AR_CUSTOMER": "c"}
    run(
        pytester,
        "--agentreplay-record-mode=once",
        AR_SERVER=echo_server.url,
        AR_TENANT="a",
        AR_Q="1",
        **env,
    ).assert_outcomes(passed=1)
    run(pytester, AR_TENANT="a", AR_Q="2", **env).assert_outcomes(passed=1)
    missed = run(pytester, AR_TENANT="b", AR_Q="1", **env)
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(["*matching on: path, tenant*"])
