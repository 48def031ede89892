"""Scenario 13: resuming after a crash in the middle of a stream.

Before each model call the agent writes its intent (the request) to the
write-ahead log, and after it the completion. A process that dies while a reply
streams in leaves an intent with no completion, and the turn ``running``. On
restart, :meth:`Agent.resume` re-issues that call once, in a fresh step at the
same index, and records exactly one completion; the text the dead process had
shown is not saved.
"""

from __future__ import annotations

import pytest
from agent import Agent, MessageDelta, Store
from agent.testing import record

from pytest_agentreplay import Reply, invariants

QUESTION = "What is the weather in Leeds?"
ANSWER = "It is sunny in Leeds."


class Crash(BaseException):
    """The process dies: a ``BaseException``, so no ``except Exception`` handles it."""


def crash_on_first_delta(event: object) -> None:
    if isinstance(event, MessageDelta):
        raise Crash


@pytest.mark.anyio
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
async def test_a_call_that_died_mid_stream_is_reissued_once_on_resume(provider, backend, tmp_path):
    backend.script(Reply.text(ANSWER), Reply.text(ANSWER))  # the dying call's, the re-issue's
    database = str(tmp_path / "agent.db")
    agent = Agent(backend.config(provider), store=Store(database))
    log = record(agent, backend.runlog())
    agent.subscribe(crash_on_first_delta)

    with pytest.raises(Crash):
        await agent.run_turn(QUESTION)

    [dangling] = agent.store.dangling_intents(agent.session_id)
    [turn_id] = agent.store.pending_turns(agent.session_id)
    assert [m.role for m in agent.store.messages(agent.session_id)] == ["user"]

    restarted = Agent(backend.config(provider), store=Store(database), session_id=agent.session_id)
    record(restarted, log).resumed()
    [result] = await restarted.resume()

    assert (result.turn_id, result.outcome, result.text) == (turn_id, "completed", ANSWER)
    wal = [(r.entry, r.key) for r in restarted.store.wal(agent.session_id)]
    assert wal == [("intent", dangling.key), ("intent", dangling.key), ("completion", dangling.key)]
    assert restarted.store.dangling_intents(agent.session_id) == []
    assert restarted.store.pending_turns(agent.session_id) == []
    saved = [(m.role, m.text) for m in restarted.store.messages(agent.session_id)]
    assert saved == [("user", QUESTION), ("assistant", ANSWER)]
    dead, reissued = log.model_calls
    assert dead.request.raw == reissued.request.raw  # the same request, sent again
    invariants.assert_dangling_intent_reissued(log, key=dangling.key)
    invariants.assert_single_terminal_step(log)
    backend.assert_offline()
