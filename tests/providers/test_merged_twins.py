"""Behaviour the four codecs used to disagree on, before their copies were merged
(issue 28): one request-validation helper, one fold skeleton, one render check.

* A JSON null in a request was "null" to two parsers and "NoneType" to the others; a
  body that is not an object was the field ``body`` to one parser and the body itself
  (no field) to the other three.
* An unknown event under ``strict=True`` was "not allowed with strict=True" in two
  folds and "(strict mode)" in the others.
* A reply holding a part the format cannot send was refused by three codecs and
  rendered by Gemini's without the part (its citations silently dropped); two codecs
  refused it only once the first event was taken from ``iter_events``.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import PROVIDERS, Citation, Provider, Reply, ServerToolCall, Text
from pytest_agentreplay.providers import IdFactory, RenderContext, codec_for
from pytest_agentreplay.sse import SSEEvent

# A request whose only flaw is a JSON null where a string must be, and that field's path.
NULL_TEXT: dict[Provider, tuple[dict[str, Any], str]] = {
    "anthropic": (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
        "messages[0].content[0].text",
    ),
    "openai_chat": (
        {"messages": [{"role": "user", "content": [{"type": "text", "text": None}]}]},
        "messages[0].content[0].text",
    ),
    "openai_responses": (
        {"input": [{"role": "user", "content": [{"type": "input_text", "text": None}]}]},
        "input[0].content[0].text",
    ),
    "gemini": ({"contents": [{"parts": [{"text": None}]}]}, "contents[0].parts[0].text"),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_parser_names_the_field_and_calls_a_json_null_null(provider: Provider) -> None:
    body, field = NULL_TEXT[provider]
    with pytest.raises(CodecError) as info:
        codec_for(provider).parse_request(body)
    assert (info.value.provider, info.value.field) == (provider, field)
    assert str(info.value).endswith(f"field {field!r}: must be a string, got null")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_every_parser_refuses_a_body_that_is_not_an_object_as_the_body(
    provider: Provider,
) -> None:
    with pytest.raises(CodecError, match="got list") as info:
        codec_for(provider).parse_request([{"role": "user"}])  # type: ignore[arg-type]
    assert info.value.field is None


# A well-formed event of a type the provider's fold does not know, after a good start.
_FUTURE: dict[Provider, SSEEvent] = {
    "anthropic": SSEEvent(event="message_future", data='{"type": "message_future"}'),
    "openai_chat": SSEEvent(data='{"object": "chat.completion.future", "choices": []}'),
    "openai_responses": SSEEvent(event="response.future", data='{"type": "response.future"}'),
    "gemini": SSEEvent(event="future", data="{}"),
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_unknown_event_is_kept_aside_or_under_strict_refused_alike(provider: Provider) -> None:
    codec = codec_for(provider)
    events = codec.render_events(Reply.text("Hello there."), RenderContext(ids=IdFactory("t")))
    at = 2
    mixed = [*events[:at], _FUTURE[provider], *events[at:]]
    folded = codec.fold_detailed(mixed)
    assert folded.unknown == [at]
    assert folded.body == codec.fold(events)
    with pytest.raises(CodecError, match=r"; not allowed with strict=True$") as info:
        codec.fold_detailed(mixed, strict=True)
    assert (info.value.provider, info.value.event_index) == (provider, at)


def _unsendable(provider: Provider) -> list[Reply]:
    """Replies holding a part ``provider``'s format cannot send."""
    codec = codec_for(provider)
    replies = []
    if "web_search" not in codec.server_tools:
        replies.append(Reply(parts=[ServerToolCall.web_search("weather in Leeds")]))
    if not codec.citations:
        cited = Text(text="Rain.", citations=[Citation(url="https://example.org/leeds")])
        replies.append(Reply(parts=[Text(text="Today: "), cited]))
    return replies


CASES = [(p, reply) for p in PROVIDERS for reply in _unsendable(p)]


def test_some_format_cannot_send_each_kind_of_part() -> None:
    """The cases below exist: Gemini renders neither, Chat Completions no server tool."""
    assert {p for p, _ in CASES} == {"openai_chat", "gemini"}
    assert len(CASES) == 3


@pytest.mark.parametrize(("provider", "reply"), CASES)
def test_a_part_the_format_cannot_send_is_refused_on_both_paths_at_once(
    provider: Provider, reply: Reply
) -> None:
    codec = codec_for(provider)
    field = f"parts[{len(reply.parts) - 1}]"
    with pytest.raises(CodecError, match="in this wire format") as info:
        codec.render_body(reply, RenderContext())
    assert info.value.field == field
    with pytest.raises(CodecError, match="in this wire format") as info:
        codec.iter_events(reply, RenderContext())  # refused before any event is taken
    assert info.value.field == field
