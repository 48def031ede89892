"""The request routes and the codecs know the same providers, without loading the model."""

from __future__ import annotations

from typing import get_args

import pytest

from pytest_agentreplay.neutral import PROVIDERS, Provider
from pytest_agentreplay.providers import codec_for, detect
from pytest_agentreplay.providers.routes import handles

PATHS = {
    "anthropic": "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-3.5-flash-lite:generateContent",
}


def test_the_provider_names_are_one_list() -> None:
    assert get_args(Provider) == PROVIDERS == tuple(PATHS)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_provider_has_its_routes_and_its_codec(provider: Provider) -> None:
    path = PATHS[provider]
    assert handles(provider, "POST", path)
    assert detect("POST", path) == provider
    codec = codec_for(provider)
    assert codec.provider == provider
    assert codec.handles("POST", path)
