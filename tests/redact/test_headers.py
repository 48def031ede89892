"""Header scrubbing: credentials redacted in any case, volatile headers dropped or normalised."""

from __future__ import annotations

import pytest

from pytest_agentreplay.cassettes.cassette import RecordedRequest, RecordedResponse
from pytest_agentreplay.redact import Scrubber
from tests.redact._helpers import dump, interaction, request, response

SECRET = "s3cr3t-VALUE-9f8e7d6c5b4a"


def _raw_request(headers: dict[str, str]) -> RecordedRequest:
    """A request whose header names keep their case (set after it was built, as a custom
    scrubber may): the scrubber itself must not rely on names being lower-case. What it
    returns is a checked model again, its names lower-cased."""
    raw = RecordedRequest(method="GET", url="https://api.example.com/v1")
    raw.headers = headers
    return raw


def _raw_response(headers: dict[str, str]) -> RecordedResponse:
    raw = RecordedResponse(status=200)
    raw.headers = headers
    return raw


def _variants(name: str) -> list[str]:
    """Lower, upper, title and an alternating-case spelling of a header name."""
    alternating = "".join(c.upper() if i % 2 else c for i, c in enumerate(name))
    return sorted({name, name.upper(), name.title(), alternating})


# The brief's list plus the generous extras, written out here (not imported from the code).
REQUEST_SECRET_HEADERS = [
    "x-api-key",
    "api-key",
    "cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
    "anthropic-workspace-id",
    "x-goog-api-key",
    "x-amz-security-token",
    "x-auth-token",
    "ocp-apim-subscription-key",
    "x-portkey-api-key",  # by the "-key" suffix rule
    "x-litellm-api-key",
    "helicone-auth",
    "x-subscription-token",
]
RESPONSE_SECRET_HEADERS = [
    "set-cookie",
    "anthropic-organization-id",
    "anthropic-workspace-id",
    "openai-organization",
    "openai-project",
]


@pytest.mark.parametrize("name", [v for n in REQUEST_SECRET_HEADERS for v in _variants(n)])
def test_request_secret_header_is_redacted_in_any_case(name: str) -> None:
    scrubbed = Scrubber().scrub_request(_raw_request({name: SECRET}))
    assert scrubbed.headers == {name.lower(): "REDACTED"}
    validated = Scrubber().scrub_request(request(headers={name: SECRET}))
    assert validated.headers == {name.lower(): "REDACTED"}


@pytest.mark.parametrize("name", [v for n in RESPONSE_SECRET_HEADERS for v in _variants(n)])
def test_response_secret_header_is_redacted_in_any_case(name: str) -> None:
    value = f"__cf_bm={SECRET}; path=/; HttpOnly"
    raw = interaction(resp=response()).replace(response=_raw_response({name: value}))
    assert Scrubber().scrub_interaction(raw).response.headers == {name.lower(): "REDACTED"}
    scrubbed = Scrubber().scrub_interaction(interaction(resp=response(headers={name: value})))
    assert scrubbed.response.headers == {name.lower(): "REDACTED"}
    assert SECRET not in dump(scrubbed)


@pytest.mark.parametrize("name", [*_variants("authorization"), *_variants("proxy-authorization")])
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (f"Bearer {SECRET}", "Bearer REDACTED"),
        (f"bearer {SECRET}", "bearer REDACTED"),
        ("Basic dXNlcjpodW50ZXIy", "Basic REDACTED"),
        (
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20260101/us-east-1/bedrock/"
            "aws4_request, SignedHeaders=host;x-amz-date, Signature=fe5f80f77d5fa3beca038a2",
            "AWS4-HMAC-SHA256 REDACTED",
        ),
        (SECRET, "REDACTED"),  # no scheme at all
        (f"{SECRET} trailing", "REDACTED"),  # a first word that is no known scheme
    ],
)
def test_authorization_keeps_only_a_known_scheme(name: str, value: str, expected: str) -> None:
    scrubbed = Scrubber().scrub_request(_raw_request({name: value}))
    assert scrubbed.headers == {name.lower(): expected}


def test_placeholder_is_configurable() -> None:
    scrubber = Scrubber(placeholder="<hidden>")
    scrubbed = scrubber.scrub_request(
        request(headers={"Authorization": f"Bearer {SECRET}", "x-api-key": SECRET})
    )
    assert scrubbed.headers == {"authorization": "Bearer <hidden>", "x-api-key": "<hidden>"}


def test_empty_placeholder_is_refused() -> None:
    with pytest.raises(ValueError, match="placeholder"):
        Scrubber(placeholder="")


VOLATILE_REQUEST = {
    "User-Agent": "Anthropic/Python 2.14.0",
    "X-Stainless-OS": "Linux",
    "x-stainless-retry-count": "1",
    "x-stainless-package-version": "2.14.0",
    "Content-Length": "1234",
    "Idempotency-Key": "stainless-python-retry-0c8f",
    "x-goog-api-client": "google-genai-sdk/1.2.3 gl-python/3.12",
    "X-Amz-Date": "20260101T000000Z",
    "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    "x-ms-client-request-id": "7f6e5d4c",
}
VOLATILE_RESPONSE = {
    "Date": "Tue, 10 Nov 2026 10:00:00 GMT",
    "CF-RAY": "936f93666e9d7e01-GRU",
    "x-envoy-upstream-service-time": "412",
    "server-timing": "cfExtPri;dur=0",
    "openai-processing-ms": "381",
    "content-length": "614",
    "anthropic-ratelimit-tokens-reset": "2026-11-10T10:00:07Z",
    "anthropic-ratelimit-requests-reset": "2026-11-10T10:00:01Z",
    "x-ratelimit-reset-requests": "6ms",
    "x-ratelimit-reset-tokens": "1s",
    "apim-request-id": "6c2d",
    "mistral-correlation-id": "019a",
    "traceresponse": "00-78d1-1f1f-01",
}
KEPT_RESPONSE = {
    "content-type": "text/event-stream; charset=utf-8",
    "anthropic-ratelimit-tokens-limit": "400000",
    "anthropic-ratelimit-tokens-remaining": "399000",
    "x-ratelimit-limit-requests": "10000",
    "x-ratelimit-remaining-tokens": "29000",
    "retry-after": "3",
    "x-should-retry": "true",
    "openai-version": "2020-10-01",
    "access-control-allow-credentials": "true",
    "cache-control": "no-cache",
}


@pytest.mark.parametrize("name", sorted(VOLATILE_REQUEST))
def test_volatile_request_header_is_dropped(name: str) -> None:
    headers = {"anthropic-version": "2023-06-01", name: VOLATILE_REQUEST[name]}
    scrubbed = Scrubber().scrub_request(_raw_request(headers))
    assert scrubbed.headers == {"anthropic-version": "2023-06-01"}


@pytest.mark.parametrize("name", sorted(VOLATILE_RESPONSE))
def test_volatile_response_header_is_dropped(name: str) -> None:
    headers = {name: VOLATILE_RESPONSE[name], "content-type": "application/json"}
    raw = interaction().replace(response=_raw_response(headers))
    scrubbed = Scrubber().scrub_interaction(raw).response
    assert scrubbed.headers == {"content-type": "application/json"}


def test_rate_limit_limits_and_remaining_and_retry_headers_are_kept() -> None:
    resp = response(headers=dict(KEPT_RESPONSE))
    scrubbed = Scrubber().scrub_interaction(interaction(resp=resp)).response
    assert scrubbed.headers == KEPT_RESPONSE


@pytest.mark.parametrize("name", ["request-id", "Request-Id", "x-request-id", "X-Request-ID"])
def test_request_ids_the_sdks_read_are_normalised_not_dropped(name: str) -> None:
    first = interaction().replace(response=_raw_response({name: "req_011CUj2h"}))
    second = interaction().replace(response=_raw_response({name: "req_99aa01"}))
    a = Scrubber().scrub_interaction(first).response.headers
    b = Scrubber().scrub_interaction(second).response.headers
    assert a == b  # re-recordings diff cleanly
    assert set(a) == {name.lower()}  # the header is still there for the SDK to read
    assert a[name.lower()] == "req_agentreplay"


def test_other_headers_keep_their_order_and_value() -> None:
    headers = {
        "Accept": "application/json",
        "anthropic-version": "2023-06-01",
        "x-api-key": SECRET,
        "anthropic-beta": "tools-2024-04-04",
        "Content-Type": "application/json",
        "X-App-Trace": "abc",
    }
    scrubbed = Scrubber().scrub_request(_raw_request(headers)).headers
    assert list(scrubbed.items()) == [
        ("accept", "application/json"),
        ("anthropic-version", "2023-06-01"),
        ("x-api-key", "REDACTED"),
        ("anthropic-beta", "tools-2024-04-04"),
        ("content-type", "application/json"),
        ("x-app-trace", "abc"),
    ]


def test_extra_headers_are_redacted_in_any_case() -> None:
    scrubber = Scrubber(extra_headers=["X-Tenant-Id"])
    scrubbed = scrubber.scrub_request(_raw_request({"x-tenant-ID": "acme-42", "x-other": "1"}))
    assert scrubbed.headers == {"x-tenant-id": "REDACTED", "x-other": "1"}


def test_empty_secret_header_stays_empty() -> None:
    scrubbed = Scrubber().scrub_request(request(headers={"x-api-key": "", "authorization": ""}))
    assert scrubbed.headers == {"x-api-key": "", "authorization": ""}


def test_scrubbing_does_not_modify_the_input() -> None:
    original = interaction(
        request(headers={"x-api-key": SECRET, "user-agent": "ua"}),
        response(headers={"set-cookie": SECRET, "date": "now"}),
    )
    before = original.to_data()
    Scrubber().scrub_interaction(original)
    assert original.to_data() == before
