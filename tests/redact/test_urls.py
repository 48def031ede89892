"""Query, fragment, userinfo and signed-URL scrubbing: secrets go, everything else stays."""

from __future__ import annotations

import pytest

from pytest_agentreplay.redact import Scrubber
from tests.redact._helpers import interaction, request, response

SECRET = "Zk39vPq0xLmN7aBc"


def _url(url: str, scrubber: Scrubber | None = None) -> str:
    return (scrubber or Scrubber()).scrub_request(request(url)).url


@pytest.mark.parametrize(
    "name",
    [
        "key",
        "api_key",
        "api-key",
        "apikey",
        "token",
        "access_token",
        "refresh_token",
        "id_token",
        "sig",
        "signature",
        "X-Amz-Signature",
        "X-Amz-Credential",
        "X-Amz-Security-Token",
        "X-Goog-Signature",
        "client_secret",
        "password",
        "KEY",
        "Api_Key",
    ],
)
def test_secret_query_parameter_is_redacted_and_neighbours_kept(name: str) -> None:
    url = f"https://api.example.com/v1/models?alt=sse&{name}={SECRET}&q=a%20b+c"
    assert _url(url) == f"https://api.example.com/v1/models?alt=sse&{name}=REDACTED&q=a%20b+c"


def test_percent_encoded_parameter_name_is_recognised() -> None:
    url = f"https://h.example/p?api%5Fkey={SECRET}"
    assert _url(url) == "https://h.example/p?api%5Fkey=REDACTED"


def test_parameters_keep_order_and_exact_encoding() -> None:
    url = "https://h.example/p?z=1&a=%2F&m=x+y&beta=true&api-version=2024-10-21&empty=&flag"
    assert _url(url) == url


def test_fragment_access_token_is_redacted() -> None:
    url = f"https://app.example/cb#access_token={SECRET}&token_type=bearer&expires_in=3600"
    assert (
        _url(url)
        == "https://app.example/cb#access_token=REDACTED&token_type=bearer&expires_in=3600"
    )


def test_plain_fragment_is_kept() -> None:
    url = "https://api.mistral.ai/v1/chat/completions#stream"
    assert _url(url) == url


def test_s3_presigned_url_keeps_everything_but_the_credentials() -> None:
    url = (
        "https://bucket.s3.amazonaws.com/file.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
        "&X-Amz-Security-Token=IQoJb3JpZ2luX2VjEJr&X-Amz-Signature=fe5f80f77d5fa3beca038a2"
    )
    assert _url(url) == (
        "https://bucket.s3.amazonaws.com/file.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        "&X-Amz-Credential=REDACTED&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600"
        "&X-Amz-SignedHeaders=host&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED"
    )


def test_azure_sas_signature_is_redacted() -> None:
    url = "https://acct.blob.core.windows.net/c/img.png?sv=2021-08-06&se=2026-11-10T11%3A00Z&sr=b&sp=r&sig=abc%2Bdef%3D"
    assert _url(url) == (
        "https://acct.blob.core.windows.net/c/img.png?sv=2021-08-06&se=2026-11-10T11%3A00Z"
        "&sr=b&sp=r&sig=REDACTED"
    )


def test_userinfo_password_is_redacted() -> None:
    assert (
        _url(f"https://user:{SECRET}@proxy.example/v1") == "https://user:REDACTED@proxy.example/v1"
    )


def test_userinfo_token_without_password_is_redacted() -> None:
    assert _url(f"https://{SECRET}@git.example/repo") == "https://REDACTED@git.example/repo"


def test_extra_query_params_are_redacted() -> None:
    scrubber = Scrubber(extra_query_params=["Tenant"])
    assert (
        _url("https://h.example/p?tenant=acme&x=1", scrubber)
        == "https://h.example/p?tenant=REDACTED&x=1"
    )


def test_live_request_with_another_key_scrubs_to_the_recorded_one() -> None:
    """Replay still matches: the live request is scrubbed the same way before matching."""
    scrubber = Scrubber()
    recorded = scrubber.scrub_request(request(f"https://g.example/v1/m:gen?key={SECRET}&alt=sse"))
    live = scrubber.scrub_request(request("https://g.example/v1/m:gen?key=OtherKey123456&alt=sse"))
    assert live == recorded
    assert SECRET not in recorded.url


def test_signed_url_inside_a_json_response_is_scrubbed() -> None:
    image = "https://oaidalle.blob.core.windows.net/p/img.png?st=2026&se=2026&sp=r&sig=Zk39vPq0%3D"
    resp = response(json_body={"created": 1, "data": [{"url": image, "revised_prompt": "a cat"}]})
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response.json_body
    assert scrubbed == {
        "created": 1,
        "data": [
            {
                "url": "https://oaidalle.blob.core.windows.net/p/img.png?st=2026&se=2026&sp=r&sig=REDACTED",
                "revised_prompt": "a cat",
            }
        ],
    }


def test_url_without_secrets_is_the_same_string() -> None:
    url = "https://api.openai.com/v1/responses/resp_123?starting_after=0&stream=true"
    r = request(url)
    assert Scrubber().scrub_request(r).url is r.url


def test_signed_url_in_a_location_header_is_scrubbed() -> None:
    location = "https://bucket.s3.amazonaws.com/f?X-Amz-Expires=60&X-Amz-Signature=fe5f80f7"
    resp = response(status=302, headers={"location": location, "content-type": "text/plain"})
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response.headers
    assert scrubbed == {
        "location": "https://bucket.s3.amazonaws.com/f?X-Amz-Expires=60&X-Amz-Signature=REDACTED",
        "content-type": "text/plain",
    }


def test_userinfo_without_a_password_is_kept() -> None:
    url = "https://user:@proxy.example/v1"
    assert _url(url) == url


def test_a_url_asked_again_gets_the_same_answer_past_the_memo_bound() -> None:
    from pytest_agentreplay.redact.rules import _URL_MEMO, Rules

    rules = Rules.build(
        placeholder="REDACTED", extra_headers=(), extra_query_params=(), extra_body_keys=()
    )
    secret = "https://h/v1?key=abc&page=2"
    assert rules.url(secret) == "https://h/v1?key=REDACTED&page=2"
    for i in range(_URL_MEMO + 3):  # more URLs than it remembers: it starts again
        assert rules.url(f"https://h/v1?n={i}") == f"https://h/v1?n={i}"
    assert rules.url(secret) == "https://h/v1?key=REDACTED&page=2"
    assert rules.url(secret) == "https://h/v1?key=REDACTED&page=2"  # remembered this time


def test_rules_with_other_names_do_not_share_what_they_remember() -> None:
    from pytest_agentreplay.redact.rules import Rules

    def build(extra: tuple[str, ...]) -> Rules:
        return Rules.build(
            placeholder="REDACTED", extra_headers=(), extra_query_params=extra, extra_body_keys=()
        )

    url = "https://h/v1?tenant=acme"
    assert build(()).url(url) == url
    assert build(("tenant",)).url(url) == "https://h/v1?tenant=REDACTED"
