"""aiohttp's ``ClientSession`` served by fakes, as httpx is (issue 19, §1).

The plugin hooks aiohttp itself (a client middleware of ours, innermost): a fake
answers with a real ``aiohttp.ClientResponse`` whose ``content`` is aiohttp's own
``StreamReader`` fed one event at a time, so every way of reading it works as on the
wire; faults raise what aiohttp raises in production; an unserved host is refused by
the router, naming the test, and kept in the egress ledger.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from pytest_agentreplay import EgressBlocked, FakeModel, Fault, Reply, sse

pytestmark = pytest.mark.anyio

URL = "https://api.anthropic.com/v1/messages"
BODY = {"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}
STREAM = {**BODY, "stream": True}
TEXT = "one two three four five"


def events_of(body: bytes) -> list[sse.SSEEvent]:
    return list(sse.SSEDecoder().feed(body))


async def _readline(response: aiohttp.ClientResponse) -> list[bytes]:
    lines = []
    while line := await response.content.readline():
        lines.append(line)
    return lines


async def _iter_chunked(response: aiohttp.ClientResponse) -> list[bytes]:
    return [chunk async for chunk in response.content.iter_chunked(7)]


async def _iter_any(response: aiohttp.ClientResponse) -> list[bytes]:
    return [chunk async for chunk in response.content.iter_any()]


async def _async_for(response: aiohttp.ClientResponse) -> list[bytes]:
    return [line async for line in response.content]


async def _read(response: aiohttp.ClientResponse) -> list[bytes]:
    return [await response.read()]


READERS: dict[str, Callable[[aiohttp.ClientResponse], Awaitable[list[bytes]]]] = {
    "readline": _readline,
    "iter_chunked": _iter_chunked,
    "iter_any": _iter_any,
    "async-for": _async_for,
    "read": _read,
}


@pytest.mark.parametrize("reader", sorted(READERS))
async def test_a_stream_reads_the_same_every_way(reader: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(TEXT))
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        pieces = await READERS[reader](response)
    events = events_of(b"".join(pieces))
    assert [e.event for e in events][0 :: len(events) - 1] == ["message_start", "message_stop"]
    deltas = [e.json()["delta"].get("text", "") for e in events if e.event == "content_block_delta"]
    assert "".join(deltas) == TEXT
    [call] = scripted_model.log
    assert (call.streaming, call.outcome, call.events_sent) == (True, "completed", len(events))


async def test_iter_any_gets_one_event_per_chunk(scripted_model: FakeModel) -> None:
    """The body is fed as the playback delivers it: event by event, not one buffer."""
    scripted_model.script(Reply.text(TEXT))
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:
        chunks = [chunk async for chunk in response.content.iter_any()]
    assert len(chunks) == len(events_of(b"".join(chunks))) > 3
    assert all(len(events_of(chunk)) == 1 for chunk in chunks)


async def test_the_first_event_is_read_before_the_rest_is_produced(
    scripted_model: FakeModel,
) -> None:
    """A stall after two events holds the body: the client has the first events while
    the rest is not produced yet (nothing is buffered ahead of the reader)."""
    scripted_model.script(Reply.text(TEXT, fault=Fault.stall(after_events=2)))
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:
        first = [await response.content.readuntil(b"\n\n") for _ in range(2)]
        assert [e.event for e in events_of(b"".join(first))] == [
            "message_start",
            "content_block_start",
        ]
        rest_task = asyncio.ensure_future(response.read())
        assert await scripted_model.wait_blocked_async()
        assert not rest_task.done()
        scripted_model.release()
        rest = await rest_task
    assert events_of(rest)[-1].event == "message_stop"
    assert scripted_model.log[0].outcome == "completed"


@pytest.mark.parametrize("provider", ["anthropic", "openai-chat"])
async def test_json_text_and_read_of_a_whole_body(provider: str, scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("whole"), Reply.text("again"))
    url = URL if provider == "anthropic" else "https://api.openai.com/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        async with session.post(url, json=BODY) as response:
            body = await response.json()
        async with session.post(url, json=BODY) as response:
            text = await response.text()
    said = (
        body["content"][0]["text"]
        if provider == "anthropic"
        else body["choices"][0]["message"]["content"]
    )
    assert said == "whole"
    assert "again" in text
    assert [c.outcome for c in scripted_model.log] == ["completed", "completed"]


async def test_a_cut_stream_raises_client_payload_error_after_its_events(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text(TEXT, fault=Fault.cut(after_events=3)))
    seen: list[bytes] = []
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:

        async def read_all() -> None:
            async for chunk in response.content.iter_any():
                seen.append(chunk)

        with pytest.raises(aiohttp.ClientPayloadError, match="not completed"):
            await read_all()
        with pytest.raises(aiohttp.ClientPayloadError):  # as aiohttp: every later read too
            await response.content.read()
    assert len(events_of(b"".join(seen))) == 3
    assert (scripted_model.log[0].outcome, scripted_model.log[0].events_sent) == ("cut", 3)


async def test_a_timeout_before_the_headers_is_aiohttps_socket_timeout(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Fault.timeout())
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.SocketTimeoutError) as info:
            await session.post(URL, json=STREAM)
    assert isinstance(info.value, asyncio.TimeoutError)
    assert scripted_model.log[0].outcome == "timeout"


async def test_a_timeout_mid_stream_is_raised_by_the_read_that_meets_it(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text(TEXT, fault=Fault.timeout(after_events=2)))
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:
        with pytest.raises(aiohttp.ServerTimeoutError):
            await response.read()
    assert (scripted_model.log[0].outcome, scripted_model.log[0].events_sent) == ("timeout", 2)


async def test_a_cut_before_the_headers_is_a_server_disconnect() -> None:
    """A connection dropped before the status line (a cassette can hold one)."""
    from pytest_agentreplay.transport.aio import AiohttpFamily
    from pytest_agentreplay.transport.playback import Playback

    ended: list[str] = []
    playback = Playback(
        status=0,
        headers=[],
        events=[],
        ending="cut",
        before_headers=True,
        on_end=lambda outcome, _: ended.append(outcome),
    )
    with pytest.raises(aiohttp.ServerDisconnectedError):
        AiohttpFamily(aiohttp).start(None, playback, sync=False)
    assert ended == ["cut"]


async def test_an_http_error_is_the_providers_and_raise_for_status_raises(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Fault.http(429, retry_after=3), Fault.http(500))
    async with aiohttp.ClientSession() as session:
        async with session.post(URL, json=BODY) as response:
            assert response.status == 429
            assert response.headers["retry-after"] == "3"
            assert (await response.json())["error"]["type"] == "rate_limit_error"
        with pytest.raises(aiohttp.ClientResponseError) as info:
            async with session.post(URL, json=BODY, raise_for_status=True):
                pass
    assert info.value.status == 500
    assert [c.outcome for c in scripted_model.log] == ["http_error", "http_error"]


async def test_releasing_a_stream_early_is_a_hang_up(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(TEXT))
    async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as response:
        await response.content.readuntil(b"\n\n")
    assert scripted_model.log[0].outcome == "cancelled"


async def test_a_task_cancelled_while_held_is_logged_cancelled(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(TEXT, fault=Fault.stall(after_events=1)))

    async def read() -> bytes:
        async with aiohttp.ClientSession() as session, session.post(URL, json=STREAM) as r:
            return await r.read()

    task = asyncio.ensure_future(read())
    assert await scripted_model.wait_blocked_async()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert scripted_model.log[0].outcome == "cancelled"


async def test_an_unserved_host_is_refused_by_name_and_kept_in_the_ledger(
    scripted_model: FakeModel, request: pytest.FixtureRequest
) -> None:
    async with aiohttp.ClientSession() as session:
        with pytest.raises(EgressBlocked, match=r"POST https://example\.org/v1/x") as info:
            await session.post("https://example.org/v1/x", json=BODY)
    assert request.node.name in str(info.value)
    from pytest_agentreplay.transport.router import active_router

    router = active_router()
    assert router is not None
    assert router.blocked == ["POST https://example.org/v1/x"]


async def test_a_users_middleware_runs_around_the_fake(scripted_model: FakeModel) -> None:
    """Ours is the innermost middleware: a signing middleware's header reaches the fake,
    and a retrying middleware's second attempt is a second call."""
    scripted_model.script(Fault.http(503), Reply.text("second time"))

    async def sign_and_retry(request: Any, handler: Any) -> aiohttp.ClientResponse:
        request.headers["x-signed"] = "yes"
        response = await handler(request)
        if response.status == 503:
            response.release()
            response = await handler(request)
        return response

    async with (
        aiohttp.ClientSession(middlewares=(sign_and_retry,)) as session,
        session.post(URL, json=BODY) as response,
    ):
        body = await response.json()
    assert body["content"][0]["text"] == "second time"
    assert [c.status for c in scripted_model.log] == [503, 200]
    assert all(c.request is not None for c in scripted_model.log)
    assert scripted_model.calls[1].url == URL


async def test_a_line_longer_than_aiohttps_limit_is_refused_as_aiohttp_does(
    scripted_model: FakeModel,
) -> None:
    scripted_model.script(Reply.text("x" * 300))
    async with (
        aiohttp.ClientSession(read_bufsize=64) as session,
        session.post(URL, json=STREAM) as response,
    ):
        with pytest.raises(aiohttp.http_exceptions.LineTooLong):
            await _readline(response)


async def test_releasing_while_another_task_reads_is_a_quiet_hang_up(
    scripted_model: FakeModel,
) -> None:
    """The body's generator is busy in the reading task: closing it from the release
    must not fail a task of its own ("Task exception was never retrieved")."""
    scripted_model.script(Reply.text(TEXT, fault=Fault.stall(after_events=1)))
    errors: list[dict[str, Any]] = []
    asyncio.get_running_loop().set_exception_handler(lambda _, context: errors.append(context))
    async with aiohttp.ClientSession() as session:
        response = await session.post(URL, json=STREAM)
        reader = asyncio.ensure_future(response.read())
        assert await scripted_model.wait_blocked_async()
        response.release()
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
        await asyncio.sleep(0)
    gc.collect()
    await asyncio.sleep(0)
    assert scripted_model.log[0].outcome == "cancelled"
    assert errors == []
