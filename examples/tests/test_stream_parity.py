"""Scenario 11: the streaming and the non-streaming paths keep the same record.

The agent reads a reply either as a stream of events or as one JSON body
(``SessionConfig.stream``). Given the same response, both paths must leave the
same run log and byte-identical write-ahead-log entries: ``assert_stream_parity``
runs the turn once per way of delivering the response (one SSE event a chunk,
the whole body at once, one byte a chunk, 7-byte chunks, and JSON) and compares.
With a cassette, the JSON twin of the recorded stream is the stream folded.
"""

from __future__ import annotations

import json

import pytest
from agent import Agent, MessageDelta
from agent.testing import record
from agent.tools import WEATHER

from pytest_agentreplay import Reply, Usage, invariants
from pytest_agentreplay.runlog import RunLog

QUESTION = "What is the weather in Leeds?"
SCRIPT = [
    Reply.tool_call("weather", {"city": "Leeds"}, text="Let me check the weather in Leeds."),
    Reply.text("It is sunny in Leeds, 21 °C.", usage=Usage(input_tokens=40, output_tokens=9)),
]


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_streaming_and_json_paths_record_identical_logs_for_the_same_response(
    provider, backend
):
    """Checks: the same response read as a stream and as JSON leaves identical run
    logs and byte-identical WAL entries, and the streamed runs emitted text deltas
    (two runs that streamed nothing would agree and prove nothing)."""
    wal_entries: list[str] = []
    deltas: dict[bool, list[int]] = {True: [], False: []}

    async def run(stream: bool) -> RunLog:
        agent = Agent(backend.config(provider, stream=stream), tools=[WEATHER])
        log = record(agent)
        await agent.run_turn(QUESTION)
        deltas[stream].append(len(agent.events_of(MessageDelta)))
        # What the write-ahead log keeps of each call, byte for byte (its ids aside).
        records = agent.store.wal(agent.session_id)
        wal_entries.append(json.dumps([(r.entry, r.step_index, r.body) for r in records]))
        return log

    backend.script(*SCRIPT)
    await run(True)  # an ordinary streamed turn: the cassette records it, or replays it
    source = {"script": SCRIPT} if backend.fake else {"cassette": backend.cassette}
    runs = await invariants.assert_stream_parity_async(run, **source)

    assert [r.stream for r in runs] == [True] * 4 + [False]
    backend.assert_offline()
    assert len(set(wal_entries)) == 1, "the WAL differs between the streaming and JSON paths"
    [reference] = {json.dumps(r.log.normalized(transport=False, calls="none")) for r in runs}
    assert "It is sunny in Leeds" in reference
    assert deltas[True] and all(count >= 1 for count in deltas[True])
    assert deltas[False] == [0]  # the JSON path has no deltas: the parity is not trivial
