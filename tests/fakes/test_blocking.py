"""Blocking, interrupting and cancelling: the shapes agent runtimes must survive."""

from __future__ import annotations

import asyncio
import threading

import anyio
import httpx2
import pytest

from pytest_agentreplay import FakeModel, Reply, sse
from tests import sdk
from tests.sdk_raises import raises_cut


@pytest.mark.anyio
@pytest.mark.parametrize("provider", sdk.PROVIDERS)
async def test_blocked_request_cancelled_by_the_consumer_logs_one_cancelled_call(
    provider: str, blocking_model: FakeModel
) -> None:
    blocking_model.check_unused = False
    blocking_model.script(Reply.text("never sent"))
    task = asyncio.create_task(sdk.acall(provider, stream=True))
    assert await blocking_model.wait_blocked_async(5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [entry] = blocking_model.log
    assert (entry.outcome, entry.events_sent, entry.status) == ("cancelled", 0, None)
    assert len(blocking_model.remaining) == 1, "a cancelled held call consumes no reply"


@pytest.mark.anyio
async def test_blocked_after_k_events_then_cancelled(scripted_model: FakeModel) -> None:
    scripted_model.block(after_events=4)
    scripted_model.script(Reply.text("one two three four five six seven"))
    seen = sdk.Seen()
    task = asyncio.create_task(sdk.acall("anthropic", stream=True, seen=seen))
    assert await scripted_model.wait_blocked_async(5)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [entry] = scripted_model.log
    assert (entry.outcome, entry.events_sent) == ("cancelled", 4)
    assert seen.deltas == ["one"]


@pytest.mark.anyio
async def test_release_lets_a_blocked_async_call_finish(blocking_model: FakeModel) -> None:
    blocking_model.script(Reply.text("released"))
    task = asyncio.create_task(sdk.acall("openai_responses", stream=True))
    assert await blocking_model.wait_blocked_async(5)
    assert not task.done()
    blocking_model.release()
    assert (await task).text == "released"
    assert blocking_model.log[0].outcome == "completed"


def test_release_lets_a_blocked_sync_call_finish(blocking_model: FakeModel) -> None:
    blocking_model.script(Reply.text("from a thread"))
    out: list[str] = []
    worker = threading.Thread(target=lambda: out.append(sdk.call("anthropic", stream=False).text))
    worker.start()
    assert blocking_model.wait_blocked(5)
    assert not blocking_model.log
    blocking_model.release()
    worker.join(5)
    assert out == ["from a thread"]


def test_wait_blocked_times_out_when_nothing_is_held(blocking_model: FakeModel) -> None:
    assert blocking_model.wait_blocked(0.05) is False


@pytest.mark.anyio
async def test_break_out_of_a_stream_is_logged_cancelled(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(" ".join(f"w{i}" for i in range(50))))
    client = sdk.client("anthropic", is_async=True)
    stream = await client.messages.create(
        model="m", max_tokens=9, stream=True, messages=[{"role": "user", "content": "hi"}]
    )
    async for event in stream:
        if event.type == "content_block_delta":
            break
    await stream.close()
    [entry] = scripted_model.log
    assert entry.outcome == "cancelled"
    assert 0 < entry.events_sent < 50


def test_sync_break_out_of_a_stream_is_logged_cancelled(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text(" ".join(f"w{i}" for i in range(50))))
    client = sdk.client("openai_chat")
    stream = client.chat.completions.create(
        model="m", stream=True, messages=[{"role": "user", "content": "hi"}]
    )
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break
    stream.close()
    assert [c.outcome for c in scripted_model.log] == ["cancelled"]


def test_openai_stream_read_to_done_is_completed_not_cancelled(scripted_model: FakeModel) -> None:
    # The OpenAI SDK stops at [DONE] and closes without reading the end of the body.
    scripted_model.script(Reply.text("all of it"))
    assert sdk.call("openai_chat", stream=True).text == "all of it"
    assert scripted_model.log[0].outcome == "completed"


@pytest.mark.parametrize("provider", sdk.PROVIDERS)
def test_interrupted_first_stream_then_clean_retry(
    provider: str, interrupting_model: FakeModel
) -> None:
    text = "Recovered answer with several words in it"
    interrupting_model.script(Reply.text(text))
    first = sdk.Seen()
    with raises_cut(provider):
        sdk.call(provider, stream=True, seen=first)
    assert first.deltas and text.startswith("".join(first.deltas))
    assert sdk.call(provider, stream=True).text == text
    assert [c.outcome for c in interrupting_model.log] == ["cut", "completed"]
    a, b = interrupting_model.calls
    assert a.content == b.content


def test_interrupt_after_a_set_number_of_events_several_times(
    interrupting_model: FakeModel,
) -> None:
    interrupting_model.interrupt(after_events=2, times=1)  # two cuts in all
    interrupting_model.script(Reply.text("x y z"))
    for _ in range(2):
        with raises_cut("anthropic"):
            sdk.call("anthropic", stream=True)
    assert sdk.call("anthropic", stream=True).text == "x y z"
    assert [(c.outcome, c.events_sent) for c in interrupting_model.log][1:] == [
        ("cut", 2),
        ("completed", interrupting_model.log[2].events_sent),
    ]


def test_a_reply_only_ever_cut_counts_as_requested_but_later_ones_do_not() -> None:
    """Retry exhaustion: every try of the first reply is cut, so it is never consumed,
    yet it was requested and partly shown; the reply after it really was not."""
    fake = FakeModel(Reply.text("a b c d"), Reply.text("never asked for")).interrupt(times=3)
    with fake:
        for _ in range(3):
            with raises_cut("anthropic"):
                sdk.call("anthropic", stream=True)
        [problem] = fake.problems
        fake.check_unused = False  # read above; the block's end would raise it
    assert [c.outcome for c in fake.log] == ["cut", "cut", "cut"]
    assert len(fake.remaining) == 2
    assert "1 scripted reply never requested" in problem
    assert "never asked for" in problem and "a b c d" not in problem


def test_calls_from_worker_threads_are_served(scripted_model: FakeModel) -> None:
    from concurrent.futures import ThreadPoolExecutor

    scripted_model.script(*[Reply.text(f"r{i}") for i in range(6)])
    with ThreadPoolExecutor(3) as pool:
        texts = list(pool.map(lambda _: sdk.call("openai_chat", stream=True).text, range(6)))
    assert sorted(texts) == [f"r{i}" for i in range(6)]
    assert len(scripted_model.log) == 6


@pytest.mark.anyio
async def test_calls_from_to_thread_and_anyio_threads_are_served(scripted_model: FakeModel) -> None:
    scripted_model.script(Reply.text("asyncio thread"), Reply.text("anyio thread"))
    one = await asyncio.to_thread(lambda: sdk.call("anthropic", stream=False).text)
    two = await anyio.to_thread.run_sync(lambda: sdk.call("anthropic", stream=True).text)
    assert (one, two) == ("asyncio thread", "anyio thread")


def test_interrupt_also_cuts_replies_from_respond() -> None:
    with FakeModel(respond=lambda request: Reply.text("a b c d e f")).interrupt() as fake:
        with raises_cut("anthropic"):
            sdk.call("anthropic", stream=True)
        assert sdk.call("anthropic", stream=True).text == "a b c d e f"
    assert [c.outcome for c in fake.log] == ["cut", "completed"]


def test_detach_releases_a_call_left_held() -> None:
    fake = FakeModel(Reply.text("late"))
    out: list[str] = []
    with fake:
        fake.block()
        worker = threading.Thread(
            target=lambda: out.append(sdk.call("openai_chat", stream=False).text)
        )
        worker.start()
        assert fake.wait_blocked(5)
        fake.detach()
        worker.join(5)
        assert not worker.is_alive(), "teardown must not leave a thread held forever"
    assert out == ["late"]


def test_configure_changes_a_fixtures_fake(scripted_model: FakeModel) -> None:
    scripted_model.configure(chunking="whole", respond=lambda r: "from respond", seed="s9")
    with (
        httpx2.Client() as client,
        client.stream(
            "POST",
            "https://api.anthropic.com/v1/messages",
            json={
                "model": "m",
                "max_tokens": 5,
                "stream": True,
                "messages": [{"role": "user", "content": "x"}],
            },
        ) as resp,
    ):
        chunks = list(resp.iter_bytes())
    assert len(chunks) == 1, "'whole' sends the body as one chunk"
    deltas = [
        e.json()["delta"]["text"]
        for e in sse.decode(chunks[0]).events
        if e.event == "content_block_delta"
    ]
    assert "".join(deltas) == "from respond"
    message_id = sse.decode(chunks[0]).events[0].json()["message"]["id"]
    with FakeModel("x", seed="s9") as twin:
        assert (
            sdk.client("anthropic")
            .messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
            .id
            == message_id
        )
    assert twin.log and scripted_model.log[0].events_sent > 3
