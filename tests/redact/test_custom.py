"""Custom scrubbers, and the module's public surface."""

from __future__ import annotations

import pytest

from pytest_agentreplay import redact
from pytest_agentreplay.cassettes.cassette import Cassette, Interaction
from pytest_agentreplay.redact import Scrubber
from tests.redact._helpers import dump, interaction, request, response


def test_custom_scrubbers_run_after_the_defaults_in_order() -> None:
    seen: list[tuple[str, str]] = []

    def first(i: Interaction) -> Interaction:
        seen.append(("first", i.request.headers["x-api-key"]))
        i.request.headers["x-step"] = "1"
        return i

    def second(i: Interaction) -> Interaction:
        seen.append(("second", i.request.headers["x-step"]))
        return i.replace(response=i.response.replace(status=203))

    scrubber = Scrubber(custom=[first, second])
    out = scrubber.scrub_interaction(interaction(request(headers={"x-api-key": "k3y-value-42"})))
    assert seen == [("first", "REDACTED"), ("second", "1")]
    assert out.request.headers == {"x-api-key": "REDACTED", "x-step": "1"}
    assert out.response.status == 203


def test_custom_scrubber_mutating_in_place_never_touches_the_input() -> None:
    def drop_tenant(i: Interaction) -> Interaction:
        i.request.headers.pop("x-tenant")
        i.request.json_body["messages"].clear()
        return i

    original = interaction(
        request(headers={"x-tenant": "acme"}, json_body={"messages": [{"role": "user"}]})
    )
    before = dump(original)
    out = Scrubber(custom=[drop_tenant]).scrub_interaction(original)
    assert dump(original) == before
    assert out.request.headers == {}
    assert out.request.json_body == {"messages": []}


def test_custom_scrubber_that_returns_nothing_is_named_in_the_error() -> None:
    def forgot_to_return(i: Interaction) -> None:
        i.request.headers.clear()

    scrubber = Scrubber(custom=[forgot_to_return])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="forgot_to_return returned NoneType"):
        scrubber.scrub_interaction(interaction())


def test_scrub_request_applies_custom_scrubbers_so_matching_sees_the_same_request() -> None:
    def strip_tenant_path(i: Interaction) -> Interaction:
        i.request.url = i.request.url.replace("/tenants/acme", "/tenants/T")
        return i

    scrubber = Scrubber(custom=[strip_tenant_path])
    stored = scrubber.scrub(
        Cassette(
            version=1, interactions=[interaction(request("https://h.example/tenants/acme/v1"))]
        )
    )
    live = scrubber.scrub_request(request("https://h.example/tenants/acme/v1"))
    assert live == stored.interactions[0].request
    assert live.url == "https://h.example/tenants/T/v1"


def test_scrub_returns_a_new_cassette_with_new_interactions() -> None:
    cassette = Cassette(version=1, interactions=[interaction(resp=response(json_body={"a": 1}))])
    out = Scrubber().scrub(cassette)
    assert out == cassette
    assert out is not cassette
    assert out.interactions is not cassette.interactions
    assert out.interactions[0] is not cassette.interactions[0]
    out.interactions.append(interaction())
    assert len(cassette.interactions) == 1


def test_public_names_are_exported_and_exist() -> None:
    for name in redact.__all__:
        assert hasattr(redact, name), name
    assert {"Scrubber", "SecretLeakError", "Finding", "default_scrubber"} <= set(redact.__all__)
    assert isinstance(redact.default_scrubber(), Scrubber)
