"""Item 5: key-shaped canaries that no scrubbing rule knows by name — put in API-key
environment variables, then sent in an unknown header, in the URL path and inside a
Basic credential — are caught by the backstop on a real recording: the write is
refused, the old cassette is kept byte for byte, and the error names the field and
the variable without printing the value in any encoding.
"""

from __future__ import annotations

import base64
import secrets
from urllib.parse import quote

import pytest

from tests.cassettes._plugin_runs import PRELUDE, cassette, run
from tests.servers import ProviderServer

pytest_plugins = ["pytester"]

LEAKY = (
    PRELUDE
    + """
import base64

@pytest.mark.agentreplay
def test_leaky(agentreplay):
    canary, where = os.environ.get("AR_CANARY_API_KEY", ""), os.environ.get("AR_WHERE", "")
    url, headers = URL + "/v1/messages", {"x-api-key": KEY}
    if where == "header":
        headers["x-upstream-hint"] = canary
    elif where == "path":
        url = URL + "/tenant/" + canary + "/v1/messages"
    elif where == "basic":
        token = base64.b64encode(("svc:" + canary).encode()).decode()
        headers["x-forwarded-authorization"] = "Basic " + token
    body = {"model": "m", "max_tokens": 9,
            "messages": [{"role": "user", "content": os.environ["AR_PROMPTS"]}]}
    httpx2.post(url, json=body, headers=headers).raise_for_status()
"""
)

PLACES = {
    "header": ("interactions[[]1[]].request.headers.x-upstream-hint", "env:AR_CANARY_API_KEY"),
    "path": ("interactions[[]1[]].request.url", "env:AR_CANARY_API_KEY"),
    "basic": (
        "interactions[[]1[]].request.headers.x-forwarded-authorization",
        "env:AR_CANARY_API_KEY (base64)",
    ),
}


def _encodings(canary: str) -> list[str]:
    """The canary as it could be printed: plain, URL-encoded, and base64 at each alignment."""
    forms = [canary, quote(canary, safe="")]
    for prefix in ("", "s", "sv", "svc:"):
        forms.append(base64.b64encode((prefix + canary).encode()).decode()[4:-4])
    return forms


@pytest.mark.parametrize("where", sorted(PLACES))
def test_canary_backstop_refuses_the_write_and_keeps_the_old_file(
    pytester: pytest.Pytester, echo_server: ProviderServer, where: str
) -> None:
    pytester.makepyfile(test_user=LEAKY)
    path = cassette(pytester, "test_leaky")
    run(
        pytester, "--agentreplay-record-mode=once", AR_SERVER=echo_server.url, AR_PROMPTS="A"
    ).assert_outcomes(passed=1)
    before = path.read_bytes()

    canary = f"ck-{secrets.token_urlsafe(30)}"  # key-shaped, but no rule knows its name
    result = run(
        pytester,
        "--agentreplay-record-mode=new_episodes",
        AR_SERVER=echo_server.url,
        AR_PROMPTS="B",
        AR_WHERE=where,
        AR_CANARY_API_KEY=canary,
    )
    result.assert_outcomes(passed=1, errors=1)
    assert len(echo_server.requests) == 2, "the canary really went out on the wire"
    assert path.read_bytes() == before
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "no temp file left"
    field, kind = PLACES[where]
    result.stdout.fnmatch_lines(
        [
            f"*SecretLeakError: refusing to write {path}: * secret(s) survived scrubbing:*",
            f"*{field}: {kind}*",
        ]
    )
    printed = result.stdout.str() + result.stderr.str()
    assert not [form for form in _encodings(canary) if form in printed]
