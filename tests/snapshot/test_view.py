"""``snapshot_view``: what a snapshot stores for run logs, fakes, cassettes and state."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import anthropic
import pytest

from pytest_agentreplay import FakeModel, Reply
from pytest_agentreplay.cassettes.cassette import Cassette
from pytest_agentreplay.cassettes.io import dumps
from pytest_agentreplay.runlog import RunLog
from pytest_agentreplay.snapshot import VOLATILE_HEADERS, snapshot_view
from tests.strategies import _cassettes

REQUEST = {
    "model": "claude-sonnet-4-6",
    "max_tokens": 64,
    "stream": True,
    "messages": [{"role": "user", "content": "Weather?"}],
}


def weather_turn(seed: str, clock: float) -> RunLog:
    """An agent turn with random session / turn / step ids, a clock and seeded
    provider ids: what two runs of one scenario differ in."""
    with FakeModel(
        Reply.tool_call("weather", {"city": "Leeds"}), Reply.text("Sunny in Leeds."), seed=seed
    ) as fake:
        log = RunLog.from_fake(fake)
        client = anthropic.Anthropic(api_key="test", max_retries=0)
        session, turn = uuid.uuid4(), uuid.uuid4()
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather?"}]
        log.message("user", "Weather?", turn_id=turn)
        for index in range(2):
            step = uuid.uuid4()
            log.step_started(step, step_index=index, turn_id=turn, session_id=session, at=clock)
            reply = client.messages.create(model="m", max_tokens=64, messages=messages)
            text = "".join(b.text for b in reply.content if b.type == "text")
            log.step_completed(step, text=text, at=clock + 0.5)
            for block in reply.content:
                if block.type == "tool_use":
                    log.tool_call(block.id, block.name, block.input, step_id=step)
                    log.tool_result(block.id, "sunny", step_id=step)
                    messages += [
                        {"role": "assistant", "content": [block.model_dump()]},
                        {
                            "role": "user",
                            "content": [
                                {"type": "tool_result", "tool_use_id": block.id, "content": "sunny"}
                            ],
                        },
                    ]
        log.message("assistant", "Sunny in Leeds.", turn_id=turn, step_id=step, at=clock + 1)
    return log


def test_two_runs_with_different_ids_and_clocks_give_the_same_view() -> None:
    first = weather_turn("one", clock=1_700_000_000.0)
    second = weather_turn("two", clock=time.time())
    assert first != second  # really different runs...
    assert snapshot_view(first) == snapshot_view(second)  # ...the same snapshot


def test_a_run_log_is_shown_brief_by_default() -> None:
    view = snapshot_view(weather_turn("one", clock=0.0))
    assert view["model_calls"][1]["messages"] == [
        "user: Weather?",
        "assistant: [tool_call weather <call-1>]",
        "user: [tool_result <call-1>: sunny]",
    ]
    assert view["entries"][1] == {
        "event": "step_started",
        "step_id": "<step-1>",
        "step_index": 0,
        "turn_id": "<turn-1>",
        "session_id": "<session-1>",
        "at": "<time>",
    }
    full = snapshot_view(weather_turn("one", clock=0.0), calls="full")
    assert full["model_calls"][0]["request"]["raw"]["max_tokens"] == 64


def test_a_fake_model_is_shown_as_the_run_log_of_its_calls() -> None:
    with FakeModel(Reply.text("Hi")) as fake:
        anthropic.Anthropic(api_key="t", max_retries=0).messages.create(
            model="m", max_tokens=9, messages=[{"role": "user", "content": "Hello"}]
        )
    assert snapshot_view(fake) == {
        "model_calls": [
            {
                "index": 0,
                "provider": "anthropic",
                "streaming": False,
                "status": 200,
                "outcome": "completed",
                "events_sent": 0,
                "model": "m",
                "messages": ["user: Hello"],
                "reply": "assistant: Hi",
            }
        ],
        "entries": [],
    }


def _cassette(seed: str) -> Cassette:
    cassette = _cassettes.anthropic_stream(REQUEST, Reply.text("Sunny."))
    response = cassette.interactions[0].response
    response.headers.update({"request-id": f"req_{seed}", "date": seed})
    cassette.interactions[0].request.headers.update({"user-agent": f"Anthropic/Python {seed}"})
    return cassette


def test_a_cassette_is_shown_with_parsed_events_and_volatile_fields_masked(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(dumps(_cassette("a")))
    view = snapshot_view(path)
    assert view == snapshot_view(_cassette("b"))  # ids, dates and clients differ
    assert view == snapshot_view(_cassette("c").interactions)
    assert view == snapshot_view(_cassette("c").interactions[0])
    [interaction] = view
    assert interaction["request"]["headers"] == {"user-agent": "<client>"}
    assert interaction["response"]["headers"]["request-id"] == "<request-id>"
    assert interaction["response"]["headers"]["date"] == "<time>"
    first = interaction["response"]["events"][0]
    assert first["t"] == "<duration>"
    assert first["data"]["message"]["id"] == "<id-1>"  # parsed, then masked


def test_volatile_headers_keep_the_retry_count() -> None:
    assert "x-stainless-retry-count" not in VOLATILE_HEADERS
    assert VOLATILE_HEADERS["x-stainless-os"] == "<client>"


NORMALIZED = [
    (
        {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "created_at": "2026-11-29T10:00:00Z"},
        {"id": "<id-1>", "created_at": "<time>"},
    ),
    (
        [{"session_id": "s1", "latency_ms": 12.5}],
        [{"session_id": "s1", "latency_ms": "<duration>"}],
    ),
    (
        {"text": "a one-word answer", "retry_after": "5"},
        {"text": "a one-word answer", "retry_after": "5"},
    ),
]


@pytest.mark.parametrize(("data", "expected"), NORMALIZED)
def test_any_other_state_is_normalized(data: Any, expected: Any) -> None:
    assert snapshot_view(data) == expected


def test_a_non_json_event_data_is_kept_as_text(tmp_path: Path) -> None:
    cassette = _cassettes.anthropic_stream(REQUEST, Reply.text("x"))
    cassette.interactions[0].response.events[0].data = "{not json"  # type: ignore[index]
    assert snapshot_view(cassette)[0]["response"]["events"][0]["data"] == "{not json"


def test_syrupy_is_imported_only_when_the_extension_is_used() -> None:
    probe = (
        "import sys\n"
        "import pytest_agentreplay.snapshot as s\n"
        "print('syrupy' in sys.modules)\n"
        "s.AgentReplaySnapshotExtension\n"
        "print('syrupy' in sys.modules)\n"
        "from pytest_agentreplay import snapshot\n"
        "print(snapshot is s)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True", "True"]


def test_an_unknown_attribute_is_an_attribute_error() -> None:
    import pytest_agentreplay.snapshot as module

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        module.Nope  # noqa: B018
