"""An application's own ids (issue 20, item 6): ``uuid4().hex[:8]`` turn and step ids
broke parity and snapshots. ``IdMask`` names id fields and patterns; each value is
masked alike wherever it appears, so "same turn" relations survive masking."""

from __future__ import annotations

import uuid
from typing import Any

import anthropic
import pytest

from pytest_agentreplay import Reply, invariants
from pytest_agentreplay.invariants import InvariantViolation
from pytest_agentreplay.runlog import IdMask, normalize
from pytest_agentreplay.snapshot import snapshot_view


def short_id() -> str:
    return uuid.uuid4().hex[:8]


def agent(stream: bool, *, bug: bool = False) -> list[dict[str, Any]]:
    """A runtime that persists rows keyed by its own short random ids. With ``bug``,
    the streamed answer is saved under a turn id of its own (a broken relation)."""
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    turn = short_id()
    rows = [{"turn_id": turn, "step_id": short_id(), "role": "user", "text": "hi"}]
    kwargs: dict[str, Any] = {
        "model": "m",
        "max_tokens": 99,
        "messages": [{"role": "user", "content": "hi"}],
    }
    if stream:
        with client.messages.stream(**kwargs) as s:
            text = s.get_final_message().content[0].text  # type: ignore[union-attr]
    else:
        text = client.messages.create(**kwargs).content[0].text  # type: ignore[union-attr]
    saved_turn = short_id() if bug and stream else turn
    step = short_id()
    rows.append({"turn_id": saved_turn, "step_id": step, "role": "assistant", "text": text})
    rows.append({"turn_id": turn, "note": f"step {step} saved"})
    return rows


def test_random_app_ids_break_parity_without_an_id_mask() -> None:
    with pytest.raises(InvariantViolation, match="persisted different state"):
        invariants.assert_stream_parity(agent, script=[Reply.text("Hello.")])


def test_an_id_mask_makes_equal_runs_equal() -> None:
    ids = IdMask(fields=["turn_id", "step_id"], patterns=[r"\b[0-9a-f]{8}\b"])
    runs = invariants.assert_stream_parity(agent, script=[Reply.text("Hello.")], ids=ids)
    state = runs[0].normalized_state
    assert [row["turn_id"] for row in state] == ["<turn_id-1>"] * 3
    assert state[1]["step_id"] == "<step_id-2>"
    assert state[2]["note"] == "step <step_id-2> saved"  # the same value, the same mask


def test_an_id_mask_keeps_a_broken_relation_visible() -> None:
    ids = IdMask(fields=["turn_id", "step_id"], patterns=[r"\b[0-9a-f]{8}\b"])
    with pytest.raises(InvariantViolation, match="turn_id") as failure:
        invariants.assert_stream_parity(
            lambda stream: agent(stream, bug=True), script=[Reply.text("Hello.")], ids=ids
        )
    assert "<turn_id-" in str(failure.value)


def test_patterns_mask_ids_inside_text_consistently() -> None:
    ids = IdMask(patterns=[r"run-\d{4}"])
    assert normalize(["run-1234 started", {"run": "run-1234"}, "run-5678"], ids=ids) == [
        "<app-id-1> started",
        {"run": "<app-id-1>"},
        "<app-id-2>",
    ]


def test_fields_are_learned_before_the_values_appear_elsewhere() -> None:
    data = {"log": ["turn ab12cd34 began"], "rows": [{"TurnId": "ab12cd34"}]}
    view = snapshot_view(data, ids=IdMask(fields=["turnid"]))
    assert view == {"log": ["turn ab12cd34 began"], "rows": [{"TurnId": "<turnid-1>"}]}
    # a field value appearing on its own elsewhere is masked alike
    assert normalize([{"turnid": "ab12cd34"}, "ab12cd34"], ids=IdMask(fields=["turnid"])) == [
        {"turnid": "<turnid-1>"},
        "<turnid-1>",
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"patterns": ["("]}, "is not a regex"),
        ({"patterns": [r"\d*"]}, "matches the empty string"),
        ({"fields": [3]}, "key names"),
    ],
)
def test_bad_id_masks_are_refused_with_a_reason(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, TypeError), match=message):
        IdMask(**kwargs)


def test_the_snapshot_extension_takes_an_id_mask() -> None:
    from pytest_agentreplay.snapshot import AgentReplaySnapshotExtension

    class Masked(AgentReplaySnapshotExtension):
        ids = IdMask(fields=["turn_id"])

    one = Masked().serialize([{"turn_id": short_id()}])
    two = Masked().serialize([{"turn_id": short_id()}])
    assert one == two and "<turn_id-1>" in str(one)
