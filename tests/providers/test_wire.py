"""A stream's bytes written by the codec (``Codec.iter_wire``, what a fake sends when no
fault or added field changes the events) are the bytes its events encode to: for every
provider and the parts each can send, whether the codec writes them itself (Anthropic,
OpenAI Chat) or encodes its events (the rest, and any codec of a user's)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_agentreplay import Reply, Usage
from pytest_agentreplay.errors import CodecError
from pytest_agentreplay.neutral import PROVIDERS, Provider, Request
from pytest_agentreplay.neutral.parts import Citation, ServerToolCall, Text, Thinking, ToolCall
from pytest_agentreplay.providers import Codec, IdFactory, RenderContext, codec_for
from pytest_agentreplay.providers.anthropic.codec import AnthropicCodec
from pytest_agentreplay.providers.openai.chat.codec import OpenAIChatCodec
from pytest_agentreplay.sse import SSEEvent, encode

_REQUESTS: dict[Provider, dict[str, Any]] = {
    "anthropic": {"model": "m", "max_tokens": 5, "stop_sequences": ["X"], "messages": []},
    "openai_chat": {"model": "m", "messages": [], "stream_options": {"include_usage": True}},
    "openai_responses": {"model": "m", "input": "hi"},
    "gemini": {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
}


def _replies(text: str) -> list[Reply]:
    return [
        Reply.text(text, usage=Usage(input_tokens=3, output_tokens=9)),
        Reply.text(text),  # usage estimated from the request
        Reply(parts=[Thinking(text=text, signature="sig"), Text(text="done")]),
        Reply(parts=[Text(text=text), ToolCall(name="weather", args={"city": text, "n": [1.5]})]),
        Reply(parts=[Text(text="cited", citations=[Citation(url="https://example.org/a")])]),
        Reply(parts=[], stop="max_tokens"),
        Reply.text(text, model=text or "m"),  # a model name with line ends, quotes...
        Reply(parts=[Text(text=text), Text(text="and then"), Text(text="")]),  # plain texts
    ]


def _context(codec: Codec, provider: Provider) -> RenderContext:
    request: Request = codec.parse_request(_REQUESTS[provider])
    return RenderContext(model="fake", request=request, ids=IdFactory("wire"))


def _codecs() -> Iterator[tuple[Provider, Codec]]:
    for provider in PROVIDERS:
        yield provider, codec_for(provider)
    yield "openai_chat", OpenAIChatCodec(reasoning_field="reasoning_content")


@pytest.mark.parametrize(("provider", "codec"), list(_codecs()))
@given(text=st.text(max_size=60))
def test_a_codec_writes_the_bytes_its_events_encode_to(
    provider: Provider, codec: Codec, text: str
) -> None:
    for reply in _replies(text):
        try:
            events = codec.render_events(reply, _context(codec, provider))
        except Exception as exc:  # a part this format cannot send: refused alike
            with pytest.raises(type(exc), match=re.escape(str(exc))):
                list(codec.iter_wire(reply, _context(codec, provider)))
            continue
        wire = b"".join(codec.iter_wire(reply, _context(codec, provider)))
        assert wire == encode(events, line_end=codec.sse_line_end)
        assert b"".join(Codec.iter_wire(codec, reply, _context(codec, provider))) == wire


class _WithIds(OpenAIChatCodec):
    """A codec of a user's whose stream sets ids and retry fields midway."""

    def iter_events(self, reply: Reply, ctx: RenderContext) -> Iterator[SSEEvent]:
        for n, event in enumerate(super().iter_events(reply, ctx)):
            if n == 2:
                yield SSEEvent(data=event.data, event="x", retry=3000)
            elif n >= 3:
                yield SSEEvent(data=event.data, id=str(n // 2))
            else:
                yield event


def test_a_codec_of_its_own_writes_ids_and_retry_as_the_encoder_does() -> None:
    codec = _WithIds()
    reply = Reply.text("one two three four five six")
    events = list(codec.iter_events(reply, _context(codec, "openai_chat")))
    assert any(e.id for e in events) and any(e.retry for e in events)
    wire = b"".join(codec.iter_wire(reply, _context(codec, "openai_chat")))
    assert wire == encode(events)


_USAGES = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**9),
    output_tokens=st.integers(0, 10**9),
    cache_creation_input_tokens=st.none() | st.integers(0, 99),
    cache_read_input_tokens=st.none() | st.integers(0, 99),
    reasoning_tokens=st.none() | st.integers(0, 99),
)


@pytest.mark.parametrize(("provider", "codec"), list(_codecs()))
@given(text=st.text(max_size=60), model=st.none() | st.text(max_size=12), usage=_USAGES)
def test_a_codec_writes_the_bytes_its_body_encodes_to(
    provider: Provider, codec: Codec, text: str, model: str | None, usage: Usage
) -> None:
    """``Codec.body_wire`` (what a fake sends, written around the encoded values where a
    codec can) is the compact JSON of ``render_body``, byte for byte: every reply shape,
    stop reason, usage (cache fields, thinking tokens) and model name."""
    stops = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal")
    stopped = [Reply.text(text, usage=usage, stop=s, model=model) for s in stops]
    for reply in [*_replies(text), *stopped]:
        try:
            body = codec.render_body(reply, _context(codec, provider))
        except Exception as exc:  # a part this format cannot send: refused alike
            with pytest.raises(type(exc), match=re.escape(str(exc))):
                codec.body_wire(reply, _context(codec, provider))
            continue
        expected = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        wired = _context(codec, provider)
        assert codec.body_wire(reply, wired) == expected
        rendered = _context(codec, provider)
        codec.render_body(reply, rendered)
        # the same ids drawn, in the same number: the headers' request id comes next
        assert wired.ids.new("next_") == rendered.ids.new("next_")


class _OwnBody(OpenAIChatCodec):
    """A codec of a user's that renders its own body."""

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        return {**super().render_body(reply, ctx), "mine": True}


def test_a_codec_of_its_own_sends_the_body_it_renders() -> None:
    codec = _OwnBody()
    reply = Reply.text("one two")
    body = codec.body_wire(reply, _context(codec, "openai_chat"))
    assert json.loads(body) == codec.render_body(reply, _context(codec, "openai_chat"))
    assert json.loads(body)["mine"] is True


class _Unchecked(OpenAIChatCodec):
    """A codec of a user's whose body leaves refusing a part to others."""

    def render_body(self, reply: Reply, ctx: RenderContext) -> dict[str, Any]:
        return {"text": reply.text_content}


def test_a_codec_of_its_own_refuses_in_body_wire_what_the_format_cannot_send() -> None:
    """``Codec.body_wire`` refuses a part the format cannot send before it renders, for
    any codec: a fake sends a plain JSON reply's bytes with no other check before them."""
    codec = _Unchecked()
    reply = Reply(parts=[Text(text="Looking."), ServerToolCall.web_search("q")])
    with pytest.raises(CodecError, match="provider-side 'web_search'") as info:
        codec.body_wire(reply, _context(codec, "openai_chat"))
    assert info.value.field == "parts[1]"
    assert json.loads(codec.body_wire(Reply.text("fine"), _context(codec, "openai_chat"))) == {
        "text": "fine"
    }


class _AnthropicGateway(AnthropicCodec):
    """Anthropic's format without its server tools or citations (a gateway's): its
    render role's ``body_wire`` is used, and must check the reply itself."""

    server_tools = frozenset()
    citations = False


@pytest.mark.parametrize(
    ("part", "says"),
    [
        (ServerToolCall.web_search("q"), "provider-side 'web_search'"),
        (Text(text="Rain.", citations=[Citation(url="https://example.org")]), "citations"),
    ],
    ids=["server tool", "citations"],
)
def test_a_render_role_s_body_wire_refuses_what_its_codec_cannot_send(
    part: ServerToolCall | Text, says: str
) -> None:
    """``FolderCodec.body_wire`` leaves the check to the render role's ``body_wire`` (a
    plain text reply is not looked over twice): a codec of Anthropic's format that cannot
    send a part refuses it there, naming the part, and still writes plain text."""
    codec = _AnthropicGateway()
    ctx = _context(codec, "anthropic")
    with pytest.raises(CodecError, match=says) as info:
        codec.body_wire(Reply(parts=[Text(text="Looking."), part]), ctx)
    assert info.value.field == "parts[1]"
    assert json.loads(codec.body_wire(Reply.text("fine"), ctx))["content"] == [
        {"type": "text", "text": "fine"}
    ]


def _pulled(events: Iterator[bytes]) -> tuple[list[bytes], type[BaseException] | None]:
    """The events an iterator gives before it ends or fails, and what it failed with."""
    pulled: list[bytes] = []
    try:
        for event in events:
            pulled.append(event)
    except Exception as exc:  # what the fake's delivery would see mid-stream
        return pulled, type(exc)
    return pulled, None


@pytest.mark.parametrize(
    "text",
    [
        "word " * 1000,  # beyond what is cut at once: deltas written lazily
        "a" * 30 + " " + "b" * 4100,  # long words cut to size, lazily
        "before \ud800 after",  # a lone surrogate: no UTF-8 for it
    ],
    ids=["long", "long words", "surrogate"],
)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_codec_writes_a_long_or_unencodable_text_as_its_encoded_events_go(
    provider: Provider, text: str
) -> None:
    """Event for event, and failing at the same event: what a fake streams of a text
    the codec writes itself (a short one at once) and of its events encoded one by one."""
    codec = codec_for(provider)
    reply = Reply.text(text, usage=Usage(input_tokens=1, output_tokens=2))
    written = _pulled(codec.iter_wire(reply, _context(codec, provider)))
    encoded = _pulled(Codec.iter_wire(codec, reply, _context(codec, provider)))
    assert written == encoded
    assert (encoded[1] is UnicodeEncodeError) == ("\ud800" in text)
