"""A model's refusal comes across: OpenLLMetry's OpenAI instrumentation keeps OpenAI's
``refusal`` as a part of its own, which replays as the refusal it was."""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay import Reply
from pytest_agentreplay.traces import import_trace

from . import agents

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)

REFUSAL = "I can't help with that."

REPLAY = """
import json, pytest
from tests.traces.test_refusal import refused


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    with open({out!r}, "w") as file:
        json.dump(refused(), file)
"""


def refused() -> list[object]:
    """The message a Chat Completions call comes back with: content, refusal, finish."""
    import openai

    client = openai.OpenAI(api_key="test-key", max_retries=0)
    completion = client.chat.completions.create(
        model="gpt-test-1", messages=[{"role": "user", "content": agents.QUESTION}]
    )
    client.close()
    choice = completion.choices[0]
    return [choice.message.content, choice.message.refusal, choice.finish_reason]


def test_a_refusal_replays_as_a_refusal(scripted_model, traced, pytester, tmp_path) -> None:
    scripted_model.script(Reply.text(REFUSAL, stop="refusal"))
    with traced("openai_chat") as trace_file:
        original = refused()
    cassette = tmp_path / "refused.yaml"

    import_trace(trace_file, cassette)

    out = pytester.path / "replayed.json"
    pytester.makepyfile(test_refused=REPLAY.format(cassette=str(cassette), out=str(out)))
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
    assert original[1] == REFUSAL
    assert json.loads(out.read_text()) == original
