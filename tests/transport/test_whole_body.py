"""A body sent whole is played by a ``WholeBody``, and ends every call as a delivery would.

A fake's or a cassette's JSON body with no fault is one chunk, ready at once:
``Family.start`` plays it without a :class:`~pytest_agentreplay.transport.delivery.Delivery`
(bench/ W5). Each way a client can read or leave such a response is played here
through both, in both client modules, sync and async, and must log the same ending
(outcome and events sent), once. Any playback with something to wait for, pace, cut
or re-chunk keeps its delivery.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from pytest_agentreplay import FakeModel, Fault
from pytest_agentreplay.transport.chunking import resolve_chunking
from pytest_agentreplay.transport.delivery import Delivery
from pytest_agentreplay.transport.family import Family, WholeBody, is_whole
from pytest_agentreplay.transport.gate import Gate
from pytest_agentreplay.transport.playback import Playback

BODY = b'{"id": "msg_1", "content": []}'
FAMILIES = [Family("httpx", httpx), Family("httpx2", httpx2)]
Ends = list[tuple[str, int]]


def _playback(ends: Ends, **fields: Any) -> Playback:
    return Playback(
        status=200,
        headers=[("content-type", "application/json"), ("content-length", str(len(BODY)))],
        events=[BODY],
        on_end=lambda outcome, sent: ends.append((outcome, sent)),
        **fields,
    )


def _delivered(family: Family, playback: Playback, *, sync: bool) -> Any:
    """``playback`` as ``Family.start`` played every body before: through a Delivery."""
    delivery = Delivery(playback, family)
    stream = family.sync_stream(delivery) if sync else family.async_stream(delivery)
    request = family.module.Request("POST", "https://api.anthropic.com/v1/messages")
    return family.module.Response(200, headers=playback.headers, stream=stream, request=request)


def _started(family: Family, playback: Playback, *, sync: bool) -> Any:
    request = family.module.Request("POST", "https://api.anthropic.com/v1/messages")
    return family.start(request, playback, sync=sync)


# what a client does with a response: sync, then async (each returns what it read)
SYNC_USES: dict[str, Callable[[Any], bytes]] = {
    "read": lambda r: r.read(),
    "read twice": lambda r: r.read() + r.read(),
    "iter_raw": lambda r: b"".join(r.iter_raw()),
    "iter_bytes in small pieces": lambda r: b"".join(r.iter_bytes(chunk_size=3)),
    "closed unread": lambda r: r.close() or b"",
    "closed unread, twice": lambda r: r.close() or r.close() or b"",
    "read then closed": lambda r: r.read() + (r.close() or b""),
    "stream iterated by hand": lambda r: b"".join(_by_hand(r.stream)),
}


def _by_hand(stream: Any) -> Iterator[bytes]:
    """The stream's chunks taken one by one, then the stream closed (a framework's own
    reader)."""
    chunks = iter(stream)
    first = next(chunks, b"")
    rest = list(chunks)
    stream.close()
    return iter([first, *rest])


async def _aread(r: Any) -> bytes:
    return await r.aread()


async def _aiter_raw(r: Any) -> bytes:
    return b"".join([chunk async for chunk in r.aiter_raw()])


async def _aclosed_unread(r: Any) -> bytes:
    await r.aclose()
    await r.aclose()
    return b""


async def _aread_then_closed(r: Any) -> bytes:
    body: bytes = await r.aread()
    await r.aclose()
    return body


ASYNC_USES: dict[str, Callable[[Any], Any]] = {
    "aread": _aread,
    "aiter_raw": _aiter_raw,
    "aclosed unread, twice": _aclosed_unread,
    "aread then aclosed": _aread_then_closed,
}


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
@pytest.mark.parametrize("use", list(SYNC_USES), ids=str)
def test_a_sync_client_reads_and_ends_a_whole_body_as_a_delivery(family: Family, use: str) -> None:
    outcomes = []
    for play in (_delivered, _started):
        ends: Ends = []
        response = play(family, _playback(ends), sync=True)
        read = SYNC_USES[use](response)
        response.close()  # a second close, as a client's context manager adds
        outcomes.append((read, ends))
    assert outcomes[1] == outcomes[0]
    assert len(outcomes[1][1]) == 1  # the call ended, once
    assert outcomes[1][1][0] == (("cancelled", 0) if "unread" in use else ("completed", 1))


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
@pytest.mark.parametrize("use", list(ASYNC_USES), ids=str)
def test_an_async_client_reads_and_ends_a_whole_body_as_a_delivery(
    family: Family, use: str
) -> None:
    async def run(play: Callable[..., Any]) -> tuple[bytes, Ends]:
        ends: Ends = []
        response = play(family, _playback(ends), sync=False)
        read: bytes = await ASYNC_USES[use](response)
        await response.aclose()
        return read, ends

    delivered, whole = asyncio.run(run(_delivered)), asyncio.run(run(_started))
    assert whole == delivered
    assert whole[1] == ([("cancelled", 0)] if "unread" in use else [("completed", 1)])


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_body_read_to_its_end_by_hand_and_never_closed_ended_completed(family: Family) -> None:
    outcomes = []
    for play in (_delivered, _started):
        ends: Ends = []
        response = play(family, _playback(ends), sync=True)
        assert list(response.stream) == [BODY]  # no close: the end of the body ends it
        outcomes.append(ends)
    assert outcomes == [[("completed", 1)]] * 2

    async def run(play: Callable[..., Any]) -> Ends:
        ends: Ends = []
        response = play(family, _playback(ends), sync=False)
        assert [chunk async for chunk in response.stream] == [BODY]
        return ends

    assert [asyncio.run(run(_delivered)), asyncio.run(run(_started))] == [[("completed", 1)]] * 2


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_whole_body_ends_its_call_when_its_chunk_is_handed_over(family: Family) -> None:
    """The body has been sent once its one chunk is taken: the call ends ``completed``
    then, sync and async, whatever the client does next (here: nothing)."""
    ends: Ends = []
    response = _started(family, _playback(ends), sync=True)
    chunks = iter(response.stream)
    assert ends == []  # asked for nothing yet
    assert next(chunks) == BODY
    assert ends == [("completed", 1)]

    async def run() -> Ends:
        ends: Ends = []
        response = _started(family, _playback(ends), sync=False)
        assert await response.stream.__aiter__().__anext__() == BODY
        return ends

    assert asyncio.run(run()) == [("completed", 1)]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_a_whole_body_is_played_by_a_whole_body(family: Family) -> None:
    sync = _started(family, _playback([]), sync=True)
    asynchronous = _started(family, _playback([]), sync=False)
    assert isinstance(sync.stream, WholeBody)
    assert isinstance(sync.stream, family.module.SyncByteStream)
    assert isinstance(asynchronous.stream, WholeBody)
    assert isinstance(asynchronous.stream, family.module.AsyncByteStream)


def _generator() -> Iterator[bytes]:
    yield BODY


# Each keeps its delivery: something to wait for, pace, cut, re-chunk or relay.
NOT_WHOLE: dict[str, Callable[[], dict[str, Any]]] = {
    "two events": lambda: {"events": [BODY, BODY]},
    "no event": lambda: {"events": []},
    "events made lazily": lambda: {"events": _generator()},
    "a tuple of one event": lambda: {"events": (BODY,)},
    "a gate": lambda: {"gates": {0: Gate()}},
    "a delay": lambda: {"delay": 0.01},
    "a schedule": lambda: {"schedule": [0.0]},
    "cut": lambda: {"ending": "cut"},
    "a timeout": lambda: {"ending": "timeout"},
    "delivered in part": lambda: {"deliver": 0},
    "relayed as it arrives": lambda: {"arriving": True},
    "chunked by lines": lambda: {"chunker": resolve_chunking("lines")},
    "chunked in 4 bytes": lambda: {"chunker": resolve_chunking(4)},
}


@pytest.mark.parametrize("case", list(NOT_WHOLE), ids=str)
def test_a_body_with_anything_to_do_keeps_its_delivery(case: str) -> None:
    playback = _playback([])
    for name, value in NOT_WHOLE[case]().items():
        setattr(playback, name, value)
    assert not is_whole(playback)
    assert not isinstance(_started(FAMILIES[1], playback, sync=True).stream, WholeBody)


def test_a_whole_body_and_per_event_chunking_given_by_name_is_whole() -> None:
    assert is_whole(_playback([], chunker=resolve_chunking("event")))


# --- through the real SDKs and a fake ----------------------------------------------------


def _outcomes(fake: FakeModel) -> list[tuple[str, int]]:
    return [(call.outcome, call.events_sent) for call in fake.log]


def test_sdks_answered_whole_log_completed_calls() -> None:
    with FakeModel("one", "two", "three", "four") as fake:
        with anthropic.Anthropic(api_key="k", max_retries=0) as client:
            message = client.messages.create(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            )
        with openai.OpenAI(api_key="k", max_retries=0) as oai:
            completion = oai.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}]
            )

        async def async_calls() -> tuple[str, str | None]:
            async with anthropic.AsyncAnthropic(api_key="k", max_retries=0) as client:
                message = await client.messages.create(
                    model="m", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
                )
            async with openai.AsyncOpenAI(api_key="k", max_retries=0) as oai:
                completion = await oai.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi"}]
                )
            block = message.content[0]
            assert isinstance(block, anthropic.types.TextBlock)
            return block.text, completion.choices[0].message.content

        texts = asyncio.run(async_calls())
    first = message.content[0]
    assert isinstance(first, anthropic.types.TextBlock)
    assert (first.text, completion.choices[0].message.content, *texts) == (
        "one",
        "two",
        "three",
        "four",
    )
    assert _outcomes(fake) == [("completed", 0)] * 4  # a JSON body sends no event


def test_a_client_that_closes_a_whole_body_unread_is_logged_cancelled() -> None:
    with FakeModel("never read", "read") as fake, httpx2.Client() as client:
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
        with client.stream("POST", "https://api.anthropic.com/v1/messages", json=body) as r:
            assert r.status_code == 200  # headers only: the body is never read
        reply = client.post("https://api.anthropic.com/v1/messages", json=body)
    assert reply.json()["content"][0]["text"] == "read"
    assert [call.outcome for call in fake.log] == ["cancelled", "completed"]


def test_a_fault_on_a_json_body_keeps_its_delivery() -> None:
    with FakeModel(Fault.cut(), "after") as fake, httpx2.Client() as client:
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}
        with pytest.raises(httpx2.RemoteProtocolError):
            client.post("https://api.anthropic.com/v1/messages", json=body)
        again = client.post("https://api.anthropic.com/v1/messages", json=body)
    assert again.json()["content"][0]["text"] == "after"
    assert [call.outcome for call in fake.log] == ["cut", "completed"]
