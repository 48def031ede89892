"""A bare event-stream file (an SDK test fixture) is read as one interaction sent to the
provider its events come from, as the provider catalog tells them apart."""

from __future__ import annotations

import pytest

from pytest_agentreplay.cassettes.formats.raw_sse import from_raw_sse
from pytest_agentreplay.neutral import Provider, Reply
from pytest_agentreplay.providers import RenderContext, codec_for, detect, target
from pytest_agentreplay.sse import encode


def _url_of(provider: Provider, text: str) -> str:
    codec = codec_for(provider)
    body = encode(codec.render_events(Reply.text(text), RenderContext()))
    url: str = from_raw_sse(body)["interactions"][0]["request"]["url"]
    return url


@pytest.mark.parametrize("provider", ["anthropic", "openai_chat", "openai_responses"])
def test_a_bare_stream_is_sent_to_its_providers_own_endpoint(provider: Provider) -> None:
    url = _url_of(provider, "Sunny in Leeds.")
    assert detect("POST", target(url)) == provider


def test_a_chat_stream_that_says_response_is_still_a_chat_stream() -> None:
    """A compatible server's short chunks put the text within the part of the events
    the guess reads; before the catalog, the guess looked for Responses' marker first
    and sent this stream to ``/v1/responses``."""
    chunk = '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%s}}]}'
    body = "".join(f"data: {chunk % text}\n\n" for text in ('"The"', '" response."'))
    url = from_raw_sse(f"{body}data: [DONE]\n\n".encode())["interactions"][0]["request"]["url"]
    assert detect("POST", target(url)) == "openai_chat"


def test_a_stream_of_no_known_provider_goes_nowhere() -> None:
    body = b'data: {"hello": "world"}\n\n'
    assert from_raw_sse(body)["interactions"][0]["request"]["url"] == "https://raw-sse.invalid/"
