"""Thinking comes across: what the instrumentations record of a model's reasoning
(the GenAI conventions' ``reasoning`` part) replays as the provider sends it.

Each provider's real instrumentation traces a thinking model's answer, once as JSON and
once streamed; the import renders the reasoning as Anthropic ``thinking`` blocks, OpenAI
Responses ``reasoning`` items (their summary) and Gemini ``thought`` parts, and the
same SDK call replayed from the cassette gives back the same reasoning and answer.
OpenAI Chat Completions has no place for reasoning on the wire: it is left out, and
the cassette says so.
"""

from __future__ import annotations

import json

import pytest

from pytest_agentreplay import Reply, Text, Thinking, Usage
from pytest_agentreplay.traces import import_trace

from . import agents

pytest_plugins = ["pytester"]

pytestmark = pytest.mark.filterwarnings(
    "ignore:Support for class-based `config`:DeprecationWarning"
)

THOUGHT = "The user asks about Leeds. The forecast says sun."
ANSWER = "It is sunny in Leeds today."

REPLAY = """
import json, pytest
from tests.traces import agents


@pytest.mark.agentreplay(cassette={cassette!r})
def test_replay(agentreplay):
    said = [agents.ask({provider!r}, stream=True), agents.ask({provider!r}, stream=False)]
    with open({out!r}, "w") as file:
        json.dump(said, file)
"""


def _reply() -> Reply:
    return Reply(
        parts=[Thinking(text=THOUGHT), Text(text=ANSWER)],
        usage=Usage(input_tokens=12, output_tokens=30, reasoning_tokens=20),
    )


@pytest.mark.parametrize("provider", ["anthropic", "openai_responses", "gemini"])
def test_thinking_in_a_trace_replays_as_the_provider_sends_it(
    provider, scripted_model, traced, pytester, tmp_path
) -> None:
    scripted_model.script(_reply(), _reply())
    with traced(provider) as trace_file:
        # Streamed first: traced the other way round after this suite's earlier traced
        # runs, OpenLLMetry's non-streamed Responses span went missing from the trace
        # (not understood yet; not seen in a process of its own).
        original = [agents.ask(provider, stream=True), agents.ask(provider, stream=False)]
    cassette = tmp_path / "thinking.yaml"

    result = import_trace(trace_file, cassette)

    out = pytester.path / "replayed.json"
    pytester.makepyfile(
        **{
            f"test_thinking_{provider}": REPLAY.format(
                cassette=str(cassette), provider=provider, out=str(out)
            )
        }
    )
    pytester.runpytest("-p", "no:cacheprovider", "-q").assert_outcomes(passed=1)
    replayed = json.loads(out.read_text())
    assert replayed == original
    assert [r["thinking"] for r in replayed] == [THOUGHT, THOUGHT]
    assert [r["text"] for r in replayed] == [ANSWER, ANSWER]
    origins = [i.origin for i in result.cassette.interactions]
    if provider == "anthropic":  # the trace keeps no signature: one is made up
        assert all("thinking signatures" in o["filled"] for o in origins)
    if provider == "openai_responses":  # OpenLLMetry writes the summary list as JSON text
        assert all(any("summary list(s) read" in c for c in o["corrected"]) for o in origins)


def test_reasoning_on_openai_chat_is_left_out_and_said(tmp_path) -> None:
    """OpenLLMetry's OpenAI instrumentation records a compatible server's
    ``reasoning_content`` as a reasoning part; OpenAI's own Chat Completions has no field
    for it. The span is built per the conventions (no fake sends reasoning on Chat)."""
    output = [
        {
            "role": "assistant",
            "parts": [
                {"type": "reasoning", "content": THOUGHT},
                {"type": "text", "content": ANSWER},
            ],
            "finish_reason": "stop",
        }
    ]
    span = {
        "name": "openai.chat",
        "context": {"trace_id": "0x" + "ab" * 16, "span_id": "0x" + "cd" * 8},
        "attributes": {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-test-1",
            "gen_ai.is_streaming": False,
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": agents.QUESTION}]}]
            ),
            "gen_ai.output.messages": json.dumps(output),
        },
    }
    trace = tmp_path / "chat.json"
    trace.write_text(json.dumps([span]))

    (interaction,) = import_trace(trace).cassette.interactions

    message = interaction.response.json_body["choices"][0]["message"]
    assert message["content"] == ANSWER
    assert THOUGHT not in json.dumps(interaction.response.json_body)
    assert interaction.origin["corrected"] == [
        f"reasoning ({len(THOUGHT)} characters) left out: Chat Completions sends none"
    ]
